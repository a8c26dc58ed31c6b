/**
 * Where a photo was taken (issue 11, privacy): inspection photos carry the GPS position of critical
 * plants in their EXIF. The resized versions never carry EXIF (they are encoded from pixels); the
 * original is kept as uploaded unless the client asks `StripLocation=true`, which removes the EXIF
 * GPS directory (its entries and values zeroed, the directory emptied) and XMP packets (which may
 * repeat the position) from JPEG, PNG, TIFF and WebP originals. HEIC and AVIF keep their layout (their
 * item locations are absolute offsets): the Exif item's GPS directory is emptied in place and an XMP
 * item naming a position is overwritten by an empty packet of the same length. Everything else in
 * the file stays as it was.
 */
import type { ImageFormat } from "./formats";
import { asText, heifItems, jpegSegments, pngChunks, riffChunks, type Span } from "./segments";

/** Formats whose location this service can find and remove. GIF and BMP carry none. */
export const LOCATION_FORMATS: ReadonlySet<ImageFormat> = new Set(["jpeg", "png", "tiff", "webp", "heic", "avif"]);

const GPS_IFD = 0x8825;
const TYPE_SIZES: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8 };
const XMP = "http://ns.adobe.com/xap/1.0/\u0000";

/**
 * Whether a TIFF structure's GPS directory has entries; with `erase`, empties it in place (entries and
 * their values zeroed, the count set to 0). Offsets are checked against the structure, so a malformed
 * one is left alone.
 */
function tiffGps(tiff: Uint8Array, erase: boolean): boolean {
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
    if (!erase) return entries > 0;
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

const EXIF = "Exif\u0000\u0000";
const PNG_XMP = "XML:com.adobe.xmp";
const namesPosition = (packet: Uint8Array) => /GPS(Latitude|Longitude)/.test(asText(packet));

/**
 * Finds the location in `bytes`; with `erase` (on a copy the caller owns), also empties EXIF GPS
 * directories in place. Returns whether a position was found and the spans to drop (XMP packets, a
 * PNG's eXIf chunk) when erasing.
 */
function scan(format: ImageFormat, bytes: Uint8Array, erase: boolean): { found: boolean; drop: Span[] } {
  let found = false;
  const drop: Span[] = [];
  if (format === "tiff") return { found: tiffGps(bytes, erase), drop };
  if (format === "jpeg") {
    for (const s of jpegSegments(bytes)) {
      if (s.marker !== 0xe1) continue;
      if (asText(s.body.subarray(0, 6)) === EXIF) found = tiffGps(s.body.subarray(6), erase) || found;
      else if (asText(s.body.subarray(0, XMP.length)) === XMP) {
        found = namesPosition(s.body) || found;
        drop.push(s);
      }
    }
  } else if (format === "webp") {
    for (const c of riffChunks(bytes)) {
      if (c.type === "EXIF") {
        // Usually a bare TIFF structure; some writers keep JPEG's "Exif\0\0" in front.
        const tiff = asText(c.body.subarray(0, 6)) === EXIF ? c.body.subarray(6) : c.body;
        found = tiffGps(tiff, erase) || found;
      } else if (c.type === "XMP ") {
        found = namesPosition(c.body) || found;
        drop.push(c);
      }
    }
  } else if (format === "heic" || format === "avif") {
    for (const item of heifItems(bytes)) {
      if (item.type === "Exif" && item.body.length > 4) {
        // A 4-byte offset to the TIFF header, then EXIF (with or without "Exif\0\0").
        const skip = 4 + new DataView(item.body.buffer, item.body.byteOffset).getUint32(0);
        found = tiffGps(item.body.subarray(Math.min(skip, item.body.length)), erase) || found;
      } else if (item.type === "mime" && item.contentType === "application/rdf+xml" && namesPosition(item.body)) {
        found = true;
        if (erase) blankXmp(item.body);
      }
    }
  } else if (format === "png") {
    for (const c of pngChunks(bytes)) {
      if (c.type === "eXIf") {
        // The whole EXIF chunk goes (its CRC would no longer match an edited body).
        found = tiffGps(c.body, false) || found;
        drop.push(c);
      } else if ((c.type === "iTXt" || c.type === "tEXt") && asText(c.body.subarray(0, PNG_XMP.length)) === PNG_XMP) {
        found = namesPosition(c.body) || found;
        drop.push(c);
      }
    }
  }
  return { found, drop };
}

/** Whether the file carries a position (an EXIF GPS directory with entries, or an XMP packet naming one). Reads, never copies. */
export function hasLocation(format: ImageFormat, bytes: Uint8Array): boolean {
  return LOCATION_FORMATS.has(format) && scan(format, bytes, false).found;
}

/**
 * The file without its location: a copy (the caller's bytes are not changed). `removed` says whether
 * there was a position to remove.
 */
export function stripLocation(format: ImageFormat, input: Uint8Array): { bytes: Uint8Array; removed: boolean } {
  if (!LOCATION_FORMATS.has(format)) return { bytes: input, removed: false };
  const bytes = input.slice();
  const { found, drop } = scan(format, bytes, true);
  return { bytes: drop.length === 0 ? bytes : format === "webp" ? withoutRiff(bytes, drop) : without(bytes, drop), removed: found };
}

const EMPTY_XMP = '<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"/>';
const XMP_END = '<?xpacket end="w"?>';

/** Overwrites an XMP packet in place with an empty one of the same length (XMP allows whitespace padding). */
function blankXmp(packet: Uint8Array): void {
  packet.fill(0x20);
  if (packet.length < EMPTY_XMP.length + XMP_END.length) return;
  packet.set(new TextEncoder().encode(EMPTY_XMP), 0);
  packet.set(new TextEncoder().encode(XMP_END), packet.length - XMP_END.length);
}

/** A WebP without some of its chunks: the RIFF size follows, and VP8X no longer announces XMP. */
function withoutRiff(bytes: Uint8Array, ranges: readonly Span[]): Uint8Array {
  const out = without(bytes, ranges);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  view.setUint32(4, out.length - 8, true);
  const vp8x = [...riffChunks(out)].find((c) => c.type === "VP8X");
  if (vp8x && vp8x.body.length > 0) vp8x.body[0] = vp8x.body[0]! & ~0x04;
  return out;
}

function without(bytes: Uint8Array, ranges: readonly Span[]): Uint8Array {
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
