/**
 * A JPEG decoder built for the isolate's 128 MB: it decodes at N/8 of the size (N = 1..8) in the
 * DCT domain, and a sequential (baseline) image is decoded block by block straight into
 * scaled-down component planes, so a 12 MP photo needs its compressed bytes plus about 1 MB of
 * planes at 2/8 scale, never the 36 MB of full-size pixels. Progressive images must keep every
 * coefficient until their last scan (2 bytes per sample), under a documented budget.
 *
 * Supported: baseline, extended sequential and progressive Huffman JPEG, 8-bit, 1 (grey) or 3
 * (YCbCr, or RGB by the Adobe marker) components, any sampling factors, restart intervals.
 * CMYK and YCCK (4 components, Adobe) are converted to RGB. Arithmetic coding, lossless,
 * hierarchical and 12-bit are refused as unsupported.
 */
import { CorruptImageError, ImageTooLargeError, UnsupportedImageError } from "../errors";
import { readExifOrientation } from "../exif";
import { buildHuffmanTable, type HuffmanTable } from "./huffman";
import { idctBlock, prepareQuantTable, ZIGZAG, type BlockSize } from "./idct";
import { planesToPixels, type DecodedPixels, type JpegPlanes } from "./color";
import { decodeScan, type ScanComponent } from "./scan";
import { runSliced, runWhole, Slicer, type Work } from "../../../pkg/slicer";

export type { DecodedPixels, JpegPlanes } from "./color";

export interface JpegDecodeOptions {
  /** Samples per 8x8 block side: the image is decoded at blockSize/8 of its size (rounded up). */
  blockSize: BlockSize;
  /** Refuse a progressive image whose coefficients would need more bytes than this. */
  maxCoefficientBytes: number;
}

interface FrameComponent extends ScanComponent {
  id: number;
  quantTable: number;
  blocksPerColumnForMcu: number;
}

interface Frame {
  width: number;
  height: number;
  progressive: boolean;
  components: FrameComponent[];
  maxH: number;
  maxV: number;
  mcusPerLine: number;
  mcusPerColumn: number;
}

const u16 = (data: Uint8Array, at: number) => (data[at]! << 8) | data[at + 1]!;

function readFrame(segment: Uint8Array, progressive: boolean, n: BlockSize): Frame {
  if (segment.length < 6) throw new CorruptImageError("the frame header is truncated");
  if (segment[0] !== 8) throw new UnsupportedImageError(`${segment[0]}-bit JPEG is not supported`);
  const height = u16(segment, 1);
  const width = u16(segment, 3);
  const count = segment[5]!;
  if (width === 0 || height === 0) throw new UnsupportedImageError("a JPEG whose height is defined later (DNL) is not supported");
  if (count !== 1 && count !== 3 && count !== 4) throw new UnsupportedImageError(`JPEG with ${count} components is not supported`);
  if (segment.length < 6 + count * 3) throw new CorruptImageError("the frame header is truncated");
  const components: FrameComponent[] = [];
  for (let i = 0; i < count; i++) {
    const at = 6 + i * 3;
    const h = segment[at + 1]! >> 4;
    const v = segment[at + 1]! & 15;
    if (h < 1 || h > 4 || v < 1 || v > 4) throw new CorruptImageError("a component has invalid sampling factors");
    components.push({
      id: segment[at]!,
      h,
      v,
      quantTable: segment[at + 2]! & 3,
      blocksPerLine: 0,
      blocksPerColumn: 0,
      blocksPerLineForMcu: 0,
      blocksPerColumnForMcu: 0,
      dcTable: undefined,
      acTable: undefined,
      pred: 0,
      coefficients: undefined,
      q: new Float32Array(64),
      plane: new Uint8Array(0),
      planeStride: 0,
    });
  }
  const maxH = Math.max(...components.map((c) => c.h));
  const maxV = Math.max(...components.map((c) => c.v));
  const mcusPerLine = Math.ceil(width / (8 * maxH));
  const mcusPerColumn = Math.ceil(height / (8 * maxV));
  for (const c of components) {
    c.blocksPerLine = Math.ceil(Math.ceil((width * c.h) / maxH) / 8);
    c.blocksPerColumn = Math.ceil(Math.ceil((height * c.v) / maxV) / 8);
    c.blocksPerLineForMcu = mcusPerLine * c.h;
    c.blocksPerColumnForMcu = mcusPerColumn * c.v;
    c.planeStride = c.blocksPerLineForMcu * n;
  }
  return { width, height, progressive, components, maxH, maxV, mcusPerLine, mcusPerColumn };
}

function allocate(frame: Frame, options: JpegDecodeOptions): void {
  const n = options.blockSize;
  if (frame.progressive) {
    const bytes = frame.components.reduce((sum, c) => sum + c.blocksPerLineForMcu * c.blocksPerColumnForMcu * 128, 0);
    if (bytes > options.maxCoefficientBytes) {
      throw new ImageTooLargeError(
        `a progressive JPEG of ${frame.width}x${frame.height} needs ${bytes} bytes of coefficients; the limit is ` +
          `${options.maxCoefficientBytes}`,
      );
    }
    for (const c of frame.components) c.coefficients = new Int16Array(c.blocksPerLineForMcu * c.blocksPerColumnForMcu * 64);
  }
  for (const c of frame.components) c.plane = new Uint8Array(c.planeStride * c.blocksPerColumnForMcu * n);
}

/** Tables given by DQT segments: 8- or 16-bit values, stored in natural order. */
function readQuantTables(segment: Uint8Array, tables: (Uint16Array | undefined)[]): void {
  for (let at = 0; at < segment.length;) {
    const precision = segment[at]! >> 4;
    const id = segment[at]! & 15;
    const size = precision === 0 ? 64 : 128;
    if (id > 3 || at + 1 + size > segment.length) throw new CorruptImageError("a quantisation table is invalid");
    const table = new Uint16Array(64);
    for (let k = 0; k < 64; k++) table[ZIGZAG[k]!] = precision === 0 ? segment[at + 1 + k]! : u16(segment, at + 1 + k * 2);
    tables[id] = table;
    at += 1 + size;
  }
}

function readHuffmanTables(segment: Uint8Array, dc: (HuffmanTable | undefined)[], ac: (HuffmanTable | undefined)[]): void {
  for (let at = 0; at < segment.length;) {
    const klass = segment[at]! >> 4;
    const id = segment[at]! & 15;
    if (klass > 1 || id > 3 || at + 17 > segment.length) throw new CorruptImageError("a Huffman table is invalid");
    const counts = segment.subarray(at + 1, at + 17);
    const total = counts.reduce((sum, x) => sum + x, 0);
    if (at + 17 + total > segment.length || total > 256) throw new CorruptImageError("a Huffman table is truncated");
    const table = buildHuffmanTable(counts, segment.subarray(at + 17, at + 17 + total));
    (klass === 0 ? dc : ac)[id] = table;
    at += 17 + total;
  }
}

interface DecoderState {
  frame: Frame | undefined;
  quant: (Uint16Array | undefined)[];
  dc: (HuffmanTable | undefined)[];
  ac: (HuffmanTable | undefined)[];
  restartInterval: number;
  adobeTransform: number | undefined;
  orientation: number;
  scans: number;
}

/** Tables may be redefined between scans; a progressive image dequantises once, with the first scan's. */
function prepareFrameTables(state: DecoderState, n: BlockSize): void {
  for (const c of state.frame!.components) {
    const table = state.quant[c.quantTable];
    if (!table) throw new CorruptImageError("a component uses a quantisation table that was never defined");
    c.q = prepareQuantTable(table, n);
  }
}

function* startScan(data: Uint8Array, segment: Uint8Array, offset: number, state: DecoderState, n: BlockSize): Work<number> {
  const frame = state.frame;
  if (!frame) throw new CorruptImageError("a scan comes before the frame header");
  if (state.scans === 0 || !frame.progressive) prepareFrameTables(state, n);
  const count = segment[0] ?? 0;
  if (count < 1 || count > 4 || segment.length < 1 + count * 2 + 3) throw new CorruptImageError("a scan header is invalid");
  const components: FrameComponent[] = [];
  for (let i = 0; i < count; i++) {
    const id = segment[1 + i * 2]!;
    const c = frame.components.find((x) => x.id === id);
    if (!c) throw new CorruptImageError("a scan names a component the frame does not have");
    const tables = segment[2 + i * 2]!;
    c.dcTable = state.dc[tables >> 4];
    c.acTable = state.ac[tables & 15];
    c.pred = 0;
    components.push(c);
  }
  const at = 1 + count * 2;
  const spectralStart = segment[at]!;
  const spectralEnd = segment[at + 1]!;
  const approx = segment[at + 2]!;
  if (frame.progressive && (spectralEnd > 63 || spectralStart > spectralEnd || (spectralStart > 0 && count !== 1))) {
    throw new CorruptImageError("a progressive scan header is invalid");
  }
  state.scans++;
  return yield* decodeScan(data, offset, {
    components,
    mcusPerLine: frame.mcusPerLine,
    mcusPerColumn: frame.mcusPerColumn,
    restartInterval: state.restartInterval,
    progressive: frame.progressive,
    spectralStart: frame.progressive ? spectralStart : 0,
    spectralEnd: frame.progressive ? spectralEnd : 63,
    approxHigh: approx >> 4,
    approxLow: approx & 15,
    blockSize: n,
  });
}

/** After the last progressive scan: every block's coefficients through the IDCT. */
function* finishProgressive(state: DecoderState, n: BlockSize): Work<void> {
  const frame = state.frame!;
  const block = new Int32Array(64);
  for (const c of frame.components) {
    const coefficients = c.coefficients!;
    const q = c.q;
    for (let row = 0; row < c.blocksPerColumnForMcu; row++) {
      for (let col = 0; col < c.blocksPerLineForMcu; col++) {
        const base = (row * c.blocksPerLineForMcu + col) * 64;
        for (let k = 0; k < 64; k++) block[k] = coefficients[base + k]!;
        idctBlock(n, block, q, c.plane, row * n * c.planeStride + col * n, c.planeStride);
      }
      // A row of blocks: what the IDCT and the copy cost, about 4 units a block.
      yield c.blocksPerLineForMcu * 4;
    }
    c.coefficients = undefined;
  }
}

/** Decodes `data` at blockSize/8 of its size (rounded up) to pixels, in one go. Throws the errors of ../errors. */
export function decodeJpeg(data: Uint8Array, options: JpegDecodeOptions): DecodedPixels {
  return planesToPixels(runWhole(jpegPlanes(data, options)));
}

/**
 * Decodes `data` at blockSize/8 of its size to its component planes (Y, Cb, Cr at their own
 * sampling), before colour conversion: the pipeline resizes these (1.5 samples per pixel at 4:2:0
 * instead of 3) and converts colour only at the target size. The thread is given back between
 * slices of the scans (slice.ts).
 */
export function decodeJpegPlanes(data: Uint8Array, options: JpegDecodeOptions, slicer: Slicer = new Slicer()): Promise<JpegPlanes> {
  return runSliced(jpegPlanes(data, options), slicer);
}

function* jpegPlanes(data: Uint8Array, options: JpegDecodeOptions): Work<JpegPlanes> {
  if (data[0] !== 0xff || data[1] !== 0xd8) throw new CorruptImageError("the data does not start with a JPEG SOI marker");
  const state: DecoderState = {
    frame: undefined,
    quant: [],
    dc: [],
    ac: [],
    restartInterval: 0,
    adobeTransform: undefined,
    orientation: 1,
    scans: 0,
  };
  let pos = 2;
  for (;;) {
    if (pos + 1 >= data.length) throw new CorruptImageError("the data ends before the EOI marker (truncated)");
    if (data[pos] !== 0xff) throw new CorruptImageError(`expected a marker at byte ${pos}`);
    const marker = data[pos + 1]!;
    pos += 2;
    if (marker === 0xff) {
      pos--; // fill byte
      continue;
    }
    if (marker === 0xd9) break;
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue;
    if (marker === 0xd8) throw new CorruptImageError("a second SOI marker");
    if (pos + 2 > data.length) throw new CorruptImageError("a segment is truncated");
    const length = u16(data, pos);
    if (length < 2 || pos + length > data.length) throw new CorruptImageError("a segment is truncated");
    const segment = data.subarray(pos + 2, pos + length);
    pos += length;
    switch (marker) {
      case 0xc0:
      case 0xc1:
      case 0xc2:
        if (state.frame) throw new CorruptImageError("a second frame header");
        state.frame = readFrame(segment, marker === 0xc2, options.blockSize);
        allocate(state.frame, options);
        break;
      case 0xc4:
        readHuffmanTables(segment, state.dc, state.ac);
        break;
      case 0xdb:
        readQuantTables(segment, state.quant);
        break;
      case 0xdd:
        state.restartInterval = segment.length >= 2 ? u16(segment, 0) : 0;
        break;
      case 0xda:
        pos = yield* startScan(data, segment, pos, state, options.blockSize);
        break;
      case 0xe1:
        if (!state.frame) state.orientation = readExifOrientation(segment) ?? state.orientation;
        break;
      case 0xee:
        if (segment.length >= 12 && String.fromCharCode(...segment.subarray(0, 5)) === "Adobe") state.adobeTransform = segment[11];
        break;
      default:
        if (marker >= 0xc3 && marker <= 0xcf && marker !== 0xc8) {
          throw new UnsupportedImageError(`JPEG process SOF${marker - 0xc0} (lossless, hierarchical or arithmetic-coded) is not supported`);
        }
    }
  }
  const frame = state.frame;
  if (!frame || state.scans === 0) throw new CorruptImageError("the JPEG has no frame or no scan");
  if (frame.progressive) yield* finishProgressive(state, options.blockSize);
  const n = options.blockSize;
  const [c0, c1, c2] = frame.components;
  return {
    width: Math.ceil((frame.width * n) / 8),
    height: Math.ceil((frame.height * n) / 8),
    maxH: frame.maxH,
    maxV: frame.maxV,
    planes: frame.components.map((c) => ({
      data: c.plane,
      stride: c.planeStride,
      width: Math.ceil((Math.ceil((frame.width * c.h) / frame.maxH) * n) / 8),
      height: Math.ceil((Math.ceil((frame.height * c.v) / frame.maxV) * n) / 8),
      h: c.h,
      v: c.v,
    })),
    // JFIF says YCbCr; only the Adobe marker's transform 0 (or components named R, G, B) says RGB.
    rgb: frame.components.length === 3 && (state.adobeTransform === 0 || (c0?.id === 0x52 && c1?.id === 0x47 && c2?.id === 0x42)),
    // Four components: CMYK, or YCCK when the Adobe marker says transform 2; Adobe stores them inverted.
    cmyk: frame.components.length === 4 ? { ycck: state.adobeTransform === 2, inverted: state.adobeTransform !== undefined } : null,
    orientation: state.orientation,
  };
}
