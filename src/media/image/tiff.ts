/**
 * Baseline TIFF, decoded a strip or tile at a time into boxes (reduce.ts): the first image of a
 * classic (not Big) TIFF, in strips or tiles, uncompressed, LZW, Deflate or PackBits, with or without
 * the horizontal predictor; bilevel, grey, palette, RGB and CMYK, 1 to 16 bits per sample, with or
 * without alpha, chunky or planar. Strips of interleaved samples are inflated as a stream and their
 * rows handled as they arrive, so a scan stored as one huge strip still needs only a few rows of
 * memory; tiles and planar strips are inflated one at a time (each bounded by TIFF_MAX_CHUNK_BYTES).
 *
 * No maintained package decodes TIFF without holding the whole image (UTIF and its forks return
 * full RGBA: 192 MiB at 48 MP), hence this file (docs/decisions.md, "Image decoding").
 */
import { Unzlib } from "fflate";
import { CorruptImageError, UnsupportedImageError, ImageTooLargeError } from "./errors";
import { LzwStrings } from "./lzw";
import { BoxReducer } from "./reduce";
import type { Pixels } from "./resample";
import { rowSplitter, type Sink } from "./rows";
import { Slicer } from "../../pkg/slicer";

/** The largest tile or planar strip inflated at once (a chunky strip streams and has no limit). */
export const TIFF_MAX_CHUNK_BYTES = 32 * 1024 * 1024;

const COMPRESSION: Record<number, string> = { 1: "none", 5: "lzw", 8: "deflate", 32946: "deflate", 32773: "packbits" };

interface Ifd {
  width: number;
  height: number;
  bits: number;
  samples: number;
  compression: string;
  photometric: number;
  planar: boolean;
  predictor: number;
  /** Alpha is the first extra sample: 1 associated (premultiplied), 2 unassociated, 0 none. */
  alpha: number;
  colorMap: number[] | null;
  /** Strips (tileWidth = width) or tiles: their size, offsets and byte counts. */
  tileWidth: number;
  tileHeight: number;
  offsets: number[];
  counts: number[];
  little: boolean;
  iccProfile: Uint8Array | null;
}

const TYPE_SIZE: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8 };

function readIfd(b: Uint8Array): Ifd {
  if (b.length < 8) throw new CorruptImageError("the TIFF ends inside its header");
  const little = b[0] === 0x49;
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const u16 = (at: number) => view.getUint16(at, little);
  const u32 = (at: number) => view.getUint32(at, little);
  if (u16(2) === 43) throw new UnsupportedImageError("BigTIFF is not decoded by this service");
  const ifd = u32(4);
  if (ifd + 2 > b.length) throw new CorruptImageError("the TIFF's first directory lies outside the file");
  const tags = new Map<number, { type: number; count: number; at: number }>();
  const entries = u16(ifd);
  if (ifd + 2 + entries * 12 > b.length) throw new CorruptImageError("the TIFF's first directory ends outside the file");
  for (let i = 0; i < entries; i++) {
    const e = ifd + 2 + i * 12;
    const type = u16(e + 2);
    const count = u32(e + 4);
    const size = (TYPE_SIZE[type] ?? 1) * count;
    const at = size <= 4 ? e + 8 : u32(e + 8);
    if (at + size > b.length) throw new CorruptImageError(`the TIFF's tag ${u16(e)} points outside the file`);
    tags.set(u16(e), { type, count, at });
  }
  const values = (tag: number): number[] => {
    const t = tags.get(tag);
    if (!t) return [];
    const out: number[] = [];
    for (let i = 0; i < t.count; i++) out.push(t.type === 3 ? u16(t.at + i * 2) : t.type === 4 ? u32(t.at + i * 4) : b[t.at + i]!);
    return out;
  };
  const one = (tag: number, otherwise?: number): number => {
    const v = values(tag)[0] ?? otherwise;
    if (v === undefined) throw new CorruptImageError(`the TIFF has no tag ${tag}`);
    return v;
  };
  const width = one(256);
  const height = one(257);
  const samples = one(277, 1);
  if (samples < 1 || samples > 8) throw new UnsupportedImageError(`a TIFF with ${samples} samples a pixel is not decoded (up to 8 are)`);
  const bitsList = values(258);
  const bits = bitsList[0] ?? 1;
  if (bitsList.some((v) => v !== bits)) throw new UnsupportedImageError("TIFF samples of different sizes are not decoded");
  if (![1, 2, 4, 8, 16].includes(bits)) throw new UnsupportedImageError(`${bits}-bit TIFF samples are not decoded`);
  if (one(339, 1) !== 1)
    throw new UnsupportedImageError("TIFF samples that are not unsigned integers (floating point, signed) are not decoded");
  const compressionCode = one(259, 1);
  const compression = COMPRESSION[compressionCode];
  if (!compression)
    throw new UnsupportedImageError(`TIFF compression ${compressionCode} is not decoded (none, LZW, Deflate and PackBits are)`);
  const photometric = one(262, samples >= 3 ? 2 : 1);
  if (![0, 1, 2, 3, 5].includes(photometric))
    throw new UnsupportedImageError(
      `TIFF photometric interpretation ${photometric} is not decoded (bilevel, grey, palette, RGB and CMYK are)`,
    );
  const colours = photometric === 2 ? 3 : photometric === 5 ? 4 : 1;
  if (samples < colours)
    throw new CorruptImageError(`the TIFF has ${samples} samples per pixel; its photometric interpretation needs ${colours}`);
  const extra = values(338);
  const alpha = samples > colours && (extra[0] === 1 || extra[0] === 2) ? extra[0] : 0;
  const tiled = tags.has(322);
  const tileWidth = tiled ? one(322) : width;
  const tileHeight = tiled ? one(323) : Math.min(one(278, height), height);
  const offsets = values(tiled ? 324 : 273);
  const counts = values(tiled ? 325 : 279);
  const planar = one(284, 1) === 2;
  const chunks =
    (tiled ? Math.ceil(width / tileWidth) * Math.ceil(height / tileHeight) : Math.ceil(height / tileHeight)) * (planar ? samples : 1);
  if (width === 0 || height === 0 || tileWidth === 0 || tileHeight === 0)
    throw new CorruptImageError("the TIFF has an empty image, strip or tile");
  if (offsets.length < chunks || counts.length < chunks)
    throw new CorruptImageError(`the TIFF lists ${offsets.length} of its ${chunks} ${tiled ? "tiles" : "strips"}`);
  const colorMap = photometric === 3 ? values(320) : null;
  if (colorMap && colorMap.length < 3 << bits)
    throw new CorruptImageError("the TIFF's colour map is shorter than its bits per sample need");
  const icc = tags.get(34675);
  return {
    width,
    height,
    bits,
    samples,
    compression,
    photometric,
    planar,
    predictor: one(317, 1),
    alpha,
    colorMap,
    tileWidth,
    tileHeight,
    offsets,
    counts,
    little,
    iccProfile: icc ? b.subarray(icc.at, icc.at + icc.count) : null,
  };
}

/** The TIFF's embedded ICC profile (tag 34675), or null. */
export function readTiffIcc(bytes: Uint8Array): Uint8Array | null {
  try {
    return readIfd(bytes).iccProfile;
  } catch {
    return null;
  }
}

// --- Decompression: each emits its output in pieces to `sink`, and gives the thread back every slice

/** Output bytes between two looks at the slicer. */
const CHECK_EVERY = 64 * 1024;

/**
 * Counts a decompressor's output on the slicer, as pixels (`pixelsPerByte`), and pauses when a slice
 * is spent. `wanted` is how much output the strip or tile needs: a decompressor stops there, since
 * LZW or PackBits data may go on (a few bytes of input can ask for thousands of bytes of output).
 */
class Progress {
  private pending = 0;
  /** Output bytes the current chunk needs. */
  wanted = Infinity;
  constructor(
    private readonly slicer: Slicer,
    private readonly pixelsPerByte: number,
  ) {}

  /** Whether enough output came since the last look to ask the slicer (cheap, for the hot loops). */
  due(bytes: number): boolean {
    this.pending += bytes;
    return this.pending >= CHECK_EVERY;
  }

  async settle(): Promise<void> {
    const units = this.pending * this.pixelsPerByte;
    this.pending = 0;
    if (this.slicer.spend(units)) await this.slicer.pause();
  }
}

async function stored(input: Uint8Array, sink: Sink, progress: Progress): Promise<void> {
  for (let at = 0; at < input.length; at += CHECK_EVERY) {
    const piece = input.subarray(at, at + CHECK_EVERY);
    sink(piece);
    if (progress.due(piece.length)) await progress.settle();
  }
}

async function packBits(input: Uint8Array, sink: Sink, progress: Progress): Promise<void> {
  const run = new Uint8Array(128);
  let total = 0;
  for (let i = 0; i < input.length && total < progress.wanted;) {
    const n = input[i++]!;
    let emitted = 0;
    if (n < 128) {
      const end = i + n + 1;
      if (end > input.length) throw new CorruptImageError("the TIFF's PackBits data ends inside a literal run");
      sink(input.subarray(i, end));
      emitted = end - i;
      i = end;
    } else if (n > 128) {
      if (i >= input.length) throw new CorruptImageError("the TIFF's PackBits data ends inside a repeat");
      const length = 257 - n;
      run.fill(input[i++]!, 0, length);
      sink(run.subarray(0, length));
      emitted = length;
    }
    total += emitted;
    if (progress.due(emitted)) await progress.settle();
  }
}

/** TIFF's LZW (MSB-first codes of 9 to 12 bits, widened one code early). */
async function lzw(input: Uint8Array, sink: Sink, progress: Progress): Promise<void> {
  const strings = new LzwStrings(256, 258, sink);
  let width = 9;
  let previous = -1;
  let bitBuffer = 0;
  let bitCount = 0;
  let pos = 0;
  let counted = 0;
  for (;;) {
    while (bitCount < width && pos < input.length) {
      bitBuffer = ((bitBuffer << 8) | input[pos++]!) >>> 0;
      bitCount += 8;
    }
    if (bitCount < width) break; // the data ends without an end code: what was decoded stands
    const code = (bitBuffer >>> (bitCount - width)) & ((1 << width) - 1);
    bitCount -= width;
    bitBuffer &= (1 << bitCount) - 1;
    if (code === 257) break;
    if (code === 256) {
      strings.clear();
      width = 9;
      previous = -1;
      continue;
    }
    if (previous < 0) {
      if (!strings.isRoot(code)) throw new CorruptImageError("the TIFF's LZW data starts with an undefined code");
    } else {
      if (code > strings.next || strings.next >= 4096) throw new CorruptImageError("the TIFF's LZW data has an undefined code");
      strings.add(previous, code);
    }
    strings.emit(code);
    previous = code;
    if (strings.next + 1 >= 1 << width && width < 12) width++;
    if (progress.due(strings.written - counted)) await progress.settle();
    counted = strings.written;
    if (strings.written >= progress.wanted) break;
  }
  strings.flush();
}

/** Compressed bytes pushed to the inflater at a time: at most about 4 MiB come out of one push. */
const INFLATE_SLICE = 4 * 1024;

async function inflate(input: Uint8Array, sink: Sink, progress: Progress): Promise<void> {
  let out = 0;
  const inflater = new Unzlib((data) => {
    out += data.length;
    sink(data);
  });
  try {
    let total = 0;
    for (let at = 0; at < input.length && total < progress.wanted; at += INFLATE_SLICE) {
      inflater.push(input.subarray(at, at + INFLATE_SLICE), at + INFLATE_SLICE >= input.length);
      total += out;
      if (progress.due(out)) await progress.settle();
      out = 0;
    }
    if (input.length === 0) inflater.push(new Uint8Array(0), true);
  } catch (error) {
    if (error instanceof CorruptImageError) throw error;
    throw new CorruptImageError(`the TIFF's Deflate data does not inflate (${error instanceof Error ? error.message : String(error)})`);
  }
}

function decompress(ifd: Ifd, input: Uint8Array, sink: Sink, progress: Progress): Promise<void> {
  if (ifd.compression === "none") return stored(input, sink, progress);
  if (ifd.compression === "packbits") return packBits(input, sink, progress);
  if (ifd.compression === "lzw") return lzw(input, sink, progress);
  return inflate(input, sink, progress);
}

// --- Rows to RGBA ----------------------------------------------------------------------------------

/**
 * Converts one row of `count` pixels (`samples` interleaved samples each, after decompression) to
 * RGBA in `out`. For planar data the caller interleaves the planes' rows first.
 */
function rowConverter(ifd: Ifd): (row: Uint8Array, count: number, out: Uint8Array) => void {
  const { bits, samples, photometric, little, colorMap, alpha } = ifd;
  const max = (1 << bits) - 1;
  // A sample scaled to 8 bits.
  const sample: (row: Uint8Array, index: number) => number =
    bits === 8
      ? (row, i) => row[i]!
      : bits === 16
        ? (row, i) => Math.round((little ? row[i * 2]! | (row[i * 2 + 1]! << 8) : (row[i * 2]! << 8) | row[i * 2 + 1]!) / 257)
        : (row, i) => {
            const bit = i * bits;
            return Math.round((((row[bit >> 3]! >> (8 - bits - (bit & 7))) & max) * 255) / max);
          };
  const raw = (row: Uint8Array, i: number) => {
    const bit = i * bits;
    return (row[bit >> 3]! >> (8 - bits - (bit & 7))) & max;
  };
  const alphaAt = photometric === 2 ? 3 : photometric === 5 ? 4 : 1;
  return (row, count, out) => {
    for (let x = 0, o = 0; x < count; x++, o += 4) {
      const base = x * samples;
      let r: number;
      let g: number;
      let b: number;
      if (photometric === 2) {
        r = sample(row, base);
        g = sample(row, base + 1);
        b = sample(row, base + 2);
      } else if (photometric === 3) {
        const index =
          bits === 16
            ? little
              ? row[base * 2]! | (row[base * 2 + 1]! << 8)
              : (row[base * 2]! << 8) | row[base * 2 + 1]!
            : bits === 8
              ? row[base]!
              : raw(row, base);
        const entries = 1 << bits;
        r = colorMap![index]! >> 8;
        g = colorMap![entries + index]! >> 8;
        b = colorMap![2 * entries + index]! >> 8;
      } else if (photometric === 5) {
        const k = 255 - sample(row, base + 3);
        r = Math.round(((255 - sample(row, base)) * k) / 255);
        g = Math.round(((255 - sample(row, base + 1)) * k) / 255);
        b = Math.round(((255 - sample(row, base + 2)) * k) / 255);
      } else {
        const v = sample(row, base);
        r = g = b = photometric === 0 ? 255 - v : v;
      }
      let a = 255;
      if (alpha) {
        a = sample(row, base + alphaAt);
        if (alpha === 1 && a > 0 && a < 255) {
          // Associated alpha: the colours were multiplied by it.
          r = Math.min(255, Math.round((r * 255) / a));
          g = Math.min(255, Math.round((g * 255) / a));
          b = Math.min(255, Math.round((b * 255) / a));
        }
      }
      out[o] = r;
      out[o + 1] = g;
      out[o + 2] = b;
      out[o + 3] = a;
    }
  };
}

/** Undoes the horizontal predictor (2) on one row of interleaved samples, in place. */
function unpredict(ifd: Ifd, row: Uint8Array, count: number, samples: number): void {
  if (ifd.predictor !== 2) return;
  if (ifd.bits === 8) {
    for (let i = samples; i < count * samples; i++) row[i] = (row[i]! + row[i - samples]!) & 255;
  } else if (ifd.bits === 16) {
    const view = new DataView(row.buffer, row.byteOffset, row.byteLength);
    for (let i = samples; i < count * samples; i++)
      view.setUint16(i * 2, (view.getUint16(i * 2, ifd.little) + view.getUint16((i - samples) * 2, ifd.little)) & 0xffff, ifd.little);
  }
}

/**
 * Decodes the first image of a TIFF, averaging `factor` x `factor` boxes into an RGBA image of
 * ceil(width / factor) x ceil(height / factor). Throws CorruptImageError for data that is short or
 * does not decompress, UnsupportedImageError for what is outside baseline (JPEG or CCITT
 * compression, YCbCr, floating point, BigTIFF).
 */
export async function decodeTiffReduced(bytes: Uint8Array, factor: number, slicer: Slicer = new Slicer()): Promise<Pixels> {
  const ifd = readIfd(bytes);
  if (ifd.predictor !== 1 && ifd.predictor !== 2) throw new UnsupportedImageError(`TIFF predictor ${ifd.predictor} is not decoded`);
  const { width, height, tileWidth, tileHeight, samples, bits, planar } = ifd;
  // Interleaved output is samples x bits a pixel; a planar plane's, bits.
  const progress = new Progress(slicer, 8 / (samples * bits));
  const planeProgress = new Progress(slicer, 8 / bits);
  const reducer = new BoxReducer(width, height, factor);
  const convert = rowConverter(ifd);
  const rgba = new Uint8Array(tileWidth * 4);
  const across = Math.ceil(width / tileWidth);
  const down = Math.ceil(height / tileHeight);
  const chunkOf = (index: number): Uint8Array => {
    const offset = ifd.offsets[index]!;
    const count = ifd.counts[index]!;
    if (offset + count > bytes.length)
      throw new CorruptImageError(
        `the TIFF's ${tileWidth === width ? "strip" : "tile"} ${index} lies outside the file (the file is truncated?)`,
      );
    return bytes.subarray(offset, offset + count);
  };
  // Interleaved samples: one row is tileWidth pixels of `samples` samples.
  const rowBytes = Math.ceil((tileWidth * samples * bits) / 8);
  // Planar: one plane's row.
  const planeRowBytes = Math.ceil((tileWidth * bits) / 8);
  const interleaved = planar ? new Uint8Array(rowBytes) : null;

  const addRow = (row: Uint8Array, y: number, x0: number) => {
    const count = Math.min(tileWidth, width - x0);
    convert(row, count, rgba);
    reducer.addRow(y, x0, rgba, 0, count, 4);
  };

  for (let ty = 0; ty < down; ty++) {
    const rows = Math.min(tileHeight, height - ty * tileHeight);
    for (let tx = 0; tx < across; tx++) {
      const index = ty * across + tx;
      if (!planar) {
        // Tiles are always tileHeight rows (padded); strips end with the image.
        const expected = tileWidth === width ? rows : tileHeight;
        const splitter = rowSplitter(rowBytes, expected, (row, r) => {
          if (r >= rows) return;
          unpredict(ifd, row, tileWidth, samples);
          addRow(row, ty * tileHeight + r, tx * tileWidth);
        });
        if (expected * rowBytes > TIFF_MAX_CHUNK_BYTES && tileWidth !== width)
          throw new ImageTooLargeError(
            `the TIFF's tiles are ${tileWidth}x${tileHeight}; tiles are decoded up to ${TIFF_MAX_CHUNK_BYTES / 2 ** 20} MiB`,
          );
        progress.wanted = expected * rowBytes;
        await decompress(ifd, chunkOf(index), splitter.sink, progress);
        await progress.settle();
        if (splitter.done() < rows)
          throw new CorruptImageError(
            `the TIFF's ${tileWidth === width ? "strip" : "tile"} ${index} ends after ${splitter.done()} of its ${rows} rows`,
          );
        continue;
      }
      // Planar: each plane's chunk whole, then rows interleaved from the planes.
      const planeRows = tileWidth === width ? rows : tileHeight;
      if (planeRows * planeRowBytes * samples > TIFF_MAX_CHUNK_BYTES)
        throw new ImageTooLargeError(
          `the TIFF's planar ${tileWidth === width ? "strips" : "tiles"} hold ${planeRows} rows of ${tileWidth} pixels; ` +
            `they are decoded up to ${TIFF_MAX_CHUNK_BYTES / 2 ** 20} MiB`,
        );
      const planes: Uint8Array[] = [];
      for (let s = 0; s < samples; s++) {
        const plane = new Uint8Array(planeRows * planeRowBytes);
        planeProgress.wanted = plane.length;
        let filled = 0;
        await decompress(
          ifd,
          chunkOf(s * across * down + index),
          (piece) => {
            const take = Math.min(piece.length, plane.length - filled);
            plane.set(piece.subarray(0, take), filled);
            filled += take;
          },
          planeProgress,
        );
        if (filled < rows * planeRowBytes)
          throw new CorruptImageError(`the TIFF's plane ${s} ends after ${Math.floor(filled / planeRowBytes)} of ${rows} rows`);
        for (let r = 0; r < rows; r++) unpredict(ifd, plane.subarray(r * planeRowBytes, (r + 1) * planeRowBytes), tileWidth, 1);
        planes.push(plane);
      }
      if (bits < 8) throw new UnsupportedImageError("planar TIFFs of fewer than 8 bits per sample are not decoded");
      const size = bits / 8;
      for (let r = 0; r < rows; r++) {
        for (let x = 0; x < tileWidth; x++) {
          for (let s = 0; s < samples; s++) {
            for (let byte = 0; byte < size; byte++)
              interleaved![(x * samples + s) * size + byte] = planes[s]![r * planeRowBytes + x * size + byte]!;
          }
        }
        addRow(interleaved!, ty * tileHeight + r, tx * tileWidth);
        if (slicer.spend(tileWidth)) await slicer.pause();
      }
    }
    reducer.completeRowsBefore((ty + 1) * tileHeight);
  }
  return reducer.result();
}
