/**
 * WebP: the RIFF container; lossy pictures (VP8) decoded a macroblock row at a time (vp8.ts), with
 * their alpha plane (stored, or VP8L-compressed and decoded first at one byte a pixel); lossless
 * pictures (VP8L) a row at a time (vp8l.ts); all averaged into boxes as rows complete (reduce.ts).
 *
 * Animations return null, and the pipeline hands the file to photon (whole, up to about 3 MP), which
 * shows the first frame.
 */
import { CorruptImageError, ImageTooLargeError } from "../errors";
import { BoxReducer } from "../reduce";
import type { Pixels } from "../resample";
import { asText, riffChunks } from "../segments";
import { decodeVp8, vp8Header } from "./vp8";
import { decodeVp8l, decodeVp8lAlpha, vp8lHeader } from "./vp8l";

export interface WebpLayout {
  kind: "lossy" | "lossless" | "animated";
  /** The lossy picture's VP8 data, and its alpha plane's ALPH chunk if any. */
  vp8?: Uint8Array;
  alph?: Uint8Array;
  /** The lossless picture's VP8L data. */
  vp8l?: Uint8Array;
  iccProfile: Uint8Array | null;
}

export function webpLayout(bytes: Uint8Array): WebpLayout {
  let vp8: Uint8Array | undefined;
  let vp8l: Uint8Array | undefined;
  let alph: Uint8Array | undefined;
  let iccProfile: Uint8Array | null = null;
  let kind: WebpLayout["kind"] | undefined;
  for (const chunk of riffChunks(bytes)) {
    if (chunk.type === "VP8 " && !kind) {
      kind = "lossy";
      vp8 = chunk.body;
    } else if (chunk.type === "VP8L" && !kind) {
      kind = "lossless";
      vp8l = chunk.body;
    }
    else if (chunk.type === "ANIM" || chunk.type === "ANMF") kind = "animated";
    else if (chunk.type === "ALPH") alph = chunk.body;
    else if (chunk.type === "ICCP") iccProfile = chunk.body;
  }
  if (!kind) {
    // The walk stops at a chunk that runs past the end of the file: say which, for a truncated upload.
    let pos = 12;
    for (const chunk of riffChunks(bytes)) pos = chunk.end;
    if (pos + 8 <= bytes.length) {
      const announced = (bytes[pos + 4]! | (bytes[pos + 5]! << 8) | (bytes[pos + 6]! << 16) | (bytes[pos + 7]! << 24)) >>> 0;
      throw new CorruptImageError(`the WebP's ${asText(bytes.subarray(pos, pos + 4)).trim()} chunk is cut short: ${announced} bytes announced, ${bytes.length - pos - 8} present`);
    }
    throw new CorruptImageError("the WebP has no image data (no VP8, VP8L or animation chunk)");
  }
  return { kind, vp8, vp8l, alph, iccProfile };
}

/** YUV (BT.601, limited range) to RGB as libwebp computes it: 14-bit fixed point, then >> 6. */
const multHi = (v: number, c: number) => (v * c) >> 8;
const clip8 = (v: number) => ((v & ~16383) === 0 ? v >> 6 : v < 0 ? 0 : 255);

/**
 * A lossy WebP's rows in order, as libwebp decodes them: `y` luma samples, the chroma samples of the
 * row's pair (half width, rounded up) and the alpha row (or null without alpha). Null when the file
 * is not lossy. The arrays are reused between calls.
 */
export function decodeWebpRows(bytes: Uint8Array, row: (y: number, yRow: Uint8Array, uRow: Uint8Array, vRow: Uint8Array, aRow: Uint8Array | null) => void): { width: number; height: number } | null {
  const layout = webpLayout(bytes);
  if (layout.kind !== "lossy" || !layout.vp8) return null;
  const { width, height } = vp8Header(layout.vp8);
  const alpha = layout.alph ? alphaRows(layout.alph, width, height) : null;
  decodeVp8(layout.vp8, (y, yRow, uRow, vRow) => row(y, yRow, uRow, vRow, alpha ? alpha(y) : null));
  return { width, height };
}

/**
 * Decodes a still WebP, lossy (with or without alpha) or lossless, averaging `factor` x `factor`
 * boxes into RGBA; null for an animation (photon shows its first frame). Throws CorruptImageError for
 * data that is truncated or malformed.
 */
export function decodeWebpReduced(bytes: Uint8Array, factor: number): Pixels | null {
  const layout = webpLayout(bytes);
  if (layout.kind === "lossless" && layout.vp8l) {
    const { width, height } = vp8lHeader(layout.vp8l);
    const reducer = new BoxReducer(width, height, factor);
    const rgba = new Uint8Array(width * 4);
    decodeVp8l(layout.vp8l, (y, argb) => {
      for (let x = 0, o = 0; x < width; x++, o += 4) {
        const p = argb[x]!;
        rgba[o] = (p >>> 16) & 255;
        rgba[o + 1] = (p >>> 8) & 255;
        rgba[o + 2] = p & 255;
        rgba[o + 3] = p >>> 24;
      }
      reducer.addRow(y, 0, rgba, 0, width, 4);
      reducer.completeRowsBefore(y + 1);
    });
    return reducer.result();
  }
  let reducer: BoxReducer | undefined;
  let rgba = new Uint8Array(0);
  const size = decodeWebpRows(bytes, (y, yRow, uRow, vRow, aRow) => {
    const width = yRow.length;
    if (!reducer) {
      reducer = new BoxReducer(width, vp8Header(layout.vp8!).height, factor);
      rgba = new Uint8Array(width * 4);
    }
    for (let x = 0, o = 0; x < width; x++, o += 4) {
      const yy = multHi(yRow[x]!, 19077);
      const u = uRow[x >> 1]!;
      const v = vRow[x >> 1]!;
      rgba[o] = clip8(yy + multHi(v, 26149) - 14234);
      rgba[o + 1] = clip8(yy - multHi(u, 6419) - multHi(v, 13320) + 8708);
      rgba[o + 2] = clip8(yy + multHi(u, 33050) - 17685);
      rgba[o + 3] = aRow ? aRow[x]! : 255;
    }
    reducer.addRow(y, 0, rgba, 0, width, 4);
    reducer.completeRowsBefore(y + 1);
  });
  return size && reducer ? reducer.result() : null;
}

/** A VP8L-compressed alpha plane is decoded whole first (one byte a pixel) and filtered row by row. */
export const WEBP_COMPRESSED_ALPHA_MAX_PIXELS = 48_000_000;

/**
 * An ALPH chunk's rows (section "Alpha" of the WebP container): a header byte (pre-processing,
 * filtering method, compression), then the plane, stored or VP8L-compressed; its filter is undone
 * row by row.
 */
function alphaRows(alph: Uint8Array, width: number, height: number): (y: number) => Uint8Array {
  const filter = (alph[0]! >> 2) & 3;
  const compression = alph[0]! & 3;
  let plane = alph.subarray(1);
  if (compression === 1) {
    if (width * height > WEBP_COMPRESSED_ALPHA_MAX_PIXELS) throw new ImageTooLargeError(`the WebP's compressed alpha plane is ${width}x${height}; it is decoded up to ${WEBP_COMPRESSED_ALPHA_MAX_PIXELS} pixels`);
    plane = new Uint8Array(width * height);
    const target = plane;
    decodeVp8lAlpha(alph.subarray(1), width, height, (y, a) => target.set(a, y * width));
  } else if (compression !== 0) throw new CorruptImageError(`the WebP's alpha plane has an unknown compression (${compression})`);
  if (plane.length < width * height) throw new CorruptImageError("the WebP's alpha plane is shorter than the picture");
  let previous = new Uint8Array(width);
  let current = new Uint8Array(width);
  let next = 0;
  return (y: number) => {
    if (y !== next) throw new Error("alpha rows are read in order");
    next++;
    const row = plane.subarray(y * width, (y + 1) * width);
    for (let x = 0; x < width; x++) {
      let predictor = 0;
      if (filter === 1) predictor = x > 0 ? current[x - 1]! : y > 0 ? previous[0]! : 0;
      else if (filter === 2) predictor = y > 0 ? previous[x]! : x > 0 ? current[x - 1]! : 0;
      else if (filter === 3) {
        if (y === 0) predictor = x > 0 ? current[x - 1]! : 0;
        else if (x === 0) predictor = previous[0]!;
        else {
          const g = current[x - 1]! + previous[x]! - previous[x - 1]!;
          predictor = g < 0 ? 0 : g > 255 ? 255 : g;
        }
      }
      current[x] = (row[x]! + predictor) & 255;
    }
    [previous, current] = [current, previous];
    return previous;
  };
}
