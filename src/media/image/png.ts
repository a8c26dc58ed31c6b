/**
 * PNG structure check before decoding: the chunk layout, every chunk's CRC, a valid IHDR (bit
 * depth and colour type combination), at least one IDAT and the IEND. photon's decoder does not
 * check every CRC, and a tampered file should not get resized versions just because its pixels
 * still inflate; PngSuite's x*.png files are the reference cases.
 */
import { CorruptImageError } from "./errors";

const CRC_TABLE = (() => {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  return table;
})();

function crc32(bytes: Uint8Array, from: number, to: number): number {
  let c = -1;
  for (let i = from; i < to; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

const u32 = (b: Uint8Array, at: number) => ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;

/** Allowed bit depths per colour type (PNG spec, table 11.1). */
const DEPTHS: Record<number, number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };

export function validatePng(bytes: Uint8Array): { width: number; height: number } {
  let pos = 8;
  let width = 0;
  let height = 0;
  let sawIdat = false;
  for (let index = 0; ; index++) {
    if (pos + 12 > bytes.length) throw new CorruptImageError("the PNG ends before its IEND chunk (truncated)");
    const length = u32(bytes, pos);
    const type = String.fromCharCode(...bytes.subarray(pos + 4, pos + 8));
    if (!/^[A-Za-z]{4}$/.test(type)) throw new CorruptImageError(`PNG chunk ${index} has an invalid type`);
    if (length > 0x7fffffff || pos + 12 + length > bytes.length) throw new CorruptImageError(`the PNG chunk ${type} is truncated`);
    if (crc32(bytes, pos + 4, pos + 8 + length) !== u32(bytes, pos + 8 + length))
      throw new CorruptImageError(`the PNG chunk ${type} fails its CRC`);
    if (index === 0) {
      if (type !== "IHDR" || length !== 13) throw new CorruptImageError("the PNG does not start with an IHDR chunk");
      width = u32(bytes, pos + 8);
      height = u32(bytes, pos + 12);
      const depth = bytes[pos + 16]!;
      const colourType = bytes[pos + 17]!;
      if (width === 0 || height === 0 || width > 0x7fffffff || height > 0x7fffffff)
        throw new CorruptImageError("the PNG declares an invalid size");
      if (!DEPTHS[colourType]?.includes(depth))
        throw new CorruptImageError(`the PNG has an invalid colour type ${colourType} / bit depth ${depth}`);
      if (bytes[pos + 18] !== 0 || bytes[pos + 19] !== 0 || bytes[pos + 20]! > 1)
        throw new CorruptImageError("the PNG names an unknown compression, filter or interlace method");
    } else if (type === "IDAT") {
      sawIdat = true;
    } else if (type === "IEND") {
      if (!sawIdat) throw new CorruptImageError("the PNG has no image data (IDAT)");
      return { width, height };
    } else if (type === "IHDR") {
      throw new CorruptImageError("the PNG has a second IHDR chunk");
    }
    pos += 12 + length;
  }
}
