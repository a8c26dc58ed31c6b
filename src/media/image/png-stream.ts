/**
 * A PNG decoded row by row, never whole (issue 11): the image data inflates through fflate's streaming
 * Unzlib, a slice at a time, and each row is unfiltered, converted to RGBA and averaged into a box of
 * `factor` x `factor` pixels as it arrives, so memory holds the file, two rows and the reduced image
 * (at most twice the target size per side), whatever the PNG's size. Every colour type and bit depth
 * (1 to 16), palettes and tRNS transparency are read; 16-bit samples keep their high byte.
 * Interlaced (Adam7) PNGs deliver their pixels in seven passes over the whole image, so every box
 * stays open until the last pass: their sums are kept for the whole reduced image, in 16-bit integers
 * while a box holds at most 16 x 16 pixels (8 bytes a box), and a PNG that needs no reduction is
 * written straight into its RGBA pixels (4 bytes a pixel, at most about 4 MP at that size).
 *
 * Why our own code: no maintained WASM PNG decoder streams rows into a caller's reduction; pngjs and
 * fast-png decode whole images into memory (4 to 8 bytes per pixel, 190 MiB for a 48 MP PNG), and
 * photon decodes whole images too. The format is small (the structure is already checked by png.ts).
 */
import { Unzlib } from "fflate";
import { CorruptImageError } from "./errors";
import { pngChunks } from "./segments";
import type { Pixels } from "./resample";
import { Slicer } from "../../pkg/slicer";

export interface PngLayout {
  width: number;
  height: number;
  bitDepth: number;
  colourType: number;
  interlaced: boolean;
}

/**
 * Compressed bytes pushed to the inflater at a time (deflate inflates at most 1032:1, so at most about
 * 4 MiB of rows come out of one push, a few ms of work, before the slicer is asked).
 */
const INFLATE_SLICE = 4 * 1024;

const u32 = (b: Uint8Array, at: number) => ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

interface Chunks {
  layout: PngLayout;
  palette: Uint8Array | null;
  transparency: Uint8Array | null;
  data: Uint8Array[];
}

const layoutOf = (ihdr: Uint8Array): PngLayout => ({
  width: u32(ihdr, 0),
  height: u32(ihdr, 4),
  bitDepth: ihdr[8]!,
  colourType: ihdr[9]!,
  interlaced: ihdr[12] === 1,
});

/** The chunks the decoder needs (png.ts has already checked the structure and every CRC). */
function readChunks(bytes: Uint8Array): Chunks {
  let layout: PngLayout | null = null;
  let palette: Uint8Array | null = null;
  let transparency: Uint8Array | null = null;
  const data: Uint8Array[] = [];
  for (const { type, body } of pngChunks(bytes)) {
    if (type === "IHDR") layout = layoutOf(body);
    else if (type === "PLTE") palette = body;
    else if (type === "tRNS") transparency = body;
    else if (type === "IDAT") data.push(body);
  }
  if (!layout) throw new CorruptImageError("the PNG has no IHDR chunk");
  if (layout.colourType === 3 && (!palette || palette.length % 3 !== 0 || palette.length === 0))
    throw new CorruptImageError("the palette PNG has no valid PLTE chunk");
  return { layout, palette, transparency, data };
}

/** The layout from the IHDR, which is the first chunk (png.ts checked that): nothing else is read. */
export function pngLayout(bytes: Uint8Array): PngLayout {
  const first = pngChunks(bytes).next();
  if (first.done || first.value.type !== "IHDR") throw new CorruptImageError("the PNG does not start with an IHDR chunk");
  return layoutOf(first.value.body);
}

/** Writes one unfiltered row (of `count` pixels: the width, or an interlaced pass's) as RGBA (straight alpha) into `out`. */
function rowConverter(chunks: Chunks): (row: Uint8Array, out: Uint8Array, count?: number) => void {
  const { layout, palette, transparency } = chunks;
  const { width, bitDepth, colourType } = layout;
  const wide = bitDepth === 16;
  const max = (1 << bitDepth) - 1;
  // Grey below 8 bits scales to 0..255 (1 bit: 0/255; 2 bits: 0, 85, 170, 255; 4 bits: x 17).
  const scale = bitDepth < 8 ? 255 / max : 1;
  const sample = (row: Uint8Array, index: number): number => {
    if (wide) return (row[index * 2]! << 8) | row[index * 2 + 1]!;
    if (bitDepth === 8) return row[index]!;
    const bit = index * bitDepth;
    return (row[bit >> 3]! >> (8 - bitDepth - (bit & 7))) & max;
  };
  const to8 = (v: number) => (wide ? v >> 8 : bitDepth < 8 ? Math.round(v * scale) : v);
  // tRNS: one grey or RGB value (at the image's bit depth) that is transparent, or palette alphas.
  const key = transparency && colourType === 0 && transparency.length >= 2 ? (transparency[0]! << 8) | transparency[1]! : -1;
  const keyRgb =
    transparency && colourType === 2 && transparency.length >= 6
      ? [(transparency[0]! << 8) | transparency[1]!, (transparency[2]! << 8) | transparency[3]!, (transparency[4]! << 8) | transparency[5]!]
      : null;
  return (row, out, count = width) => {
    for (let x = 0, o = 0; x < count; x++, o += 4) {
      switch (colourType) {
        case 0: {
          const g = sample(row, x);
          out[o] = out[o + 1] = out[o + 2] = to8(g);
          out[o + 3] = g === key ? 0 : 255;
          break;
        }
        case 2: {
          const r = sample(row, x * 3);
          const g = sample(row, x * 3 + 1);
          const b = sample(row, x * 3 + 2);
          out[o] = to8(r);
          out[o + 1] = to8(g);
          out[o + 2] = to8(b);
          out[o + 3] = keyRgb && r === keyRgb[0] && g === keyRgb[1] && b === keyRgb[2] ? 0 : 255;
          break;
        }
        case 3: {
          const i = sample(row, x);
          if (i * 3 + 2 >= palette!.length)
            throw new CorruptImageError(`a pixel names palette entry ${i}; the palette has ${palette!.length / 3}`);
          out[o] = palette![i * 3]!;
          out[o + 1] = palette![i * 3 + 1]!;
          out[o + 2] = palette![i * 3 + 2]!;
          out[o + 3] = transparency && i < transparency.length ? transparency[i]! : 255;
          break;
        }
        case 4: {
          out[o] = out[o + 1] = out[o + 2] = to8(sample(row, x * 2));
          out[o + 3] = to8(sample(row, x * 2 + 1));
          break;
        }
        default: {
          out[o] = to8(sample(row, x * 4));
          out[o + 1] = to8(sample(row, x * 4 + 1));
          out[o + 2] = to8(sample(row, x * 4 + 2));
          out[o + 3] = to8(sample(row, x * 4 + 3));
        }
      }
    }
  };
}

/** Reverses a row's filter in place (PNG spec 9.2), given the previous unfiltered row. */
function unfilter(type: number, row: Uint8Array, previous: Uint8Array, bpp: number): void {
  const n = row.length;
  switch (type) {
    case 0:
      return;
    case 1:
      for (let i = bpp; i < n; i++) row[i] = (row[i]! + row[i - bpp]!) & 255;
      return;
    case 2:
      for (let i = 0; i < n; i++) row[i] = (row[i]! + previous[i]!) & 255;
      return;
    case 3:
      for (let i = 0; i < n; i++) row[i] = (row[i]! + (((i >= bpp ? row[i - bpp]! : 0) + previous[i]!) >> 1)) & 255;
      return;
    case 4:
      for (let i = 0; i < n; i++) {
        const a = i >= bpp ? row[i - bpp]! : 0;
        const b = previous[i]!;
        const c = i >= bpp ? previous[i - bpp]! : 0;
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        row[i] = (row[i]! + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c)) & 255;
      }
      return;
    default:
      throw new CorruptImageError(`a PNG row has the unknown filter type ${type}`);
  }
}

/**
 * Inflates the IDAT data into `consume`, a slice at a time. fflate inflates each pushed slice
 * synchronously and hands its output straight on, so at most one slice's output (4 KiB in, at most
 * ~4 MiB out for a bomb, about 8 KiB for a photo) exists at a time. The runtime's
 * DecompressionStream was measured first: it buffers all the inflated output it has not been asked
 * for (no backpressure between its two sides), and a 0.9 MiB 48 MP PNG of flat colour grew workerd by
 * 301 MiB, whatever the slice size or reader. `where` says how far decoding got, for the error.
 */
async function inflate(chunks: Chunks, consume: (data: Uint8Array) => void, where: () => string, slicer: Slicer): Promise<void> {
  // Work is counted in pixels: what the rows' unfiltering, conversion and averaging cost.
  const bitsPerPixel = CHANNELS[chunks.layout.colourType]! * chunks.layout.bitDepth;
  let inflated = 0;
  const inflater = new Unzlib((data) => {
    inflated += data.length;
    consume(data);
  });
  try {
    for (let p = 0; p < chunks.data.length; p++) {
      const part = chunks.data[p]!;
      for (let at = 0; at < part.length; at += INFLATE_SLICE) {
        inflater.push(part.subarray(at, at + INFLATE_SLICE), p === chunks.data.length - 1 && at + INFLATE_SLICE >= part.length);
        if (slicer.spend((inflated * 8) / bitsPerPixel)) await slicer.pause();
        inflated = 0;
      }
    }
  } catch (error) {
    if (error instanceof CorruptImageError) throw error;
    throw new CorruptImageError(
      `the PNG's image data does not inflate (${where()}): ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/**
 * Decodes a non-interlaced PNG, averaging each `factor` x `factor` box of pixels (alpha-weighted, so
 * transparent pixels do not tint their neighbours) into one: the result is ceil(width / factor) x
 * ceil(height / factor) RGBA. Throws CorruptImageError for data that does not inflate, a row with an
 * unknown filter, or image data that ends early.
 */
export async function decodePngReduced(bytes: Uint8Array, factor: number, slicer: Slicer = new Slicer()): Promise<Pixels> {
  const chunks = readChunks(bytes);
  const { width, height, bitDepth, colourType, interlaced } = chunks.layout;
  const k = Math.max(1, Math.min(200, Math.floor(factor)));
  if (interlaced) return decodeInterlaced(chunks, k, slicer);
  const outWidth = Math.ceil(width / k);
  const outHeight = Math.ceil(height / k);
  const bitsPerPixel = CHANNELS[colourType]! * bitDepth;
  const stride = Math.ceil((width * bitsPerPixel) / 8);
  const bpp = Math.max(1, bitsPerPixel >> 3);
  const convert = rowConverter(chunks);
  const out = new Uint8Array(outWidth * outHeight * 4);
  // One band of k rows at a time: alpha-weighted colour sums, alpha sums and pixel counts per box.
  const sums = new Float64Array(outWidth * 4);
  // (Float64: exact integer sums up to 2^53, whatever the box.)
  const counts = new Uint32Array(outWidth);
  let previous = new Uint8Array(stride);
  let current = new Uint8Array(stride);
  const rgba = new Uint8Array(width * 4);
  let filled = -1; // bytes of `current` filled; -1: the filter-type byte is next
  let filterType = 0;
  let y = 0;

  const flushBand = (band: number) => {
    for (let bx = 0; bx < outWidth; bx++) {
      const n = counts[bx]!;
      const s = bx * 4;
      const alpha = sums[s + 3]!;
      const o = (band * outWidth + bx) * 4;
      if (n > 0 && alpha > 0) {
        out[o] = Math.round(sums[s]! / alpha);
        out[o + 1] = Math.round(sums[s + 1]! / alpha);
        out[o + 2] = Math.round(sums[s + 2]! / alpha);
        out[o + 3] = Math.round(alpha / n);
      }
    }
    sums.fill(0);
    counts.fill(0);
  };

  // 8-bit RGB and RGBA without a colour key, what phones and screenshots write: summed straight from
  // the unfiltered row, without the RGBA copy.
  const direct =
    bitDepth === 8 && (colourType === 2 || colourType === 6) && !(colourType === 2 && chunks.transparency) ? CHANNELS[colourType]! : 0;
  const accumulateDirect = (row: Uint8Array) => {
    let bx = 0;
    let next = k;
    let s = 0;
    for (let x = 0, i = 0; x < width; x++, i += direct) {
      if (x === next) {
        bx++;
        next += k;
        s += 4;
      }
      const a = direct === 4 ? row[i + 3]! : 255;
      sums[s] = sums[s]! + row[i]! * a;
      sums[s + 1] = sums[s + 1]! + row[i + 1]! * a;
      sums[s + 2] = sums[s + 2]! + row[i + 2]! * a;
      sums[s + 3] = sums[s + 3]! + a;
      counts[bx] = counts[bx]! + 1;
    }
  };

  const finishRow = () => {
    unfilter(filterType, current, previous, bpp);
    if (direct) accumulateDirect(current);
    else convert(current, rgba);
    for (let x = 0; !direct && x < width; x++) {
      const bx = (x / k) | 0;
      const i = x * 4;
      const a = rgba[i + 3]!;
      const s = bx * 4;
      sums[s] = sums[s]! + rgba[i]! * a;
      sums[s + 1] = sums[s + 1]! + rgba[i + 1]! * a;
      sums[s + 2] = sums[s + 2]! + rgba[i + 2]! * a;
      sums[s + 3] = sums[s + 3]! + a;
      counts[bx] = counts[bx]! + 1;
    }
    y++;
    if (y % k === 0 || y === height) flushBand(Math.ceil(y / k) - 1);
    [previous, current] = [current, previous];
  };

  const consume = (chunk: Uint8Array) => {
    let i = 0;
    while (i < chunk.length && y < height) {
      if (filled < 0) {
        filterType = chunk[i++]!;
        filled = 0;
        continue;
      }
      const take = Math.min(stride - filled, chunk.length - i);
      current.set(chunk.subarray(i, i + take), filled);
      filled += take;
      i += take;
      if (filled === stride) {
        finishRow();
        filled = -1;
      }
    }
  };

  await inflate(chunks, consume, () => `after ${y} of ${height} rows`, slicer);
  if (y < height) throw new CorruptImageError(`the PNG's image data ends after ${y} of ${height} rows`);
  return { width: outWidth, height: outHeight, channels: 4, data: out };
}

/** Adam7's passes: first column, first row, column step, row step. */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

/**
 * An interlaced PNG: each pass's rows are unfiltered (against the pass's previous row) and converted
 * like any row, and each pixel is added to its box, which stays open until the last pass. With k = 1
 * the pixels are the result; otherwise colour is summed premultiplied by alpha (16-bit sums of
 * c x a / 255 while a box holds at most 256 pixels, 32-bit sums of c x a beyond).
 */
async function decodeInterlaced(chunks: Chunks, k: number, slicer: Slicer): Promise<Pixels> {
  const { width, height, bitDepth, colourType } = chunks.layout;
  const outWidth = Math.ceil(width / k);
  const outHeight = Math.ceil(height / k);
  const boxes = outWidth * outHeight;
  const bitsPerPixel = CHANNELS[colourType]! * bitDepth;
  const bpp = Math.max(1, bitsPerPixel >> 3);
  const convert = rowConverter(chunks);
  const out = new Uint8Array(boxes * 4);
  const narrow = k <= 16;
  const colour = k === 1 ? null : narrow ? new Uint16Array(boxes * 3) : new Uint32Array(boxes * 3);
  const alphas = k === 1 ? null : narrow ? new Uint16Array(boxes) : new Uint32Array(boxes);
  const rgba = new Uint8Array(width * 4);
  let previous = new Uint8Array(Math.ceil((width * bitsPerPixel) / 8));
  let current = new Uint8Array(previous.length);

  // The pass being read: its pixels per row, row bytes, rows left and position.
  let pass = -1;
  let passWidth = 0;
  let stride = 0;
  let rowsLeft = 0;
  let passRow = 0;
  const nextPass = () => {
    while (++pass < 7) {
      const [x0, y0, dx, dy] = ADAM7[pass]!;
      passWidth = width > x0 ? Math.ceil((width - x0) / dx) : 0;
      rowsLeft = height > y0 ? Math.ceil((height - y0) / dy) : 0;
      if (passWidth > 0 && rowsLeft > 0) break;
    }
    stride = Math.ceil((passWidth * bitsPerPixel) / 8);
    passRow = 0;
    previous.fill(0, 0, stride);
  };
  nextPass();

  const finishRow = (filterType: number) => {
    const row = current.subarray(0, stride);
    unfilter(filterType, row, previous.subarray(0, stride), bpp);
    convert(row, rgba, passWidth);
    const [x0, y0, dx, dy] = ADAM7[pass]!;
    const y = y0 + passRow * dy;
    const boxRow = ((y / k) | 0) * outWidth;
    for (let i = 0, x = x0, o = 0; i < passWidth; i++, x += dx, o += 4) {
      const a = rgba[o + 3]!;
      if (k === 1) {
        const at = (y * width + x) * 4;
        out[at] = rgba[o]!;
        out[at + 1] = rgba[o + 1]!;
        out[at + 2] = rgba[o + 2]!;
        out[at + 3] = a;
        continue;
      }
      const box = boxRow + ((x / k) | 0);
      if (narrow) {
        colour![box * 3] = colour![box * 3]! + Math.round((rgba[o]! * a) / 255);
        colour![box * 3 + 1] = colour![box * 3 + 1]! + Math.round((rgba[o + 1]! * a) / 255);
        colour![box * 3 + 2] = colour![box * 3 + 2]! + Math.round((rgba[o + 2]! * a) / 255);
      } else {
        colour![box * 3] = colour![box * 3]! + rgba[o]! * a;
        colour![box * 3 + 1] = colour![box * 3 + 1]! + rgba[o + 1]! * a;
        colour![box * 3 + 2] = colour![box * 3 + 2]! + rgba[o + 2]! * a;
      }
      alphas![box] = alphas![box]! + a;
    }
    [previous, current] = [current, previous];
    passRow++;
    if (--rowsLeft === 0) nextPass();
  };

  let filled = -1;
  let filterType = 0;
  const consume = (chunk: Uint8Array) => {
    let i = 0;
    while (i < chunk.length && pass < 7) {
      if (filled < 0) {
        filterType = chunk[i++]!;
        filled = 0;
        if (stride > 0) continue;
      }
      const take = Math.min(stride - filled, chunk.length - i);
      current.set(chunk.subarray(i, i + take), filled);
      filled += take;
      i += take;
      if (filled === stride) {
        finishRow(filterType);
        filled = -1;
      }
    }
  };
  await inflate(chunks, consume, () => `in interlace pass ${pass + 1} of 7`, slicer);
  if (pass < 7) throw new CorruptImageError(`the interlaced PNG's image data ends in pass ${pass + 1} of 7`);
  if (k === 1) return { width, height, channels: 4, data: out };
  const scale = narrow ? 255 : 1;
  for (let by = 0; by < outHeight; by++) {
    const rows = Math.min(k, height - by * k);
    for (let bx = 0; bx < outWidth; bx++) {
      const box = by * outWidth + bx;
      const n = rows * Math.min(k, width - bx * k);
      const a = alphas![box]!;
      if (a === 0) continue;
      out[box * 4] = Math.min(255, Math.round((colour![box * 3]! * scale) / a));
      out[box * 4 + 1] = Math.min(255, Math.round((colour![box * 3 + 1]! * scale) / a));
      out[box * 4 + 2] = Math.min(255, Math.round((colour![box * 3 + 2]! * scale) / a));
      out[box * 4 + 3] = Math.round(a / n);
    }
  }
  return { width: outWidth, height: outHeight, channels: 4, data: out };
}
