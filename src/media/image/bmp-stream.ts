/**
 * BMP read row by row (issue 11): an uncompressed BMP's rows are addressable in the file, so each is
 * converted and averaged into boxes of `factor` x `factor` pixels (as png-stream.ts does), and memory
 * holds the file and the reduced image whatever the BMP's size. Read here: BI_RGB at 1, 4, 8, 24 and
 * 32 bits, BI_BITFIELDS (and BI_ALPHABITFIELDS) at 16 and 32 bits, bottom-up or top-down. RLE-compressed
 * BMPs (rows not addressable) go to photon, within its memory limit.
 */
import { CorruptImageError } from "./errors";
import type { Pixels } from "./resample";

const u16 = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8);
const u32 = (b: Uint8Array, at: number) => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
const i32 = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24);

export interface BmpLayout {
  width: number;
  height: number;
  topDown: boolean;
  bits: number;
  compression: number;
  dataOffset: number;
  /** Whether rows can be read here (uncompressed, or bit fields). */
  streamable: boolean;
}

export function bmpLayout(b: Uint8Array): BmpLayout {
  if (b.length < 30) throw new CorruptImageError("the BMP header is truncated");
  const headerSize = u32(b, 14);
  const core = headerSize === 12;
  const width = core ? u16(b, 18) : i32(b, 18);
  const rawHeight = core ? u16(b, 20) : i32(b, 22);
  const bits = core ? u16(b, 24) : u16(b, 28);
  const compression = core ? 0 : u32(b, 30);
  const streamable = (compression === 0 && [1, 4, 8, 24, 32].includes(bits)) || ((compression === 3 || compression === 6) && (bits === 16 || bits === 32));
  return { width, height: Math.abs(rawHeight), topDown: rawHeight < 0, bits, compression, dataOffset: u32(b, 10), streamable };
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
export function decodeBmpReduced(b: Uint8Array, factor: number): Pixels {
  const layout = bmpLayout(b);
  const { width, height, topDown, bits, compression, dataOffset } = layout;
  if (!layout.streamable) throw new Error("decodeBmpReduced reads uncompressed and bit-field BMPs only");
  if (width <= 0 || height <= 0) throw new CorruptImageError("the BMP declares an invalid size");
  const headerSize = u32(b, 14);
  const core = headerSize === 12;
  const stride = Math.ceil((width * bits) / 32) * 4;
  if (dataOffset + stride * height > b.length) throw new CorruptImageError(`the BMP's pixel data ends early (${b.length - dataOffset} of ${stride * height} bytes)`);
  // Palette: after the header, 3 (core) or 4 bytes per entry, BGR.
  const paletteAt = 14 + headerSize;
  const entry = core ? 3 : 4;
  const paletteSize = bits <= 8 ? Math.min(1 << bits, Math.floor((dataOffset - paletteAt) / entry)) : 0;
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
    for (let y = 0; y < height && !alpha32; y++) for (let x = 0, at = dataOffset + y * stride + 3; x < width; x++, at += 4) if (b[at] !== 0) alpha32 = true;
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
        const channel = (f: { mask: number; shift: number; max: number }, otherwise: number) => (f.max === 0 ? otherwise : Math.round((((v & f.mask) >>> f.shift) * 255) / f.max));
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
  }
  return { width: outWidth, height: outHeight, channels: 4, data: out };
}
