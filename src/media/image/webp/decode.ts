/**
 * WebP: the RIFF container; lossy pictures (VP8) decoded a macroblock row at a time (vp8.ts), with
 * their alpha plane (stored, or VP8L-compressed and decoded first at one byte a pixel); lossless
 * pictures (VP8L) a row at a time (vp8l.ts); an animation's first frame either way, placed on its
 * canvas; all averaged into boxes as rows complete (reduce.ts).
 */
import { Slicer } from "../../../pkg/slicer";
import { CorruptImageError, ImageTooLargeError } from "../errors";
import { BoxReducer } from "../reduce";
import type { Pixels } from "../resample";
import { asText, riffChunks } from "../segments";
import { decodeVp8, vp8Header } from "./vp8";
import { decodeVp8l, decodeVp8lAlpha, vp8lHeader } from "./vp8l";

/** One picture: a still image's, or an animation's frame at (x, y) on its canvas. */
export interface WebpFrame {
  /** Lossy data (VP8), with its alpha plane (ALPH) if any. */
  vp8?: Uint8Array;
  alph?: Uint8Array;
  /** Lossless data (VP8L). */
  vp8l?: Uint8Array;
  x: number;
  y: number;
}

export interface WebpLayout {
  kind: "lossy" | "lossless" | "animated";
  /** The picture, or an animation's first frame. */
  frame: WebpFrame;
  /** The canvas: the picture's size, or the animation's. */
  width: number;
  height: number;
  iccProfile: Uint8Array | null;
}

const u24 = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16);

function frameOf(chunks: Iterable<{ type: string; body: Uint8Array }>, x: number, y: number): WebpFrame | null {
  const frame: WebpFrame = { x, y };
  for (const chunk of chunks) {
    if (chunk.type === "VP8 " && !frame.vp8 && !frame.vp8l) frame.vp8 = chunk.body;
    else if (chunk.type === "VP8L" && !frame.vp8 && !frame.vp8l) frame.vp8l = chunk.body;
    else if (chunk.type === "ALPH" && !frame.alph) frame.alph = chunk.body;
  }
  return frame.vp8 || frame.vp8l ? frame : null;
}

function frameSize(frame: WebpFrame): { width: number; height: number } {
  return frame.vp8 ? vp8Header(frame.vp8) : vp8lHeader(frame.vp8l!);
}

export function webpLayout(bytes: Uint8Array): WebpLayout {
  const chunks = [...riffChunks(bytes)];
  // The walk stops at a chunk that runs past the end of the file: a truncated upload, even when the
  // picture itself (an animation's first frame, say) came before the cut.
  const pos = chunks.at(-1)?.end ?? 12;
  const riffEnd = Math.min(bytes.length, 8 + ((bytes[4]! | (bytes[5]! << 8) | (bytes[6]! << 16) | (bytes[7]! << 24)) >>> 0));
  if (pos + 8 <= riffEnd) {
    const announced = (bytes[pos + 4]! | (bytes[pos + 5]! << 8) | (bytes[pos + 6]! << 16) | (bytes[pos + 7]! << 24)) >>> 0;
    throw new CorruptImageError(
      `the WebP's ${asText(bytes.subarray(pos, pos + 4)).trim()} chunk is cut short: ${announced} bytes announced, ` +
        `${bytes.length - pos - 8} present`,
    );
  }
  const iccProfile = chunks.find((c) => c.type === "ICCP")?.body ?? null;
  const firstFrame = chunks.find((c) => c.type === "ANMF");
  if (firstFrame) {
    // An animation: the canvas from VP8X; the first frame's offset (in pairs of pixels) and data.
    const vp8x = chunks.find((c) => c.type === "VP8X");
    if (!vp8x || vp8x.body.length < 10) throw new CorruptImageError("the animated WebP has no canvas (VP8X) chunk");
    if (firstFrame.body.length < 16) throw new CorruptImageError("the animated WebP's first frame ends inside its header");
    const frame = frameOf(riffChunks(firstFrame.body, 16), u24(firstFrame.body, 0) * 2, u24(firstFrame.body, 3) * 2);
    if (!frame) throw new CorruptImageError("the animated WebP's first frame has no image data");
    return { kind: "animated", frame, width: u24(vp8x.body, 4) + 1, height: u24(vp8x.body, 7) + 1, iccProfile };
  }
  const frame = frameOf(chunks, 0, 0);
  if (!frame) throw new CorruptImageError("the WebP has no image data (no VP8, VP8L or animation chunk)");
  return { kind: frame.vp8 ? "lossy" : "lossless", frame, ...frameSize(frame), iccProfile };
}

/** YUV (BT.601, limited range) to RGB as libwebp computes it: 14-bit fixed point, then >> 6. */
const multHi = (v: number, c: number) => (v * c) >> 8;
const clip8 = (v: number) => ((v & ~16383) === 0 ? v >> 6 : v < 0 ? 0 : 255);

/**
 * A lossy picture's rows in order, as libwebp decodes them: `y` luma samples, the chroma samples of
 * the row's pair (half width, rounded up) and the alpha row (or null without alpha). The arrays are
 * reused between calls.
 */
export async function decodeLossyRows(
  frame: WebpFrame,
  row: (y: number, yRow: Uint8Array, uRow: Uint8Array, vRow: Uint8Array, aRow: Uint8Array | null) => void,
  slicer: Slicer = new Slicer(),
): Promise<void> {
  const { width, height } = vp8Header(frame.vp8!);
  const alpha = frame.alph ? await alphaRows(frame.alph, width, height, slicer) : null;
  await decodeVp8(frame.vp8!, (y, yRow, uRow, vRow) => row(y, yRow, uRow, vRow, alpha ? alpha(y) : null), slicer);
}

/** A picture's rows as RGBA (lossy converted from YUV as libwebp does, nearest chroma). */
async function decodeFrameRows(frame: WebpFrame, row: (y: number, rgba: Uint8Array) => void, slicer: Slicer): Promise<void> {
  const { width } = frameSize(frame);
  const rgba = new Uint8Array(width * 4);
  if (frame.vp8l) {
    await decodeVp8l(
      frame.vp8l,
      (y, argb) => {
        for (let x = 0, o = 0; x < width; x++, o += 4) {
          const p = argb[x]!;
          rgba[o] = (p >>> 16) & 255;
          rgba[o + 1] = (p >>> 8) & 255;
          rgba[o + 2] = p & 255;
          rgba[o + 3] = p >>> 24;
        }
        row(y, rgba);
      },
      slicer,
    );
    return;
  }
  await decodeLossyRows(
    frame,
    (y, yRow, uRow, vRow, aRow) => {
      for (let x = 0, o = 0; x < width; x++, o += 4) {
        const yy = multHi(yRow[x]!, 19077);
        const u = uRow[x >> 1]!;
        const v = vRow[x >> 1]!;
        rgba[o] = clip8(yy + multHi(v, 26149) - 14234);
        rgba[o + 1] = clip8(yy - multHi(u, 6419) - multHi(v, 13320) + 8708);
        rgba[o + 2] = clip8(yy + multHi(u, 33050) - 17685);
        rgba[o + 3] = aRow ? aRow[x]! : 255;
      }
      row(y, rgba);
    },
    slicer,
  );
}

/**
 * Decodes a WebP, still (lossy with or without alpha, lossless) or animated (its first frame, on its
 * canvas; what the frame does not cover is transparent), averaging `factor` x `factor` boxes into
 * RGBA. Throws CorruptImageError for data that is truncated or malformed.
 */
export async function decodeWebpReduced(bytes: Uint8Array, factor: number, slicer: Slicer = new Slicer()): Promise<Pixels> {
  const { frame, width, height } = webpLayout(bytes);
  const reducer = new BoxReducer(width, height, factor);
  const size = frameSize(frame);
  if (frame.x + size.width > width || frame.y + size.height > height)
    throw new CorruptImageError("the animated WebP's first frame lies outside its canvas");
  await decodeFrameRows(
    frame,
    (y, rgba) => {
      reducer.addRow(frame.y + y, frame.x, rgba, 0, size.width, 4);
      reducer.completeRowsBefore(frame.y + y + 1);
    },
    slicer,
  );
  return reducer.result();
}

/** A VP8L-compressed alpha plane is decoded whole first (one byte a pixel) and filtered row by row. */
export const WEBP_COMPRESSED_ALPHA_MAX_PIXELS = 48_000_000;

/**
 * An ALPH chunk's rows (section "Alpha" of the WebP container): a header byte (pre-processing,
 * filtering method, compression), then the plane, stored or VP8L-compressed; its filter is undone
 * row by row.
 */
async function alphaRows(alph: Uint8Array, width: number, height: number, slicer: Slicer): Promise<(y: number) => Uint8Array> {
  const filter = (alph[0]! >> 2) & 3;
  const compression = alph[0]! & 3;
  let plane = alph.subarray(1);
  if (compression === 1) {
    if (width * height > WEBP_COMPRESSED_ALPHA_MAX_PIXELS)
      throw new ImageTooLargeError(
        `the WebP's compressed alpha plane is ${width}x${height}; it is decoded up to ${WEBP_COMPRESSED_ALPHA_MAX_PIXELS} pixels`,
      );
    plane = new Uint8Array(width * height);
    const target = plane;
    await decodeVp8lAlpha(alph.subarray(1), width, height, (y, a) => target.set(a, y * width), slicer);
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
