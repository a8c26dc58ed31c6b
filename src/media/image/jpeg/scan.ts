/**
 * Decoding of one scan's entropy-coded data into blocks: sequential (baseline and extended) blocks
 * are complete after their scan and go straight to the IDCT; progressive blocks accumulate
 * coefficients over several scans (stb_image's and pdf.js's structure, JPEG annex G).
 */
import { CorruptImageError } from "../errors";
import { BitReader, type HuffmanTable } from "./huffman";
import { idctBlock, ZIGZAG, type BlockSize } from "./idct";
import type { Work } from "../../../pkg/slicer";

export interface ScanComponent {
  /** Blocks per line and column of this component alone (used by non-interleaved scans). */
  blocksPerLine: number;
  blocksPerColumn: number;
  /** Blocks per line of the MCU-padded grid: the row stride of `coefficients`, in blocks. */
  blocksPerLineForMcu: number;
  h: number;
  v: number;
  dcTable: HuffmanTable | undefined;
  acTable: HuffmanTable | undefined;
  pred: number;
  /** Progressive only: every block's 64 coefficients, MCU-padded grid, natural order. */
  coefficients: Int16Array | undefined;
  /** The quantisation table prepared for the block size (see idct.ts). */
  q: Float32Array;
  /** The scaled-down samples of this component and the plane's row stride. */
  plane: Uint8Array;
  planeStride: number;
}

export interface Scan {
  components: ScanComponent[];
  mcusPerLine: number;
  mcusPerColumn: number;
  restartInterval: number;
  progressive: boolean;
  spectralStart: number;
  spectralEnd: number;
  approxHigh: number;
  approxLow: number;
  /** Sequential scans hand each finished block to the IDCT, which writes blockSize^2 samples. */
  blockSize: BlockSize;
}

const block = new Int32Array(65);

function table(t: HuffmanTable | undefined): HuffmanTable {
  if (!t) throw new CorruptImageError("a scan uses a Huffman table that was never defined");
  return t;
}

function decodeSequential(reader: BitReader, c: ScanComponent, row: number, col: number, n: BlockSize): void {
  block.fill(0);
  const dc = reader.decode(table(c.dcTable));
  if (dc > 16) throw new CorruptImageError("a DC difference is out of range");
  c.pred += reader.receiveExtend(dc);
  block[0] = c.pred;
  const ac = table(c.acTable);
  for (let k = 1; k < 64;) {
    const fast = reader.peekFastAc(ac);
    if (fast !== 0) {
      // Run, size and value in one lookup.
      reader.skip(fast & 31);
      k += (fast >> 5) & 15;
      if (k > 63) throw new CorruptImageError("a block has more than 64 coefficients");
      block[ZIGZAG[k]!] = fast >> 10;
      k++;
      continue;
    }
    const rs = reader.decode(ac);
    const s = rs & 15;
    const r = rs >> 4;
    if (s === 0) {
      if (r < 15) break;
      k += 16;
      continue;
    }
    k += r;
    if (k > 63) throw new CorruptImageError("a block has more than 64 coefficients");
    block[ZIGZAG[k]!] = reader.receiveExtend(s);
    k++;
  }
  idctBlock(n, block, c.q, c.plane, row * n * c.planeStride + col * n, c.planeStride);
}

interface ProgressiveState {
  eobrun: number;
}

function decodeProgressive(reader: BitReader, scan: Scan, c: ScanComponent, row: number, col: number, state: ProgressiveState): void {
  const data = c.coefficients!;
  const base = (row * c.blocksPerLineForMcu + col) * 64;
  const al = scan.approxLow;
  if (scan.spectralStart === 0) {
    if (scan.approxHigh === 0) {
      const t = reader.decode(table(c.dcTable));
      if (t > 16) throw new CorruptImageError("a DC difference is out of range");
      c.pred += reader.receiveExtend(t);
      data[base] = c.pred * (1 << al);
    } else if (reader.bit()) {
      data[base] = data[base]! | (1 << al);
    }
    return;
  }
  const ac = table(c.acTable);
  const end = scan.spectralEnd;
  if (scan.approxHigh === 0) {
    if (state.eobrun > 0) {
      state.eobrun--;
      return;
    }
    for (let k = scan.spectralStart; k <= end;) {
      const rs = reader.decode(ac);
      const s = rs & 15;
      const r = rs >> 4;
      if (s === 0) {
        if (r < 15) {
          state.eobrun = (1 << r) - 1 + (r ? reader.bitsOf(r) : 0);
          break;
        }
        k += 16;
        continue;
      }
      k += r;
      if (k > 63) throw new CorruptImageError("a block has more than 64 coefficients");
      data[base + ZIGZAG[k]!] = reader.receiveExtend(s) * (1 << al);
      k++;
    }
    return;
  }
  // Successive approximation of AC coefficients: one more bit of each, plus newly nonzero ones.
  const bit = 1 << al;
  const refine = (index: number) => {
    const p = data[index]!;
    if (reader.bit() && (p & bit) === 0) data[index] = p > 0 ? p + bit : p - bit;
  };
  if (state.eobrun > 0) {
    state.eobrun--;
    for (let k = scan.spectralStart; k <= end; k++) {
      const index = base + ZIGZAG[k]!;
      if (data[index] !== 0) refine(index);
    }
    return;
  }
  let k = scan.spectralStart;
  while (k <= end) {
    const rs = reader.decode(ac);
    let s = rs & 15;
    let r = rs >> 4;
    if (s === 0) {
      if (r < 15) {
        state.eobrun = (1 << r) - 1 + (r ? reader.bitsOf(r) : 0);
        r = 64;
      }
    } else {
      if (s !== 1) throw new CorruptImageError("a refinement scan holds a coefficient larger than one bit");
      s = reader.bit() ? bit : -bit;
    }
    while (k <= end) {
      const index = base + ZIGZAG[k++]!;
      if (data[index] !== 0) {
        refine(index);
      } else {
        if (r === 0) {
          data[index] = s;
          break;
        }
        r--;
      }
    }
  }
}

/**
 * Work units a block costs, against the slicer's pixels (slice.ts): entropy decoding and a scaled IDCT
 * of a block cost about what the GIF decoder spends on 16 pixels.
 */
const BLOCK_UNITS = 16;
/** Units (MCUs, or blocks of a single-component scan) between two yields. */
const UNITS_PER_YIELD = 256;

/**
 * Decodes one scan starting at `offset`; returns the offset of the marker after it. Yields the work
 * done every {@link UNITS_PER_YIELD} units (slice.ts).
 */
export function* decodeScan(data: Uint8Array, offset: number, scan: Scan): Work<number> {
  const reader = new BitReader(data, offset);
  const state: ProgressiveState = { eobrun: 0 };
  const single = scan.components.length === 1;
  const first = scan.components[0]!;
  const total = single ? first.blocksPerLine * first.blocksPerColumn : scan.mcusPerLine * scan.mcusPerColumn;
  const perLine = single ? first.blocksPerLine : scan.mcusPerLine;
  const interval = scan.restartInterval > 0 ? scan.restartInterval : total;
  let marker = 0xd0;
  const blocksPerUnit = single ? 1 : scan.components.reduce((sum, c) => sum + c.h * c.v, 0);
  for (let unit = 0; unit < total; unit++) {
    if (unit > 0 && unit % UNITS_PER_YIELD === 0) yield UNITS_PER_YIELD * blocksPerUnit * BLOCK_UNITS;
    if (unit > 0 && unit % interval === 0) {
      reader.restart(marker);
      marker = marker === 0xd7 ? 0xd0 : marker + 1;
      state.eobrun = 0;
      for (const c of scan.components) c.pred = 0;
    }
    const mcuRow = (unit / perLine) | 0;
    const mcuCol = unit - mcuRow * perLine;
    if (single) {
      if (scan.progressive) decodeProgressive(reader, scan, first, mcuRow, mcuCol, state);
      else decodeSequential(reader, first, mcuRow, mcuCol, scan.blockSize);
      continue;
    }
    for (const c of scan.components) {
      for (let v = 0; v < c.v; v++) {
        for (let h = 0; h < c.h; h++) {
          const row = mcuRow * c.v + v;
          const col = mcuCol * c.h + h;
          if (scan.progressive) decodeProgressive(reader, scan, c, row, col, state);
          else decodeSequential(reader, c, row, col, scan.blockSize);
        }
      }
    }
  }
  return reader.finish();
}
