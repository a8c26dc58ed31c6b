/**
 * AVIF with @jsquash/avif (libavif and dav1d compiled to WASM, maintained for Workers). Its decoder
 * returns the whole picture as RGBA, so AVIF is the one streamed-nothing format: the picture's YUV
 * planes and RGBA live in WASM memory, then once more in JavaScript (measured: about 40 MiB for the
 * instance and 25 MiB a megapixel). Pictures up to AVIF_MAX_PIXELS are decoded (each in its own
 * instance, dropped afterwards: WASM memory only grows); larger ones keep their original and say why, and the Images
 * binding (IMAGE_RESIZER = "images") makes their versions where an operator enables it. No maintained
 * AV1 decoder on npm decodes a row or a tile at a time (docs/decisions.md, "Image decoding").
 */
// A relative path ending in .wasm matches wrangler's CompiledWasm rule and Vite's (see photon/codec.ts).
import * as avifWasmModule from "../../../node_modules/@jsquash/avif/codec/dec/avif_dec.wasm";
import avifFactory from "@jsquash/avif/codec/dec/avif_dec.js";
import { CorruptImageError, ImageTooLargeError } from "./errors";
import { AVIF_MAX_PIXELS } from "./limits";
import { BoxReducer } from "./reduce";
import type { Pixels } from "./resample";

const avifWasm = (avifWasmModule as unknown as { default: WebAssembly.Module }).default;

interface AvifModule {
  decode(data: BufferSource, bitDepth: 8): { data: Uint8ClampedArray; width: number; height: number } | null;
}

type Factory = (options: { noInitialRun: boolean; instantiateWasm(imports: WebAssembly.Imports, ready: (instance: WebAssembly.Instance) => void): WebAssembly.Exports }) => Promise<AvifModule>;

/** Decodes an AVIF (8 bits a channel out), averaging `factor` x `factor` boxes into RGBA. */
export async function decodeAvifReduced(bytes: Uint8Array, width: number, height: number, factor: number): Promise<Pixels> {
  if (width * height > AVIF_MAX_PIXELS) {
    throw new ImageTooLargeError(`${width}x${height} is more than the ${AVIF_MAX_PIXELS} pixels an AVIF may have to be resized here: AVIF is decoded whole (about 25 MiB a megapixel)`);
  }
  const avif = await (avifFactory as unknown as Factory)({
    noInitialRun: true,
    instantiateWasm(imports, ready) {
      const instance = new WebAssembly.Instance(avifWasm, imports);
      ready(instance);
      return instance.exports;
    },
  });
  let image: ReturnType<AvifModule["decode"]>;
  try {
    image = avif.decode(bytes, 8);
  } catch (error) {
    throw new CorruptImageError(`the AVIF could not be decoded (${error instanceof Error ? error.message : String(error)})`);
  }
  if (!image) throw new CorruptImageError("the AVIF could not be decoded");
  const data = new Uint8Array(image.data.buffer, image.data.byteOffset, image.data.byteLength);
  const reducer = new BoxReducer(image.width, image.height, factor);
  for (let y = 0; y < image.height; y++) {
    reducer.addRow(y, 0, data, y * image.width * 4, image.width, 4);
    reducer.completeRowsBefore(y + 1);
  }
  return reducer.result();
}
