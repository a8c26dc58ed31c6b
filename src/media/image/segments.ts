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

/** The parts one after the other, in one new array. */
export function concatBytes(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * A RIFF file's (WebP's) top-level chunks, or the chunks from `start` (an animation frame's), with
 * their four-character type; a span includes the pad byte.
 */
export function* riffChunks(bytes: Uint8Array, start = 12): Generator<Span & { type: string }> {
  let pos = start;
  while (pos + 8 <= bytes.length) {
    const size = (bytes[pos + 4]! | (bytes[pos + 5]! << 8) | (bytes[pos + 6]! << 16) | (bytes[pos + 7]! << 24)) >>> 0;
    if (pos + 8 + size > bytes.length) return;
    const end = Math.min(bytes.length, pos + 8 + size + (size & 1));
    yield { type: asText(bytes.subarray(pos, pos + 4)), start: pos, end, body: bytes.subarray(pos + 8, pos + 8 + size) };
    pos = end;
  }
}

export interface HeifItem {
  id: number;
  /** The item type: hvc1, av01, grid, Exif, mime, ... */
  type: string;
  /** A mime item's content type. */
  contentType: string | null;
  /** Its data, when it is one extent in the file or in idat; otherwise empty. */
  body: Uint8Array;
  /** Its properties (ipma's associations into ipco), in order. */
  properties: HeifProperty[];
  /** Its references by type (iref): dimg lists a grid's tiles, auxl points an alpha plane at its image. */
  references: Map<string, number[]>;
}

export interface HeifProperty {
  type: string;
  /** The payload (a full box's version and flags included). */
  body: Uint8Array;
  /** The whole box, header included, as it can be written into another file. */
  box: Uint8Array;
  /** Marked essential: a reader that does not know it must not show the item. */
  essential: boolean;
}

export interface HeifFile {
  /** The primary item (pitm): the picture the file shows. */
  primary: number | null;
  items: Map<number, HeifItem>;
}

interface Box {
  type: string;
  /** The payload (after the size and type; a full box's version and flags included). */
  body: Uint8Array;
  /** The whole box. */
  box: Uint8Array;
}

function* isoBoxes(bytes: Uint8Array): Generator<Box> {
  let pos = 0;
  while (pos + 8 <= bytes.length) {
    let size = readU32(bytes, pos);
    let header = 8;
    if (size === 1 && pos + 16 <= bytes.length) {
      size = readU32(bytes, pos + 8) * 2 ** 32 + readU32(bytes, pos + 12);
      header = 16;
    } else if (size === 0) size = bytes.length - pos;
    if (size < header || pos + size > bytes.length) return;
    yield {
      type: asText(bytes.subarray(pos + 4, pos + 8)),
      body: bytes.subarray(pos + header, pos + size),
      box: bytes.subarray(pos, pos + size),
    };
    pos += size;
  }
}

const readU32 = (b: Uint8Array, at: number) => ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
const readU16 = (b: Uint8Array, at: number) => (b[at]! << 8) | b[at + 1]!;

/** A HEIF (HEIC, AVIF) file's items; see `heifFile`. */
export function heifItems(bytes: Uint8Array): HeifItem[] {
  return [...heifFile(bytes).items.values()];
}

/**
 * A HEIF (HEIC, AVIF) file's meta box read: its primary item, and every item with its type (iinf),
 * data (iloc), properties (iprp) and references (iref). Bodies are subarrays of `bytes`, so writing
 * into an item's body edits the file in place. Lenient: a malformed box ends its walk.
 */
export function heifFile(bytes: Uint8Array): HeifFile {
  const items = new Map<number, HeifItem>();
  const meta = [...isoBoxes(bytes)].find((b) => b.type === "meta");
  if (!meta || meta.body.length < 4) return { primary: null, items };
  const children = [...isoBoxes(meta.body.subarray(4))];
  const pitm = children.find((b) => b.type === "pitm")?.body;
  const primary = !pitm || pitm.length < 6 ? null : pitm[0] === 0 ? readU16(pitm, 4) : pitm.length >= 8 ? readU32(pitm, 4) : null;
  const iinf = children.find((b) => b.type === "iinf");
  if (iinf && iinf.body.length >= 6) {
    const skip = iinf.body[0] === 0 ? 6 : 8;
    for (const infe of isoBoxes(iinf.body.subarray(skip))) {
      const b = infe.body;
      if (infe.type !== "infe" || b[0]! < 2 || b.length < 12) continue;
      const wide = b[0] === 3;
      const id = wide ? readU32(b, 4) : readU16(b, 4);
      const at = wide ? 10 : 8;
      const type = asText(b.subarray(at, at + 4));
      let contentType: string | null = null;
      if (type === "mime") {
        const nameEnd = b.indexOf(0, at + 4);
        const typeEnd = nameEnd < 0 ? -1 : b.indexOf(0, nameEnd + 1);
        if (typeEnd > nameEnd) contentType = asText(b.subarray(nameEnd + 1, typeEnd));
      }
      items.set(id, { id, type, contentType, body: new Uint8Array(0), properties: [], references: new Map() });
    }
  }
  const idat = children.find((b) => b.type === "idat")?.body ?? new Uint8Array(0);
  const iloc = children.find((b) => b.type === "iloc")?.body;
  if (iloc && iloc.length >= 8) {
    const version = iloc[0]!;
    const offsetSize = iloc[4]! >> 4;
    const lengthSize = iloc[4]! & 15;
    const baseSize = iloc[5]! >> 4;
    const indexSize = version >= 1 ? iloc[5]! & 15 : 0;
    let pos = 6;
    const read = (n: number): number => {
      let v = 0;
      for (let i = 0; i < n; i++) v = v * 256 + (iloc[pos + i] ?? 0);
      pos += n;
      return v;
    };
    const count = read(version < 2 ? 2 : 4);
    for (let i = 0; i < count && pos < iloc.length; i++) {
      const id = read(version < 2 ? 2 : 4);
      const method = version >= 1 ? read(2) & 15 : 0;
      read(2); // data reference index
      const base = read(baseSize);
      const extents = read(2);
      const spans: [number, number][] = [];
      for (let e = 0; e < extents; e++) {
        if (indexSize) read(indexSize);
        spans.push([base + read(offsetSize), read(lengthSize)]);
      }
      const item = items.get(id);
      const source = method === 0 ? bytes : method === 1 ? idat : null;
      if (!item || !source || spans.length !== 1) continue;
      const [offset, length] = spans[0]!;
      if (offset + length <= source.length) item.body = source.subarray(offset, length === 0 ? source.length : offset + length);
    }
  }
  const iprp = children.find((b) => b.type === "iprp");
  if (iprp) {
    const boxes = [...isoBoxes(iprp.body)];
    const ipco = boxes.find((b) => b.type === "ipco");
    const properties = ipco ? [...isoBoxes(ipco.body)] : [];
    for (const ipma of boxes.filter((b) => b.type === "ipma")) {
      const b = ipma.body;
      if (b.length < 8) continue;
      const wideId = b[0]! >= 1;
      const wideIndex = (b[3]! & 1) === 1;
      let pos = 8;
      for (let n = readU32(b, 4); n > 0 && pos < b.length; n--) {
        const id = wideId ? readU32(b, pos) : readU16(b, pos);
        pos += wideId ? 4 : 2;
        const item = items.get(id);
        for (let count = b[pos++] ?? 0; count > 0 && pos < b.length; count--) {
          const value = wideIndex ? readU16(b, pos) : b[pos]!;
          pos += wideIndex ? 2 : 1;
          const index = value & (wideIndex ? 0x7fff : 0x7f);
          const property = properties[index - 1]; // 0 means none; ipco is numbered from 1
          if (item && property) item.properties.push({ ...property, essential: value >> (wideIndex ? 15 : 7) === 1 });
        }
      }
    }
  }
  const iref = children.find((b) => b.type === "iref");
  if (iref && iref.body.length >= 4) {
    const wide = iref.body[0] === 1;
    const size = wide ? 4 : 2;
    const read = (b: Uint8Array, at: number) => (wide ? readU32(b, at) : readU16(b, at));
    for (const reference of isoBoxes(iref.body.subarray(4))) {
      const b = reference.body;
      if (b.length < size + 2) continue;
      const from = items.get(read(b, 0));
      const count = readU16(b, size);
      if (!from || b.length < size + 2 + count * size) continue;
      const to = Array.from({ length: count }, (_, i) => read(b, size + 2 + i * size));
      from.references.set(reference.type, [...(from.references.get(reference.type) ?? []), ...to]);
    }
  }
  return { primary, items };
}
