/**
 * Where a photo was taken (issue 11, privacy): inspection photos carry the GPS position of critical
 * plants in their EXIF. The resized versions never carry EXIF (they are encoded from pixels); the
 * original is kept as uploaded unless the client asks `StripLocation=true`, which removes the EXIF
 * GPS directory (its entries and values zeroed, the directory emptied) and XMP packets (which may
 * repeat the position) from JPEG, PNG and TIFF originals. Everything else in the file stays as it was.
 */
import type { ImageFormat } from "./formats";

/** Formats whose location this service can find and remove. GIF and BMP carry none. */
export const LOCATION_FORMATS: ReadonlySet<ImageFormat> = new Set(["jpeg", "png", "tiff"]);
const NO_METADATA: ReadonlySet<ImageFormat> = new Set(["gif", "bmp", "ico", "svg"]);

const GPS_IFD = 0x8825;
const TYPE_SIZES: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8 };
const XMP = "http://ns.adobe.com/xap/1.0/\u0000";

/**
 * Empties the GPS directory of a TIFF structure in place; returns whether one with entries existed.
 * Offsets are checked against the structure, so a malformed one is left alone.
 */
function clearTiffGps(tiff: Uint8Array): boolean {
  if (tiff.length < 8) return false;
  const little = tiff[0] === 0x49 && tiff[1] === 0x49;
  if (!little && !(tiff[0] === 0x4d && tiff[1] === 0x4d)) return false;
  const view = new DataView(tiff.buffer, tiff.byteOffset, tiff.byteLength);
  const ifd0 = view.getUint32(4, little);
  if (ifd0 + 2 > tiff.length) return false;
  const count = view.getUint16(ifd0, little);
  for (let i = 0; i < count; i++) {
    const entry = ifd0 + 2 + i * 12;
    if (entry + 12 > tiff.length) return false;
    if (view.getUint16(entry, little) !== GPS_IFD) continue;
    const gps = view.getUint32(entry + 8, little);
    if (gps + 2 > tiff.length) return false;
    const entries = view.getUint16(gps, little);
    if (gps + 2 + entries * 12 > tiff.length) return false;
    for (let j = 0; j < entries; j++) {
      const at = gps + 2 + j * 12;
      const size = (TYPE_SIZES[view.getUint16(at + 2, little)] ?? 0) * view.getUint32(at + 4, little);
      if (size > 4) {
        const offset = view.getUint32(at + 8, little);
        if (offset + size <= tiff.length) tiff.fill(0, offset, offset + size);
      }
      tiff.fill(0, at, at + 12);
    }
    view.setUint16(gps, 0, little);
    return entries > 0;
  }
  return false;
}

function segmentsOfJpeg(bytes: Uint8Array): { marker: number; start: number; end: number }[] {
  const segments: { marker: number; start: number; end: number }[] = [];
  let pos = 2;
  while (pos + 4 <= bytes.length && bytes[pos] === 0xff) {
    const marker = bytes[pos + 1]!;
    if (marker === 0xda || marker === 0xd9) break; // start of scan: no metadata after it
    const length = (bytes[pos + 2]! << 8) | bytes[pos + 3]!;
    if (length < 2 || pos + 2 + length > bytes.length) break;
    segments.push({ marker, start: pos, end: pos + 2 + length });
    pos += 2 + length;
  }
  return segments;
}

const text = (bytes: Uint8Array, from: number, length: number) => String.fromCharCode(...bytes.subarray(from, Math.min(bytes.length, from + length)));

/** Whether the file carries a position (an EXIF GPS directory with entries, or an XMP packet naming one). */
export function hasLocation(format: ImageFormat, bytes: Uint8Array): boolean {
  if (!LOCATION_FORMATS.has(format)) return false;
  return stripLocation(format, bytes).removed;
}

/**
 * The file without its location. A copy: the caller's bytes are not changed. `removed` says whether
 * there was anything to remove.
 */
export function stripLocation(format: ImageFormat, input: Uint8Array): { bytes: Uint8Array; removed: boolean } {
  if (NO_METADATA.has(format)) return { bytes: input, removed: false };
  const bytes = input.slice();
  if (format === "tiff") return { bytes, removed: clearTiffGps(bytes) };
  if (format === "jpeg") {
    let removed = false;
    const drop: { start: number; end: number }[] = [];
    for (const s of segmentsOfJpeg(bytes)) {
      if (s.marker !== 0xe1) continue;
      if (text(bytes, s.start + 4, 6) === "Exif\u0000\u0000") removed = clearTiffGps(bytes.subarray(s.start + 10, s.end)) || removed;
      else if (text(bytes, s.start + 4, XMP.length) === XMP) {
        removed = removed || /GPS(Latitude|Longitude)/.test(text(bytes, s.start + 4, s.end - s.start - 4));
        drop.push(s);
      }
    }
    return { bytes: drop.length === 0 ? bytes : without(bytes, drop), removed };
  }
  if (format === "png") {
    let removed = false;
    const drop: { start: number; end: number }[] = [];
    let pos = 8;
    while (pos + 12 <= bytes.length) {
      const length = ((bytes[pos]! << 24) | (bytes[pos + 1]! << 16) | (bytes[pos + 2]! << 8) | bytes[pos + 3]!) >>> 0;
      const type = text(bytes, pos + 4, 4);
      const end = pos + 12 + length;
      if (end > bytes.length) break;
      if (type === "eXIf") {
        // The whole EXIF chunk goes (its CRC would no longer match an edited body).
        removed = clearTiffGps(bytes.slice(pos + 8, pos + 8 + length)) || removed;
        drop.push({ start: pos, end });
      } else if ((type === "iTXt" || type === "tEXt") && text(bytes, pos + 8, 17) === "XML:com.adobe.xmp") {
        removed = removed || /GPS(Latitude|Longitude)/.test(text(bytes, pos + 8, length));
        drop.push({ start: pos, end });
      }
      if (type === "IEND") break;
      pos = end;
    }
    return { bytes: drop.length === 0 ? bytes : without(bytes, drop), removed };
  }
  throw new Error(`stripLocation does not read ${format}`);
}

function without(bytes: Uint8Array, ranges: { start: number; end: number }[]): Uint8Array {
  const kept = bytes.length - ranges.reduce((n, r) => n + (r.end - r.start), 0);
  const out = new Uint8Array(kept);
  let from = 0;
  let at = 0;
  for (const r of ranges) {
    out.set(bytes.subarray(from, r.start), at);
    at += r.start - from;
    from = r.end;
  }
  out.set(bytes.subarray(from), at);
  return out;
}
