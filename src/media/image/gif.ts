/**
 * GIF, first frame, decoded row by row into boxes (reduce.ts): the frame's LZW codes are expanded
 * straight into rows of colour indices, each turned into RGBA and averaged as it completes, so memory
 * is the file, one row and the reduced image. An interlaced frame stores its rows out of order
 * (every 8th, then the 4th, 2nd and the rest); its indices are kept (one byte a pixel, up to
 * GIF_INTERLACED_MAX_PIXELS) and handed over in order at the end. The frame is placed on the logical
 * screen; what it does not cover is transparent, as is its transparent colour.
 */
import { CorruptImageError, ImageTooLargeError } from "./errors";
import { LzwStrings } from "./lzw";
import { BoxReducer } from "./reduce";
import type { Pixels } from "./resample";
import { rowSplitter } from "./rows";
import { Slicer } from "../../pkg/slicer";

/** An interlaced GIF keeps one byte per pixel until its last pass: 48 MiB at this limit. */
export const GIF_INTERLACED_MAX_PIXELS = 48_000_000;

interface Frame {
  left: number;
  top: number;
  width: number;
  height: number;
  interlaced: boolean;
  palette: Uint8Array;
  transparent: number;
  minCodeSize: number;
  /** Offset of the first data sub-block (its length byte). */
  data: number;
}

function firstFrame(b: Uint8Array): { screenWidth: number; screenHeight: number; frame: Frame } {
  if (b.length < 13) throw new CorruptImageError("the GIF ends inside its header");
  const screenWidth = b[6]! | (b[7]! << 8);
  const screenHeight = b[8]! | (b[9]! << 8);
  let pos = 13;
  let globalPalette: Uint8Array | null = null;
  if (b[10]! & 0x80) {
    const size = 3 << ((b[10]! & 7) + 1);
    globalPalette = b.subarray(pos, pos + size);
    pos += size;
  }
  let transparent = -1;
  const skipSubBlocks = () => {
    while (pos < b.length && b[pos] !== 0) pos += b[pos]! + 1;
    pos++;
  };
  while (pos < b.length) {
    const kind = b[pos++]!;
    if (kind === 0x3b) break;
    if (kind === 0x21) {
      const label = b[pos++];
      if (label === 0xf9 && b[pos] === 4 && pos + 5 < b.length) transparent = b[pos + 1]! & 1 ? b[pos + 4]! : -1;
      skipSubBlocks();
      continue;
    }
    if (kind !== 0x2c) throw new CorruptImageError(`the GIF has an unknown block (0x${kind.toString(16)}) before its first frame`);
    if (pos + 9 > b.length) break;
    const left = b[pos]! | (b[pos + 1]! << 8);
    const top = b[pos + 2]! | (b[pos + 3]! << 8);
    const width = b[pos + 4]! | (b[pos + 5]! << 8);
    const height = b[pos + 6]! | (b[pos + 7]! << 8);
    const packed = b[pos + 8]!;
    pos += 9;
    let palette = globalPalette;
    if (packed & 0x80) {
      const size = 3 << ((packed & 7) + 1);
      palette = b.subarray(pos, pos + size);
      pos += size;
    }
    if (!palette) throw new CorruptImageError("the GIF's first frame has no colour table");
    if (pos >= b.length) break;
    const minCodeSize = b[pos++]!;
    if (minCodeSize < 2 || minCodeSize > 11) throw new CorruptImageError(`the GIF's LZW minimum code size is ${minCodeSize}`);
    return {
      screenWidth,
      screenHeight,
      frame: { left, top, width, height, interlaced: (packed & 0x40) !== 0, palette, transparent, minCodeSize, data: pos },
    };
  }
  throw new CorruptImageError("the GIF ends before its first frame");
}

/** Output between two looks at the slicer: a code stands for up to 4095 indices. */
const CHECK_EVERY = 64 * 1024;

/**
 * Expands a frame's LZW data (LSB-first codes) into `sink` in pieces; stops after `total` indices.
 * Every slice's worth of indices it gives the thread back (slice.ts).
 */
async function expand(b: Uint8Array, frame: Frame, total: number, sink: (piece: Uint8Array) => void, slicer: Slicer): Promise<number> {
  const clear = 1 << frame.minCodeSize;
  const end = clear + 1;
  const strings = new LzwStrings(clear, end + 1, sink);
  let width = frame.minCodeSize + 1;
  let previous = -1;
  let bits = 0;
  let count = 0;
  let pos = frame.data;
  let blockEnd = pos;
  let counted = 0;
  done: for (;;) {
    while (count < width) {
      if (pos >= blockEnd) {
        if (pos >= b.length || b[pos] === 0) break done; // the data ends (a missing end code is tolerated, as browsers do)
        blockEnd = pos + 1 + b[pos]!;
        pos++;
        if (blockEnd > b.length) throw new CorruptImageError("the GIF ends inside its first frame's data");
      }
      bits |= b[pos++]! << count;
      count += 8;
    }
    const code = bits & ((1 << width) - 1);
    bits >>>= width;
    count -= width;
    if (code === clear) {
      width = frame.minCodeSize + 1;
      strings.clear();
      previous = -1;
      continue;
    }
    if (code === end) break;
    if (previous < 0) {
      if (!strings.isRoot(code)) throw new CorruptImageError("the GIF's LZW data starts with an undefined code");
    } else {
      if (code > strings.next) throw new CorruptImageError("the GIF's LZW data has an undefined code");
      if (strings.next < 4096) {
        strings.add(previous, code);
        if (strings.next === 1 << width && width < 12) width++;
      } else if (code === strings.next) {
        throw new CorruptImageError("the GIF's LZW table is full and a code refers past it");
      }
    }
    strings.emit(code);
    previous = code;
    if (strings.written >= total) break;
    if (strings.written - counted >= CHECK_EVERY) {
      await slicer.step(strings.written - counted);
      counted = strings.written;
    }
  }
  strings.flush();
  return strings.written;
}

/** The order an interlaced frame stores its rows in: row index in storage -> row in the picture. */
function interlacedRow(index: number, height: number): number {
  const passes: [number, number][] = [
    [0, 8],
    [4, 8],
    [2, 4],
    [1, 2],
  ];
  for (const [start, step] of passes) {
    const rows = Math.ceil(Math.max(0, height - start) / step);
    if (index < rows) return start + index * step;
    index -= rows;
  }
  return -1;
}

/**
 * Decodes a GIF's first frame on its logical screen, averaging `factor` x `factor` boxes into an RGBA
 * image of ceil(screenWidth / factor) x ceil(screenHeight / factor). Throws CorruptImageError for
 * data that is cut short or not valid LZW.
 */
export async function decodeGifReduced(b: Uint8Array, factor: number, slicer: Slicer = new Slicer()): Promise<Pixels> {
  const { screenWidth, screenHeight, frame } = firstFrame(b);
  const { width, height, palette, transparent } = frame;
  if (width === 0 || height === 0) throw new CorruptImageError("the GIF's first frame is empty");
  // The limits are checked against the logical screen (the header's size); the frame is what is decoded.
  if (width * height > screenWidth * screenHeight)
    throw new ImageTooLargeError(`the GIF's first frame (${width}x${height}) is larger than its screen (${screenWidth}x${screenHeight})`);
  if (frame.interlaced && width * height > GIF_INTERLACED_MAX_PIXELS) {
    throw new ImageTooLargeError(
      `the GIF's first frame is interlaced and ${width}x${height}; interlaced GIFs are decoded up to ${GIF_INTERLACED_MAX_PIXELS} pixels`,
    );
  }
  const reducer = new BoxReducer(screenWidth, screenHeight, factor);
  const colours = palette.length / 3;
  const rgba = new Uint8Array(width * 4);
  const addRow = (indices: Uint8Array, y: number) => {
    for (let x = 0, o = 0; x < width; x++, o += 4) {
      const index = indices[x]!;
      if (index === transparent || index >= colours) {
        rgba[o + 3] = 0;
        continue;
      }
      rgba[o] = palette[index * 3]!;
      rgba[o + 1] = palette[index * 3 + 1]!;
      rgba[o + 2] = palette[index * 3 + 2]!;
      rgba[o + 3] = 255;
    }
    if (frame.left < screenWidth) reducer.addRow(frame.top + y, frame.left, rgba, 0, width, 4);
  };
  const total = width * height;
  let written: number;
  if (frame.interlaced) {
    const indices = new Uint8Array(total);
    let at = 0;
    written = await expand(
      b,
      frame,
      total,
      (piece) => {
        const take = Math.min(piece.length, total - at);
        indices.set(piece.subarray(0, take), at);
        at += take;
      },
      slicer,
    );
    const rows = Math.floor(Math.min(written, total) / width);
    // Rows the data did not reach stay transparent; the frame is still reported as cut short below.
    for (let stored = 0; stored < rows; stored++) {
      addRow(indices.subarray(stored * width, (stored + 1) * width), interlacedRow(stored, height));
      await slicer.step(width);
    }
  } else {
    const splitter = rowSplitter(width, height, (row, y) => {
      addRow(row, y);
      reducer.completeRowsBefore(frame.top + y + 1);
    });
    written = await expand(b, frame, total, splitter.sink, slicer);
  }
  if (written < total) throw new CorruptImageError(`the GIF's first frame ends after ${Math.floor(written / width)} of its ${height} rows`);
  return reducer.result();
}
