/**
 * HEIC (and HEIF) decoding with libheif (libheif-js: libheif and libde265 compiled to WASM), a tile at
 * a time. iPhones store a photo as a grid of 512 x 512 HEVC tiles; each tile is decoded to RGBA,
 * averaged into boxes (reduce.ts) and released before the next, so memory is the file, one tile and
 * the reduced image, whatever the picture's size. A HEIF that is one coded image (not a grid) is
 * decoded whole, up to HEIF_MAX_TILE_PIXELS.
 *
 * The package's JavaScript API decodes whole images only, so this calls libheif's C API, which the
 * package exports, directly: heif_context_read_from_memory_without_copy, heif_image_handle_get_image_tiling
 * and heif_image_handle_decode_image_tile. Every call that returns a `struct heif_error` takes a
 * pointer to it as its first argument (the WASM C ABI for structs returned by value).
 *
 * Each image gets its own instance: WASM memory only grows while an instance lives, and dropping the
 * instance is the only way to give it back.
 */
// A relative path ending in .wasm matches wrangler's CompiledWasm rule and Vite's (see photon/codec.ts).
import { Slicer } from "../../../pkg/slicer";
import * as libheifWasmModule from "../../../../node_modules/libheif-js/libheif-wasm/libheif.wasm";
import libheifFactory from "libheif-js/libheif-wasm/libheif.js";
import { CorruptImageError, ImageTooLargeError } from "../errors";
import { HEIF_MAX_TILE_PIXELS, HEIF_MAX_WASM_BYTES } from "../limits";
import { BoxReducer } from "../reduce";
import type { Pixels } from "../resample";
import { capMemory, type MemoryCeiling } from "../wasm-memory";

const libheifWasm = (libheifWasmModule as unknown as { default: WebAssembly.Module }).default;

/** The part of the Emscripten module used here (libheif's C functions and the heap views). */
interface Libheif {
  HEAPU8: Uint8Array;
  HEAP32: Int32Array;
  HEAPU32: Uint32Array;
  _malloc(size: number): number;
  _free(ptr: number): void;
  _heif_context_alloc(): number;
  _heif_context_free(ctx: number): void;
  _heif_context_read_from_memory_without_copy(err: number, ctx: number, data: number, size: number, options: number): void;
  _heif_context_get_primary_image_handle(err: number, ctx: number, handleOut: number): void;
  _heif_image_handle_release(handle: number): void;
  _heif_image_handle_get_width(handle: number): number;
  _heif_image_handle_get_height(handle: number): number;
  _heif_decoding_options_alloc(): number;
  _heif_image_handle_get_image_tiling(err: number, handle: number, processTransformations: number, tilingOut: number): void;
  _heif_image_handle_decode_image_tile(
    err: number,
    handle: number,
    imageOut: number,
    colorspace: number,
    chroma: number,
    options: number,
    tileX: number,
    tileY: number,
  ): void;
  _heif_image_handle_get_color_profile_type(handle: number): number;
  _heif_image_handle_get_raw_color_profile_size(handle: number): number;
  _heif_image_handle_get_raw_color_profile(err: number, handle: number, out: number): void;
  _heif_image_get_plane_readonly(image: number, channel: number, strideOut: number): number;
  _heif_image_get_width(image: number, channel: number): number;
  _heif_image_get_height(image: number, channel: number): number;
  _heif_image_release(image: number): void;
}

type Factory = (options: {
  instantiateWasm(
    imports: WebAssembly.Imports,
    ready: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void,
  ): WebAssembly.Exports;
}) => Libheif;

const COLORSPACE_RGB = 1;
const CHROMA_INTERLEAVED_RGBA = 11;
const CHANNEL_INTERLEAVED = 10;
/** heif_color_profile_type: an embedded ICC profile ('prof' or restricted 'rICC'). */
const ICC_PROFILE_TYPES = new Set([0x70726f66, 0x72494343]);

function instantiate(): { heif: Libheif; ceiling: MemoryCeiling } {
  let ceiling: MemoryCeiling | undefined;
  const heif = (libheifFactory as unknown as Factory)({
    instantiateWasm(imports, ready) {
      const instance = new WebAssembly.Instance(libheifWasm, imports);
      ceiling = capMemory(instance.exports, HEIF_MAX_WASM_BYTES);
      ready(instance, libheifWasm);
      return instance.exports;
    },
  });
  return { heif, ceiling: ceiling! };
}

export interface HeifDecoded {
  /** The picture as stored (before its irot rotation), averaged into boxes of `factor` pixels. */
  pixels: Pixels;
  /** The size as stored. */
  width: number;
  height: number;
  /** The embedded ICC profile, or null. */
  iccProfile: Uint8Array | null;
}

/**
 * Decodes the primary image of a HEIF file, reduced by `factor(width, height)` (called once the
 * size is known). Throws CorruptImageError for a file libheif cannot read or decode, and
 * ImageTooLargeError for a single (untiled) image above HEIF_MAX_TILE_PIXELS.
 */
export async function decodeHeifReduced(
  bytes: Uint8Array,
  factor: (width: number, height: number) => number,
  slicer: Slicer = new Slicer(),
): Promise<HeifDecoded> {
  const { heif, ceiling } = instantiate();
  try {
    return await decodeWith(heif, bytes, factor, slicer);
  } catch (error) {
    if (ceiling.exceeded) {
      throw new ImageTooLargeError(
        `decoding the HEIF needs more than the ${HEIF_MAX_WASM_BYTES / 2 ** 20} MiB of memory it may have here (its ` +
          `coded picture is larger than its header says, or its file is very large)`,
      );
    }
    if (error instanceof CorruptImageError || error instanceof ImageTooLargeError) throw error;
    // libheif and libde265 end a failure they do not handle with abort(): a RuntimeError here.
    throw new CorruptImageError(`the HEIF file could not be decoded (${error instanceof Error ? error.message : String(error)})`);
  }
}

/** Tile by tile, the thread given back between tiles (../slice.ts). */
async function decodeWith(
  heif: Libheif,
  bytes: Uint8Array,
  factor: (width: number, height: number) => number,
  slicer: Slicer,
): Promise<HeifDecoded> {
  const scratch = heif._malloc(64); // heif_error (12 bytes), then out-pointers
  const err = scratch;
  const out = scratch + 16;
  const strideOut = scratch + 20;
  const check = (what: string) => {
    const code = heif.HEAP32[err >> 2]!;
    if (code === 0) return;
    const message = cString(heif, heif.HEAPU32[(err >> 2) + 2]!);
    throw new CorruptImageError(`the HEIF file could not be decoded (${what}: ${message || `error ${code}`})`);
  };
  const data = heif._malloc(bytes.length);
  if (data === 0) throw new ImageTooLargeError(`the ${bytes.length} bytes of the HEIF file do not fit in the memory its decoder may have`);
  heif.HEAPU8.set(bytes, data);
  const ctx = heif._heif_context_alloc();
  heif._heif_context_read_from_memory_without_copy(err, ctx, data, bytes.length, 0);
  check("reading the file");
  heif._heif_context_get_primary_image_handle(err, ctx, out);
  check("finding the primary image");
  const handle = heif.HEAP32[out >> 2]!;
  const tiling = heif._malloc(128);
  heif.HEAPU8.fill(0, tiling, tiling + 128);
  // The tiles as stored: the rotation (irot) is applied by the pipeline to the reduced picture, as
  // an EXIF orientation is (libheif's own rotation of single tiles places them inconsistently).
  heif._heif_image_handle_get_image_tiling(err, handle, 0, tiling);
  check("reading the tiling");
  // struct heif_image_tiling: version, num_columns, num_rows, tile_width, tile_height, image_width,
  // image_height, top_offset, left_offset (all 32-bit).
  const [, columns, rows, tileWidth, tileHeight, width, height] = heif.HEAPU32.subarray(tiling >> 2, (tiling >> 2) + 9);
  if (tileWidth! * tileHeight! > HEIF_MAX_TILE_PIXELS) {
    throw new ImageTooLargeError(
      `the HEIF image is one coded picture of ${tileWidth}x${tileHeight}; untiled HEIF is decoded up to ` +
        `${HEIF_MAX_TILE_PIXELS} pixels (iPhone photos are tiled and have no such limit)`,
    );
  }
  const options = heif._heif_decoding_options_alloc();
  heif.HEAPU8[options + 1] = 1; // struct heif_decoding_options: version (uint8), ignore_transformations (uint8), ...
  const reducer = new BoxReducer(width!, height!, factor(width!, height!));
  for (let ty = 0; ty < rows!; ty++) {
    for (let tx = 0; tx < columns!; tx++) {
      heif._heif_image_handle_decode_image_tile(err, handle, out, COLORSPACE_RGB, CHROMA_INTERLEAVED_RGBA, options, tx, ty);
      check(`tile ${tx},${ty}`);
      const image = heif.HEAP32[out >> 2]!;
      const plane = heif._heif_image_get_plane_readonly(image, CHANNEL_INTERLEAVED, strideOut);
      const stride = heif.HEAP32[strideOut >> 2]!;
      const w = heif._heif_image_get_width(image, CHANNEL_INTERLEAVED);
      const h = heif._heif_image_get_height(image, CHANNEL_INTERLEAVED);
      const heap = heif.HEAPU8;
      // Edge tiles reach past the picture: the reducer ignores what lies outside it. A tile as wide as
      // the picture (a single coded picture) completes each row as it is added, freeing its box row's sums.
      for (let y = 0; y < h; y++) {
        reducer.addRow(ty * tileHeight! + y, tx * tileWidth!, heap, plane + y * stride, w, 4);
        if (columns === 1) reducer.completeRowsBefore(ty * tileHeight! + y + 1);
      }
      heif._heif_image_release(image);
      if (slicer.spend(w * h)) await slicer.pause();
    }
    reducer.completeRowsBefore((ty + 1) * tileHeight!);
  }
  let iccProfile: Uint8Array | null = null;
  if (ICC_PROFILE_TYPES.has(heif._heif_image_handle_get_color_profile_type(handle))) {
    const size = heif._heif_image_handle_get_raw_color_profile_size(handle);
    const profile = heif._malloc(size);
    heif._heif_image_handle_get_raw_color_profile(err, handle, profile);
    if (heif.HEAP32[err >> 2] === 0) iccProfile = heif.HEAPU8.slice(profile, profile + size);
  }
  // The instance (and all its memory) is dropped with `heif`; nothing needs freeing one by one.
  return { pixels: reducer.result(), width: width!, height: height!, iccProfile };
}

function cString(heif: Libheif, ptr: number): string {
  if (ptr === 0) return "";
  const end = heif.HEAPU8.indexOf(0, ptr);
  return new TextDecoder().decode(heif.HEAPU8.subarray(ptr, end < 0 ? ptr : end));
}
