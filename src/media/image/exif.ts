/**
 * EXIF orientation: phones store photos as the sensor saw them and say in EXIF how to turn them.
 * Browsers honour the tag when they show the original; the resized versions carry no EXIF, so the
 * pipeline turns their pixels instead, and reports the dimensions as shown.
 */

/** The orientation (1..8) from an APP1 segment's payload ("Exif\0\0" + TIFF), or undefined. */
export function readExifOrientation(segment: Uint8Array): number | undefined {
  if (segment.length < 14 || String.fromCharCode(...segment.subarray(0, 4)) !== "Exif") return undefined;
  return readTiffTag(segment.subarray(6), 0x0112);
}

/** A SHORT or LONG value of `tag` in a TIFF structure's first IFD, or undefined. */
export function readTiffTag(tiff: Uint8Array, tag: number): number | undefined {
  if (tiff.length < 8) return undefined;
  const little = tiff[0] === 0x49 && tiff[1] === 0x49;
  if (!little && !(tiff[0] === 0x4d && tiff[1] === 0x4d)) return undefined;
  const view = new DataView(tiff.buffer, tiff.byteOffset, tiff.byteLength);
  const ifd = view.getUint32(4, little);
  if (ifd + 2 > tiff.length) return undefined;
  const count = view.getUint16(ifd, little);
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + i * 12;
    if (entry + 12 > tiff.length) return undefined;
    if (view.getUint16(entry, little) !== tag) continue;
    const type = view.getUint16(entry + 2, little);
    if (type === 3) return view.getUint16(entry + 8, little);
    if (type === 4) return view.getUint32(entry + 8, little);
    return undefined;
  }
  return undefined;
}

/** Whether an orientation swaps width and height (the 90 and 270 degree ones). */
export function swapsAxes(orientation: number): boolean {
  return orientation >= 5 && orientation <= 8;
}

/**
 * Returns the pixels turned and/or mirrored as EXIF `orientation` says they should be shown.
 * Works on any channel count; orientation 1 (or unknown) returns the input unchanged.
 */
export function applyOrientation(image: { width: number; height: number; channels: number; data: Uint8Array }, orientation: number) {
  if (orientation < 2 || orientation > 8) return image;
  const { width: w, height: h, channels: ch, data } = image;
  const swap = swapsAxes(orientation);
  const outW = swap ? h : w;
  const outH = swap ? w : h;
  const out = new Uint8Array(data.length);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      // Where the stored pixel (x, y) lands when shown.
      let dx: number, dy: number;
      switch (orientation) {
        case 2:
          dx = w - 1 - x;
          dy = y;
          break;
        case 3:
          dx = w - 1 - x;
          dy = h - 1 - y;
          break;
        case 4:
          dx = x;
          dy = h - 1 - y;
          break;
        case 5:
          dx = y;
          dy = x;
          break;
        case 6:
          dx = h - 1 - y;
          dy = x;
          break;
        case 7:
          dx = h - 1 - y;
          dy = w - 1 - x;
          break;
        default:
          dx = y;
          dy = w - 1 - x;
          break; // 8
      }
      const from = (y * w + x) * ch;
      const to = (dy * outW + dx) * ch;
      for (let c = 0; c < ch; c++) out[to + c] = data[from + c]!;
    }
  }
  return { width: outW, height: outH, channels: ch, data: out };
}
