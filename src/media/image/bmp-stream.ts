/**
 * BMP read row by row (issue 11): an uncompressed BMP's rows are addressable in the file, so each is
 * converted and averaged into boxes of `factor` x `factor` pixels (as png-stream.ts does), and memory
 * holds the file and the reduced image whatever the BMP's size. Read here: BI_RGB at 1, 4, 8, 16, 24
 * and 32 bits, BI_BITFIELDS (and BI_ALPHABITFIELDS) at 16 and 32 bits, bottom-up or top-down, and
 * run-length encoded ones (BI_RLE8, BI_RLE4), decoded in file order (bottom row first) into the same
 * box averager, one row at a time. BMPs wrapping a JPEG or PNG (BI_JPEG, BI_PNG) are not read.
 */
import { CorruptImageError, UnsupportedImageError } from "./errors";
import { BoxReducer } from "./reduce";
import type { Pixels } from "./resample";
import { Slicer } from "../../pkg/slicer";

const u16 = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8);
const u32 = (b: Uint8Array, at: number) => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
const i32 = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24);

export interface BmpLayout {
  /** 12 for an OS/2 core header (3-byte palette entries), 40 and more for Windows ones. */
  headerSize: number;
  width: number;
  height: number;
  topDown: boolean;
  bits: number;
  compression: number;
  dataOffset: number;
  /** Whether it is read here: uncompressed, bit fields, or RLE8 / RLE4. */
  readable: boolean;
}

export function bmpLayout(b: Uint8Array): BmpLayout {
  if (b.length < 30) throw new CorruptImageError("the BMP header is truncated");
  const headerSize = u32(b, 14);
  const core = headerSize === 12;
  const width = core ? u16(b, 18) : i32(b, 18);
  const rawHeight = core ? u16(b, 20) : i32(b, 22);
  const bits = core ? u16(b, 24) : u16(b, 28);
  const compression = core ? 0 : u32(b, 30);
  const readable =
    (compression === 0 && [1, 4, 8, 16, 24, 32].includes(bits)) ||
    ((compression === 3 || compression === 6) && (bits === 16 || bits === 32)) ||
    (compression === 1 && bits === 8) ||
    (compression === 2 && bits === 4);
  return { headerSize, width, height: Math.abs(rawHeight), topDown: rawHeight < 0, bits, compression, dataOffset: u32(b, 10), readable };
}

/** A bit-field mask's shift and the scale of its value to 0..255. */
function field(mask: number): { mask: number; shift: number; max: number } {
  if (mask === 0) return { mask: 0, shift: 0, max: 0 };
  let shift = 0;
  while (((mask >>> shift) & 1) === 0) shift++;
  return { mask: mask >>> 0, shift, max: mask >>> shift };
}

/**
 * Decodes an uncompressed (or bit-field) BMP, averaging `factor` x `factor` boxes (alpha-weighted) into
 * an RGBA image of ceil(width / factor) x ceil(height / factor). Throws CorruptImageError when the
 * pixel data is shorter than the header says.
 */
export async function decodeBmpReduced(b: Uint8Array, factor: number, slicer: Slicer = new Slicer()): Promise<Pixels> {
  const layout = bmpLayout(b);
  const { headerSize, width, height, topDown, bits, compression, dataOffset } = layout;
  if (!layout.readable) {
    const kind =
      compression === 4 ? "holds a JPEG" : compression === 5 ? "holds a PNG" : `uses compression ${compression} at ${bits} bits a pixel`;
    throw new UnsupportedImageError(`the BMP ${kind}, which is not read here`);
  }
  if (width <= 0 || height <= 0) throw new CorruptImageError("the BMP declares an invalid size");
  const { paletteAt, entry, paletteSize } = palette(layout);
  if (compression === 1 || compression === 2) return decodeRle(b, layout, factor, { paletteAt, entry, paletteSize }, slicer);
  const stride = Math.ceil((width * bits) / 32) * 4;
  if (dataOffset + stride * height > b.length)
    throw new CorruptImageError(`the BMP's pixel data ends early (${b.length - dataOffset} of ${stride * height} bytes)`);
  // Bit fields sit at offset 54 either way: inside a V4/V5 header, or right after a 40-byte one.
  const fields =
    compression === 3 || compression === 6
      ? [field(u32(b, 54)), field(u32(b, 58)), field(u32(b, 62)), field(compression === 6 || headerSize >= 56 ? u32(b, 66) : 0)]
      : bits === 16
        ? [field(0x7c00), field(0x03e0), field(0x001f), field(0)]
        : null;
  // 32-bit BI_RGB: the fourth byte is unused by the format, but some writers put alpha there; it is
  // honoured only when some pixel has a non-zero one (else every pixel would be transparent).
  let alpha32 = false;
  if (bits === 32 && compression === 0) {
    for (let y = 0; y < height && !alpha32; y++)
      for (let x = 0, at = dataOffset + y * stride + 3; x < width; x++, at += 4) if (b[at] !== 0) alpha32 = true;
  }
  const k = Math.max(1, Math.min(200, Math.floor(factor)));
  const outWidth = Math.ceil(width / k);
  const outHeight = Math.ceil(height / k);
  const out = new Uint8Array(outWidth * outHeight * 4);
  const sums = new Float64Array(outWidth * 4);
  const counts = new Uint32Array(outWidth);
  const add = (bx: number, r: number, g: number, bl: number, a: number) => {
    const s = bx * 4;
    sums[s] = sums[s]! + r * a;
    sums[s + 1] = sums[s + 1]! + g * a;
    sums[s + 2] = sums[s + 2]! + bl * a;
    sums[s + 3] = sums[s + 3]! + a;
    counts[bx] = counts[bx]! + 1;
  };
  for (let y = 0; y < height; y++) {
    const row = dataOffset + (topDown ? y : height - 1 - y) * stride;
    for (let x = 0; x < width; x++) {
      const bx = (x / k) | 0;
      if (bits <= 8) {
        const bit = x * bits;
        const index = (b[row + (bit >> 3)]! >> (8 - bits - (bit & 7))) & ((1 << bits) - 1);
        if (index >= paletteSize) throw new CorruptImageError(`a pixel names colour ${index}; the palette has ${paletteSize}`);
        const p = paletteAt + index * entry;
        add(bx, b[p + 2]!, b[p + 1]!, b[p]!, 255);
      } else if (bits === 24) {
        const p = row + x * 3;
        add(bx, b[p + 2]!, b[p + 1]!, b[p]!, 255);
      } else if (bits === 32 && !fields) {
        const p = row + x * 4;
        add(bx, b[p + 2]!, b[p + 1]!, b[p]!, alpha32 ? b[p + 3]! : 255);
      } else {
        const v = bits === 16 ? u16(b, row + x * 2) : u32(b, row + x * 4);
        const channel = (f: { mask: number; shift: number; max: number }, otherwise: number) =>
          f.max === 0 ? otherwise : Math.round((((v & f.mask) >>> f.shift) * 255) / f.max);
        add(bx, channel(fields![0]!, 0), channel(fields![1]!, 0), channel(fields![2]!, 0), channel(fields![3]!, 255));
      }
    }
    if ((y + 1) % k === 0 || y === height - 1) {
      const band = Math.floor(y / k);
      for (let bx = 0; bx < outWidth; bx++) {
        const n = counts[bx]!;
        const s = bx * 4;
        const a = sums[s + 3]!;
        const o = (band * outWidth + bx) * 4;
        if (n > 0 && a > 0) {
          out[o] = Math.round(sums[s]! / a);
          out[o + 1] = Math.round(sums[s + 1]! / a);
          out[o + 2] = Math.round(sums[s + 2]! / a);
          out[o + 3] = Math.round(a / n);
        }
      }
      sums.fill(0);
      counts.fill(0);
    }
    if (slicer.spend(width)) await slicer.pause();
  }
  return { width: outWidth, height: outHeight, channels: 4, data: out };
}

/** Where the palette is (after the header: 3 bytes an entry, BGR, in a core header, else 4) and how many colours it has. */
function palette(layout: BmpLayout): { paletteAt: number; entry: number; paletteSize: number } {
  const entry = layout.headerSize === 12 ? 3 : 4;
  const paletteAt = 14 + layout.headerSize;
  const paletteSize = layout.bits <= 8 ? Math.max(0, Math.min(1 << layout.bits, Math.floor((layout.dataOffset - paletteAt) / entry))) : 0;
  return { paletteAt, entry, paletteSize };
}

/**
 * A run-length encoded BMP (RLE8 or RLE4): runs of one index, literal runs, end of line, end of
 * bitmap, and deltas that skip pixels. Lines come bottom row first (top first in a top-down file);
 * each is averaged into the boxes as it ends. Pixels a delta or an early end skips are transparent,
 * as browsers show them.
 */
async function decodeRle(
  b: Uint8Array,
  layout: BmpLayout,
  factor: number,
  { paletteAt, entry, paletteSize }: { paletteAt: number; entry: number; paletteSize: number },
  slicer: Slicer,
): Promise<Pixels> {
  const { width, height, topDown, dataOffset } = layout;
  const four = layout.compression === 2;
  const reducer = new BoxReducer(width, height, factor);
  const indices = new Int16Array(width).fill(-1);
  const rgba = new Uint8Array(width * 4);
  let line = 0;
  let x = 0;
  const put = (index: number) => {
    if (index >= paletteSize) throw new CorruptImageError(`a pixel names colour ${index}; the palette has ${paletteSize}`);
    if (x < width) indices[x] = index; // a run past the line's end is cut there
    x++;
  };
  const endLine = () => {
    if (line >= height) return;
    for (let i = 0, o = 0; i < width; i++, o += 4) {
      const index = indices[i]!;
      if (index < 0) {
        rgba[o + 3] = 0;
        continue;
      }
      const p = paletteAt + index * entry;
      rgba[o] = b[p + 2]!;
      rgba[o + 1] = b[p + 1]!;
      rgba[o + 2] = b[p]!;
      rgba[o + 3] = 255;
    }
    const y = topDown ? line : height - 1 - line;
    reducer.addRow(y, 0, rgba, 0, width, 4);
    if (topDown) reducer.completeRowsBefore(y + 1);
    else reducer.completeRowsFrom(y);
    indices.fill(-1);
    line++;
    work += width;
  };
  let work = 0;
  let pos = dataOffset;
  const byte = () => {
    if (pos >= b.length) throw new CorruptImageError(`the BMP's run-length data ends early (line ${line + 1} of ${height})`);
    return b[pos++]!;
  };
  while (line < height) {
    const count = byte();
    const value = byte();
    if (count > 0) {
      // An encoded run: `count` pixels of one index (RLE4: two indices alternating). Past the line's
      // end it is cut, and costs nothing (2 bytes may not buy 255 steps of a loop).
      const last = Math.min(count, x >= width ? 2 : count);
      for (let i = 0; i < last; i++) put(four ? (i & 1 ? value & 15 : value >> 4) : value);
      x += count - last;
    } else if (value === 0) {
      endLine();
      x = 0;
    } else if (value === 1) {
      break;
    } else if (value === 2) {
      const dx = byte();
      const dy = byte();
      x += dx;
      for (let i = 0; i < dy && line < height; i++) endLine();
    } else {
      // A literal run of `value` indices, padded to an even number of bytes.
      const bytes = four ? Math.ceil(value / 2) : value;
      for (let i = 0; i < value; i++) {
        const at = four ? i >> 1 : i;
        if (pos + at >= b.length) throw new CorruptImageError(`the BMP's run-length data ends early (line ${line + 1} of ${height})`);
        const v = b[pos + at]!;
        put(four ? (i & 1 ? v & 15 : v >> 4) : v);
      }
      pos += bytes + (bytes & 1);
    }
    if (work > 0 && slicer.spend(work)) await slicer.pause();
    work = 0;
  }
  // After the end of the bitmap, the lines not reached are transparent.
  while (line < height) {
    endLine();
    if (slicer.spend(width)) await slicer.pause();
  }
  return reducer.result();
}
