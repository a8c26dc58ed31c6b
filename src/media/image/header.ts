/**
 * Image dimensions read from the headers, before anything is decoded: the pixel limits are checked
 * against these, so a decompression bomb (a tiny file that declares 64000 x 64000 pixels) is never
 * handed to a decoder. A header that cannot be read is an integrity failure.
 */
import { CorruptImageError } from "./errors";
import { readExifOrientation, readTiffTag, swapsAxes } from "./exif";
import type { ImageFormat } from "./formats";
import { validatePng } from "./png";
import { heifFile } from "./segments";

export interface ImageHeader {
  /** Stored pixel dimensions (before EXIF orientation); null when the format does not say (SVG). */
  width: number | null;
  height: number | null;
  /** EXIF orientation of a JPEG (1..8), else 1. */
  orientation: number;
  /** JPEG only: whether it is progressive (all its coefficients must be held while decoding). */
  progressive: boolean;
}

const u16be = (b: Uint8Array, at: number) => (b[at]! << 8) | b[at + 1]!;
const u16le = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8);
const u32be = (b: Uint8Array, at: number) => ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
const i32le = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24);

function need(bytes: Uint8Array, length: number, what: string): void {
  if (bytes.length < length) throw new CorruptImageError(`the ${what} header is truncated`);
}

function plain(width: number, height: number): ImageHeader {
  if (width <= 0 || height <= 0) throw new CorruptImageError("the header declares an empty image");
  return { width, height, orientation: 1, progressive: false };
}

function jpegHeader(b: Uint8Array): ImageHeader {
  let orientation = 1;
  for (let pos = 2; pos + 4 <= b.length;) {
    if (b[pos] !== 0xff) throw new CorruptImageError(`expected a JPEG marker at byte ${pos}`);
    const marker = b[pos + 1]!;
    if (marker === 0xff) {
      pos++;
      continue;
    }
    if (marker === 0xd8 || marker === 0xd9 || marker === 0xda) break;
    const length = u16be(b, pos + 2);
    if (length < 2 || pos + 2 + length > b.length) break;
    const segment = b.subarray(pos + 4, pos + 2 + length);
    if (marker === 0xe1) orientation = readExifOrientation(segment) ?? orientation;
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (segment.length < 5) break;
      const header = plain(u16be(segment, 3), u16be(segment, 1));
      return { ...header, orientation: orientation >= 1 && orientation <= 8 ? orientation : 1, progressive: marker === 0xc2 };
    }
    pos += 2 + length;
  }
  throw new CorruptImageError("the JPEG has no frame header (SOF) before its image data");
}

function webpHeader(b: Uint8Array): ImageHeader {
  need(b, 30, "WebP");
  const chunk = String.fromCharCode(...b.subarray(12, 16));
  if (chunk === "VP8 ") {
    if (b[23] !== 0x9d || b[24] !== 0x01 || b[25] !== 0x2a) throw new CorruptImageError("the VP8 frame has no start code");
    return plain(u16le(b, 26) & 0x3fff, u16le(b, 28) & 0x3fff);
  }
  if (chunk === "VP8L") {
    if (b[20] !== 0x2f) throw new CorruptImageError("the VP8L bitstream has no signature");
    const bits = b[21]! | (b[22]! << 8) | (b[23]! << 16) | (b[24]! << 24);
    return plain((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (chunk === "VP8X") return plain((b[24]! | (b[25]! << 8) | (b[26]! << 16)) + 1, (b[27]! | (b[28]! << 8) | (b[29]! << 16)) + 1);
  throw new CorruptImageError(`unknown WebP chunk '${chunk}'`);
}

function bmpHeader(b: Uint8Array): ImageHeader {
  need(b, 26, "BMP");
  if (u16le(b, 14) === 12) return plain(u16le(b, 18), u16le(b, 20));
  // A negative height means rows are stored top-down.
  return plain(i32le(b, 18), Math.abs(i32le(b, 22)));
}

function tiffHeader(b: Uint8Array): ImageHeader {
  const width = readTiffTag(b, 256);
  const height = readTiffTag(b, 257);
  if (width === undefined || height === undefined) throw new CorruptImageError("the TIFF's first image has no width or height");
  const orientation = readTiffTag(b, 274) ?? 1;
  return { ...plain(width, height), orientation: orientation >= 1 && orientation <= 8 ? orientation : 1 };
}

function icoHeader(b: Uint8Array): ImageHeader {
  const count = u16le(b, 4);
  need(b, 6 + count * 16, "ICO");
  // The largest of the icons it holds (a width or height byte of 0 means 256).
  let width = 0;
  let height = 0;
  for (let i = 0; i < count; i++) {
    const w = b[6 + i * 16] || 256;
    const h = b[7 + i * 16] || 256;
    if (w * h > width * height) [width, height] = [w, h];
  }
  return plain(width, height);
}

/**
 * HEIC and AVIF (ISO base media files): the largest `ispe` (image spatial extents) property in
 * meta/iprp/ipco. Grid images list their tiles too; the largest entry is the whole picture. The irot
 * and imir properties (rotation and mirroring for display; iPhones rotate portrait photos) become the
 * EXIF orientation that does the same.
 */
function isobmffHeader(b: Uint8Array): ImageHeader {
  let best: [number, number] | undefined;
  let rotation = 0;
  let mirror: number | undefined;
  const walk = (from: number, to: number, depth: number) => {
    for (let pos = from; pos + 8 <= to;) {
      let size = u32be(b, pos);
      const type = String.fromCharCode(...b.subarray(pos + 4, pos + 8));
      if (size === 0) size = to - pos;
      if (size < 8 || pos + size > to) return;
      if (type === "meta" && depth === 0) walk(pos + 12, pos + size, 1);
      else if (type === "iprp" || type === "ipco") walk(pos + 8, pos + size, depth + 1);
      else if (type === "irot" && size >= 9) rotation = b[pos + 8]! & 3;
      else if (type === "imir" && size >= 9) mirror = b[pos + 8]! & 1;
      else if (type === "ispe" && size >= 20) {
        const w = u32be(b, pos + 12);
        const h = u32be(b, pos + 16);
        if (!best || w * h > best[0] * best[1]) best = [w, h];
      }
      pos += size;
    }
  };
  walk(0, b.length, 0);
  if (!best) throw new CorruptImageError("the HEIF file has no image size (ispe)");
  // The primary item's transformations in the order its properties list them (the order they apply
  // in); a file without item associations has at most one of each, rotation first.
  const file = heifFile(b);
  const own = (file.primary === null ? undefined : file.items.get(file.primary))?.properties.filter(
    (p) => p.type === "irot" || p.type === "imir",
  );
  const steps: Transform[] = own?.length
    ? own.map((p) => (p.type === "irot" ? ANTICLOCKWISE[(p.body[0] ?? 0) & 3]! : MIRROR[(p.body[0] ?? 0) & 1]!))
    : [ANTICLOCKWISE[rotation]!, ...(mirror === undefined ? [] : [MIRROR[mirror]!])];
  return { ...plain(best[0], best[1]), orientation: exifOrientation(steps) };
}

/** A turn or mirroring of the picture, as (x, y) -> (a x + b y, c x + d y), with y pointing down. */
type Transform = readonly [number, number, number, number];
/** irot: 0 to 3 quarter turns anticlockwise. */
const ANTICLOCKWISE: Transform[] = [
  [1, 0, 0, 1],
  [0, 1, -1, 0],
  [-1, 0, 0, -1],
  [0, -1, 1, 0],
];
/** imir: about the vertical axis (left and right swap), or the horizontal one (top and bottom). */
const MIRROR: Transform[] = [
  [-1, 0, 0, 1],
  [1, 0, 0, -1],
];
/** EXIF orientations 1 to 8 as transforms: 2 and 4 mirror, 3, 6 and 8 turn, 5 and 7 do both. */
const EXIF_ORIENTATIONS: Transform[] = [
  [1, 0, 0, 1],
  [-1, 0, 0, 1],
  [-1, 0, 0, -1],
  [1, 0, 0, -1],
  [0, 1, 1, 0],
  [0, -1, 1, 0],
  [0, -1, -1, 0],
  [0, 1, -1, 0],
];

/** The EXIF orientation doing `steps` one after the other. */
function exifOrientation(steps: Transform[]): number {
  const [a, b, c, d] = steps.reduce<Transform>(
    ([ma, mb, mc, md], [oa, ob, oc, od]) => [oa * ma + ob * mc, oa * mb + ob * md, oc * ma + od * mc, oc * mb + od * md],
    [1, 0, 0, 1],
  );
  return EXIF_ORIENTATIONS.findIndex((m) => m[0] === a && m[1] === b && m[2] === c && m[3] === d) + 1;
}

/** Reads (and for PNG, validates) the header of an image whose format `sniffFormat` found. */
export function readHeader(format: ImageFormat, bytes: Uint8Array): ImageHeader {
  switch (format) {
    case "jpeg":
      return jpegHeader(bytes);
    case "png": {
      const { width, height } = validatePng(bytes);
      return plain(width, height);
    }
    case "gif":
      need(bytes, 10, "GIF");
      return plain(u16le(bytes, 6), u16le(bytes, 8));
    case "webp":
      return webpHeader(bytes);
    case "bmp":
      return bmpHeader(bytes);
    case "tiff":
      return tiffHeader(bytes);
    case "ico":
      return icoHeader(bytes);
    case "heic":
    case "avif":
      return isobmffHeader(bytes);
    case "svg":
      return { width: null, height: null, orientation: 1, progressive: false };
  }
}

/** The dimensions as shown (EXIF orientation applied). */
export function displayedSize(header: ImageHeader): { width: number | null; height: number | null } {
  return swapsAxes(header.orientation) ? { width: header.height, height: header.width } : { width: header.width, height: header.height };
}
