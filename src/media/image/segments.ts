/**
 * Walking a file's metadata containers, leniently: a malformed length ends the walk (the decoders and
 * png.ts report corruption; these walks only look for metadata). Shared by the colour profile reader
 * (icc.ts), the location scrubber (location.ts) and the row-by-row PNG decoder (png-stream.ts).
 */

export interface Span {
  /** First byte of the segment or chunk (its marker or length field). */
  start: number;
  /** One past its last byte. */
  end: number;
  /** Its payload. */
  body: Uint8Array;
}

/** A JPEG's segments before its image data (up to SOS or EOI), with their marker. */
export function* jpegSegments(bytes: Uint8Array): Generator<Span & { marker: number }> {
  let pos = 2;
  while (pos + 4 <= bytes.length && bytes[pos] === 0xff) {
    const marker = bytes[pos + 1]!;
    if (marker === 0xda || marker === 0xd9) return;
    const length = (bytes[pos + 2]! << 8) | bytes[pos + 3]!;
    if (length < 2 || pos + 2 + length > bytes.length) return;
    yield { marker, start: pos, end: pos + 2 + length, body: bytes.subarray(pos + 4, pos + 2 + length) };
    pos += 2 + length;
  }
}

/** A PNG's chunks up to and including IEND, with their type. */
export function* pngChunks(bytes: Uint8Array): Generator<Span & { type: string }> {
  let pos = 8;
  while (pos + 12 <= bytes.length) {
    const length = ((bytes[pos]! << 24) | (bytes[pos + 1]! << 16) | (bytes[pos + 2]! << 8) | bytes[pos + 3]!) >>> 0;
    const end = pos + 12 + length;
    if (end > bytes.length) return;
    const type = String.fromCharCode(bytes[pos + 4]!, bytes[pos + 5]!, bytes[pos + 6]!, bytes[pos + 7]!);
    yield { type, start: pos, end, body: bytes.subarray(pos + 8, pos + 8 + length) };
    if (type === "IEND") return;
    pos = end;
  }
}

const latin1 = new TextDecoder("latin1");

/** Bytes as text, one character per byte (for signatures and XMP packets of any size). */
export const asText = (bytes: Uint8Array): string => latin1.decode(bytes);
