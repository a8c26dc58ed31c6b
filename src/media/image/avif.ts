/**
 * AVIF with @jsquash/avif (libavif and dav1d compiled to WASM, maintained for Workers). Its decoder
 * returns a whole coded picture as RGBA: the picture's YUV planes and RGBA live in WASM memory, then
 * once more in JavaScript (measured: about 40 MiB for the instance and 25 MiB a megapixel). So one
 * coded picture may have at most AVIF_MAX_PIXELS.
 *
 * A grid AVIF (the primary item is a `grid` of `av01` tiles, as cameras and libavif's `--grid` write
 * large pictures) is decoded a tile at a time: each tile, with its alpha tile when the picture has an
 * alpha grid, is wrapped in a one-item AVIF of its own (its properties copied, the grid's colour
 * description added where the tile has none) and handed to the same decoder, and its rows go into
 * the box reducer. Memory is then one tile's, whatever the picture's size.
 *
 * Each image gets its own instance, dropped afterwards (WASM memory only grows). Larger pictures that
 * are not grids keep their original and say why; the Images binding (IMAGE_RESIZER = "images") makes
 * their versions where an operator enables it. No maintained AV1 decoder on npm decodes part of a
 * coded picture (docs/decisions.md, "Image decoding").
 */
// A relative path ending in .wasm matches wrangler's CompiledWasm rule and Vite's (see photon/codec.ts).
import { Slicer } from "../../pkg/slicer";
import * as avifWasmModule from "../../../node_modules/@jsquash/avif/codec/dec/avif_dec.wasm";
import avifFactory from "@jsquash/avif/codec/dec/avif_dec.js";
import { CorruptImageError, ImageTooLargeError } from "./errors";
import { AVIF_MAX_PIXELS, AVIF_MAX_WASM_BYTES } from "./limits";
import { BoxReducer } from "./reduce";
import type { Pixels } from "./resample";
import { capMemory, type MemoryCeiling } from "./wasm-memory";
import { concatBytes as concat, heifFile, type HeifFile, type HeifItem, type HeifProperty } from "./segments";

const avifWasm = (avifWasmModule as unknown as { default: WebAssembly.Module }).default;

interface AvifModule {
  decode(data: BufferSource, bitDepth: 8): { data: Uint8ClampedArray; width: number; height: number } | null;
}

type Factory = (options: {
  noInitialRun: boolean;
  instantiateWasm(imports: WebAssembly.Imports, ready: (instance: WebAssembly.Instance) => void): WebAssembly.Exports;
}) => Promise<AvifModule>;

const ALPHA_URNS = new Set(["urn:mpeg:mpegB:cicp:systems:auxiliary:alpha", "urn:mpeg:hevc:2015:auxid:1"]);

/** Decodes an AVIF (8 bits a channel out), averaging `factor` x `factor` boxes into RGBA. */
export async function decodeAvifReduced(
  bytes: Uint8Array,
  width: number,
  height: number,
  factor: number,
  slicer: Slicer = new Slicer(),
): Promise<Pixels> {
  const file = heifFile(bytes);
  const primary = file.primary === null ? undefined : file.items.get(file.primary);
  const grid = primary?.type === "grid" ? readGrid(file, primary) : null;
  // The limits were checked against the header's size: a grid must describe that picture, not another.
  if (grid && (grid.width !== width || grid.height !== height)) {
    throw new CorruptImageError(`the AVIF's grid describes a ${grid.width}x${grid.height} picture, its header ${width}x${height}`);
  }
  if (!grid && width * height > AVIF_MAX_PIXELS) {
    throw new ImageTooLargeError(
      `${width}x${height} is more than the ${AVIF_MAX_PIXELS} pixels an AVIF may have to be resized: an AVIF that is ` +
        `not a grid of tiles is decoded whole (about 25 MiB a megapixel)`,
    );
  }
  const { avif, ceiling } = await instantiate();
  try {
    return await decodeWith(avif, bytes, factor, grid, slicer);
  } catch (error) {
    if (ceiling.exceeded) {
      throw new ImageTooLargeError(
        `decoding the AVIF needs more than the ${AVIF_MAX_WASM_BYTES / 2 ** 20} MiB of memory it may have here (its ` +
          `coded picture is larger than its header says, or its file is very large)`,
      );
    }
    throw error;
  }
}

/** A grid is decoded a tile at a time, the thread given back between tiles (slice.ts); a single picture in one call. */
async function decodeWith(avif: AvifModule, bytes: Uint8Array, factor: number, grid: Grid | null, slicer: Slicer): Promise<Pixels> {
  if (!grid) {
    const image = decodePicture(avif, bytes, "the AVIF");
    const reducer = new BoxReducer(image.width, image.height, factor);
    // Each row is complete as it is added: its box row's sums are freed as soon as it closes.
    addTile(reducer, image, 0, 0, true);
    return reducer.result();
  }
  const reducer = new BoxReducer(grid.width, grid.height, factor);
  for (let row = 0; row < grid.rows; row++) {
    for (let column = 0; column < grid.columns; column++) {
      const index = row * grid.columns + column;
      const name = `tile ${index + 1} of the AVIF grid`;
      const image = decodePicture(avif, tileFile(grid.tiles[index]!, grid.colour, grid.alphaTiles?.[index]), name);
      if (image.width !== grid.tileWidth || image.height !== grid.tileHeight) {
        throw new CorruptImageError(`${name} is ${image.width}x${image.height}, not ${grid.tileWidth}x${grid.tileHeight} like the first`);
      }
      addTile(reducer, image, column * grid.tileWidth, row * grid.tileHeight);
      if (slicer.spend(image.width * image.height)) await slicer.pause();
    }
    reducer.completeRowsBefore((row + 1) * grid.tileHeight);
  }
  return reducer.result();
}

/**
 * The decoder's glue gives the global scope a `location` ({ href: "" }) when it has none, and reads it
 * only while the factory runs. Left there, it misleads other modules that look for a browser's location
 * (@cfworker/json-schema builds its base URI from `self.location.origin` when it is evaluated, and threw
 * "Invalid URL" when the app was loaded after a first AVIF decode), so it is taken away again.
 */
async function withoutLeftLocation<T>(run: () => Promise<T>): Promise<T> {
  const had = Object.hasOwn(globalThis, "location");
  try {
    return await run();
  } finally {
    if (!had) Reflect.deleteProperty(globalThis, "location");
  }
}

async function instantiate(): Promise<{ avif: AvifModule; ceiling: MemoryCeiling }> {
  let ceiling: MemoryCeiling | undefined;
  const avif = await withoutLeftLocation(() =>
    (avifFactory as unknown as Factory)({
      noInitialRun: true,
      instantiateWasm(imports, ready) {
        const instance = new WebAssembly.Instance(avifWasm, imports);
        ceiling = capMemory(instance.exports, AVIF_MAX_WASM_BYTES);
        ready(instance);
        return instance.exports;
      },
    }),
  );
  return { avif, ceiling: ceiling! };
}

function decodePicture(avif: AvifModule, bytes: Uint8Array, name: string): { data: Uint8Array; width: number; height: number } {
  let image: ReturnType<AvifModule["decode"]>;
  try {
    image = avif.decode(bytes, 8);
  } catch (error) {
    throw new CorruptImageError(`${name} could not be decoded (${error instanceof Error ? error.message : String(error)})`);
  }
  if (!image) throw new CorruptImageError(`${name} could not be decoded`);
  return {
    data: new Uint8Array(image.data.buffer, image.data.byteOffset, image.data.byteLength),
    width: image.width,
    height: image.height,
  };
}

/** Adds a decoded tile at (x, y); `wholeRows` when it spans the picture, so each row completes as it is added. */
function addTile(
  reducer: BoxReducer,
  image: { data: Uint8Array; width: number; height: number },
  x: number,
  y: number,
  wholeRows = false,
): void {
  for (let row = 0; row < image.height; row++) {
    reducer.addRow(y + row, x, image.data, row * image.width * 4, image.width, 4);
    if (wholeRows) reducer.completeRowsBefore(y + row + 1);
  }
}

interface Grid {
  rows: number;
  columns: number;
  /** The picture's size (tiles on the right and bottom edges may reach past it). */
  width: number;
  height: number;
  tileWidth: number;
  tileHeight: number;
  tiles: HeifItem[];
  /** The alpha plane's tiles, when the picture has an alpha grid laid out like its own. */
  alphaTiles: HeifItem[] | null;
  /** The grid's colour descriptions (colr), for tiles that carry none. */
  colour: HeifProperty[];
}

/** A grid item (ISO/IEC 23008-12, 6.6.2.3) checked: every tile an AV1 picture of one size, ≤ AVIF_MAX_PIXELS. */
function readGrid(file: HeifFile, item: HeifItem): Grid {
  const b = item.body;
  if (b.length < 8) throw new CorruptImageError("the AVIF's grid description is cut short");
  const wide = (b[1]! & 1) === 1;
  const rows = b[2]! + 1;
  const columns = b[3]! + 1;
  if (b.length < (wide ? 12 : 8)) throw new CorruptImageError("the AVIF's grid description is cut short");
  const width = wide ? ((b[4]! << 24) | (b[5]! << 16) | (b[6]! << 8) | b[7]!) >>> 0 : (b[4]! << 8) | b[5]!;
  const height = wide ? ((b[8]! << 24) | (b[9]! << 16) | (b[10]! << 8) | b[11]!) >>> 0 : (b[6]! << 8) | b[7]!;
  const tiles = tilesOf(file, item, rows * columns, "");
  const size = spatialExtent(tiles[0]!);
  if (!size) throw new CorruptImageError("the AVIF grid's first tile has no size (ispe)");
  const [tileWidth, tileHeight] = size;
  if (tileWidth * tileHeight > AVIF_MAX_PIXELS) {
    throw new ImageTooLargeError(
      `the AVIF's tiles are ${tileWidth}x${tileHeight}, more than the ${AVIF_MAX_PIXELS} pixels a tile may have to be ` +
        `resized (each tile is decoded whole, about 25 MiB a megapixel)`,
    );
  }
  if (tileWidth * columns < width || tileHeight * rows < height) {
    throw new CorruptImageError(
      `the AVIF's ${columns}x${rows} tiles of ${tileWidth}x${tileHeight} do not cover its ${width}x${height} picture`,
    );
  }
  const alpha = [...file.items.values()].find(
    (candidate) =>
      candidate.references.get("auxl")?.includes(item.id) &&
      candidate.properties.some((p) => p.type === "auxC" && ALPHA_URNS.has(auxType(p))),
  );
  let alphaTiles: HeifItem[] | null = null;
  if (alpha?.type === "grid" && alpha.body.length >= 4 && alpha.body[2]! + 1 === rows && alpha.body[3]! + 1 === columns)
    alphaTiles = tilesOf(file, alpha, rows * columns, " alpha");
  return {
    rows,
    columns,
    width,
    height,
    tileWidth,
    tileHeight,
    tiles,
    alphaTiles,
    colour: item.properties.filter((p) => p.type === "colr"),
  };
}

function tilesOf(file: HeifFile, grid: HeifItem, count: number, kind: string): HeifItem[] {
  const ids = grid.references.get("dimg") ?? [];
  if (ids.length !== count) throw new CorruptImageError(`the AVIF's${kind} grid names ${ids.length} tiles for its ${count} cells`);
  return ids.map((id, i) => {
    const tile = file.items.get(id);
    if (!tile || tile.type !== "av01") throw new CorruptImageError(`tile ${i + 1} of the AVIF's${kind} grid is not an AV1 picture`);
    if (tile.body.length === 0) throw new CorruptImageError(`tile ${i + 1} of the AVIF's${kind} grid has no data in the file`);
    return tile;
  });
}

function spatialExtent(item: HeifItem): [number, number] | null {
  const ispe = item.properties.find((p) => p.type === "ispe");
  if (!ispe || ispe.body.length < 12) return null;
  const b = ispe.body;
  return [((b[4]! << 24) | (b[5]! << 16) | (b[6]! << 8) | b[7]!) >>> 0, ((b[8]! << 24) | (b[9]! << 16) | (b[10]! << 8) | b[11]!) >>> 0];
}

function auxType(property: HeifProperty): string {
  const end = property.body.indexOf(0, 4);
  return new TextDecoder().decode(property.body.subarray(4, end < 0 ? property.body.length : end));
}

// Writing a one-picture AVIF around a tile.

const ascii = (text: string) => new TextEncoder().encode(text);

function u16(value: number): Uint8Array {
  return new Uint8Array([value >> 8, value & 255]);
}

function u32(value: number): Uint8Array {
  return new Uint8Array([value >>> 24, (value >> 16) & 255, (value >> 8) & 255, value & 255]);
}

function box(type: string, ...parts: Uint8Array[]): Uint8Array {
  const body = concat(parts);
  return concat([u32(body.length + 8), ascii(type), body]);
}

function fullBox(type: string, version: number, flags: number, ...parts: Uint8Array[]): Uint8Array {
  return box(type, new Uint8Array([version, flags >> 16, (flags >> 8) & 255, flags & 255]), ...parts);
}

/** The properties a tile needs to be shown alone: its own, the grid's colour where it has none, and pixi. */
function tileProperties(tile: HeifItem, colour: HeifProperty[]): { box: Uint8Array; essential: boolean }[] {
  // Rotation, mirroring and cropping belong to the whole picture (the pipeline applies them).
  const own = tile.properties.filter((p) => !["irot", "imir", "clap"].includes(p.type));
  const properties: { box: Uint8Array; essential: boolean }[] = [...own];
  if (!own.some((p) => p.type === "colr")) properties.push(...colour);
  // libavif requires pixi (MIAF); an encoder may leave it to the grid. Its bit depth is av1C's.
  if (!own.some((p) => p.type === "pixi")) {
    const av1C = own.find((p) => p.type === "av1C")?.body;
    if (!av1C || av1C.length < 4) throw new CorruptImageError("a tile of the AVIF grid has no AV1 configuration (av1C)");
    const depth = av1C[2]! & 0x40 ? (av1C[2]! & 0x20 ? 12 : 10) : 8;
    const channels = av1C[2]! & 0x10 ? 1 : 3;
    properties.push({
      box: fullBox("pixi", 0, 0, new Uint8Array([channels, ...new Array<number>(channels).fill(depth)])),
      essential: false,
    });
  }
  return properties;
}

/** A one-picture AVIF holding `tile` (and its alpha tile): what libavif decodes as an image of its own. */
function tileFile(tile: HeifItem, colour: HeifProperty[], alphaTile: HeifItem | undefined): Uint8Array {
  const pictures = alphaTile ? [tile, alphaTile] : [tile];
  const properties = pictures.map((picture, i) => tileProperties(picture, i === 0 ? colour : []));
  const ipco = box("ipco", ...properties.flat().map((p) => p.box));
  let next = 1;
  const ipma = fullBox(
    "ipma",
    0,
    0,
    u32(pictures.length),
    ...properties.map((list, i) =>
      concat([u16(i + 1), new Uint8Array([list.length, ...list.map((p) => (p.essential ? 0x80 : 0) | next++)])]),
    ),
  );
  if (next > 128) throw new CorruptImageError("a tile of the AVIF grid has too many properties");
  const meta = (dataStart: number) => {
    let offset = dataStart;
    const extents = pictures.map((picture, i) => {
      const entry = concat([u16(i + 1), u16(0), u16(1), u32(offset), u32(picture.body.length)]);
      offset += picture.body.length;
      return entry;
    });
    return fullBox(
      "meta",
      0,
      0,
      fullBox("hdlr", 0, 0, u32(0), ascii("pict"), new Uint8Array(13)),
      fullBox("pitm", 0, 0, u16(1)),
      fullBox("iloc", 0, 0, new Uint8Array([0x44, 0x00]), u16(pictures.length), ...extents),
      fullBox(
        "iinf",
        0,
        0,
        u16(pictures.length),
        ...pictures.map((_, i) => fullBox("infe", 2, 0, u16(i + 1), u16(0), ascii("av01"), new Uint8Array(1))),
      ),
      ...(alphaTile ? [fullBox("iref", 0, 0, box("auxl", u16(2), u16(1), u16(1)))] : []),
      box("iprp", ipco, ipma),
    );
  };
  const ftyp = box("ftyp", ascii("avif"), u32(0), ascii("avifmif1miaf"));
  const dataStart = ftyp.length + meta(0).length + 8;
  return concat([ftyp, meta(dataStart), box("mdat", ...pictures.map((p) => p.body))]);
}
