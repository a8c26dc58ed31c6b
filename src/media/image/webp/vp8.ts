/**
 * A VP8 key frame (lossy WebP's image data) decoded a macroblock row at a time (RFC 6386): each row of
 * 16 x 16 macroblocks is predicted, has its residuals added, is loop-filtered, and the row above it,
 * which the filter has now finished with, is handed on as YUV rows. Memory is the compressed data,
 * two macroblock rows and the per-column contexts, whatever the picture's size.
 *
 * Intra prediction reads the unfiltered reconstruction (the loop filter runs on a row only after the
 * row is predicted), the filter reads and changes up to 4 pixels into the row above, so a row is final
 * once the row below it has been filtered. No maintained package decodes VP8 this way (libwebp's WASM
 * builds on npm decode whole pictures to RGBA), hence this file (docs/decisions.md).
 */
import { Slicer } from "../../../pkg/slicer";
import { CorruptImageError } from "../errors";
import { AC_QUANT, COEFF_UPDATE_PROBS, DEFAULT_COEFF_PROBS, DC_QUANT, KF_BMODE_PROBS } from "./vp8-tables";

/** The boolean entropy decoder of RFC 6386 section 7. */
class BoolDecoder {
  private value = 0;
  private range = 255;
  private bitCount = 0;
  private pos: number;
  /** Set when the data ran out (the rest reads as zeros): a truncated frame. */
  exhausted = false;

  constructor(
    private readonly data: Uint8Array,
    start: number,
    private readonly end: number,
  ) {
    this.pos = start;
    this.value = (this.next() << 8) | this.next();
  }

  private next(): number {
    if (this.pos < this.end) return this.data[this.pos++]!;
    this.exhausted = true;
    return 0;
  }

  bit(prob: number): number {
    const split = 1 + (((this.range - 1) * prob) >> 8);
    const bigSplit = split << 8;
    let bit: number;
    if (this.value >= bigSplit) {
      bit = 1;
      this.range -= split;
      this.value -= bigSplit;
    } else {
      bit = 0;
      this.range = split;
    }
    while (this.range < 128) {
      this.value <<= 1;
      this.range <<= 1;
      if (++this.bitCount === 8) {
        this.bitCount = 0;
        this.value |= this.next();
      }
    }
    return bit;
  }

  literal(bits: number): number {
    let v = 0;
    for (let i = 0; i < bits; i++) v = (v << 1) | this.bit(128);
    return v;
  }

  /** A flag, then (if set) a magnitude of `bits` bits and a sign; 0 when the flag is clear. */
  optionalSigned(bits: number): number {
    if (!this.bit(128)) return 0;
    const magnitude = this.literal(bits);
    return this.bit(128) ? -magnitude : magnitude;
  }
}

// Intra modes, in libwebp's numbering (the order KF_BMODE_PROBS is indexed in).
const DC = 0;
const TM = 1;
const VE = 2;
const HE = 3;
const RD = 4;
const VR = 5;
const LD = 6;
const VL = 7;
const HD = 8;
const HU = 9;

/** Coefficient position (0..16) to probability band (section 13.3). */
const BANDS = [0, 1, 2, 3, 6, 4, 5, 6, 6, 6, 6, 6, 6, 6, 6, 7, 0];
/** Zigzag scan order: token index to position in the 4x4 block. */
const ZIGZAG = [0, 1, 4, 8, 5, 2, 3, 6, 9, 12, 13, 10, 7, 11, 14, 15];
/** Extra-bit probabilities of DCT token categories 3 to 6 (section 13.2). */
const CATEGORY_PROBS = [
  [173, 148, 140],
  [176, 155, 140, 135],
  [180, 157, 141, 134, 130],
  [254, 254, 243, 230, 196, 177, 153, 140, 133, 130, 129],
];
// Block types, as the coefficient probabilities are indexed (section 13.3).
const TYPE_Y_AFTER_Y2 = 0;
const TYPE_Y2 = 1;
const TYPE_CHROMA = 2;
const TYPE_Y_WITH_DC = 3;

interface Quant {
  y1: [number, number];
  y2: [number, number];
  uv: [number, number];
}

interface FilterParams {
  /** Edge limit of inner edges (macroblock edges use level + 4); 0: no filtering. */
  level: number;
  interior: number;
  hevThreshold: number;
  /** Inner edges are filtered (B_PRED, or coefficients coded). */
  inner: boolean;
}

export interface Vp8Header {
  width: number;
  height: number;
}

/** Reads a VP8 key frame's size (the first 10 bytes of its data). */
export function vp8Header(data: Uint8Array): Vp8Header {
  if (data.length < 10) throw new CorruptImageError("the WebP's VP8 data ends inside its frame header");
  if (data[0]! & 1) throw new CorruptImageError("the WebP's VP8 data is not a key frame");
  if (data[3] !== 0x9d || data[4] !== 0x01 || data[5] !== 0x2a) throw new CorruptImageError("the WebP's VP8 data has no start code");
  return { width: (data[6]! | (data[7]! << 8)) & 0x3fff, height: (data[8]! | (data[9]! << 8)) & 0x3fff };
}

const clamp255 = (v: number) => (v < 0 ? 0 : v > 255 ? 255 : v);
const clamp127 = (v: number) => (v < -128 ? -128 : v > 127 ? 127 : v);
const clamp15 = (v: number) => (v < -16 ? -16 : v > 15 ? 15 : v);

/**
 * Decodes a VP8 key frame, calling `row(y, yRow, uRow, vRow)` for each row of the picture in order:
 * `yRow` holds `width` luma samples, `uRow` and `vRow` the chroma samples of that row's pair (at half
 * the width, rounded up). The arrays are reused between calls. Throws CorruptImageError for data
 * that is truncated or malformed.
 */
export async function decodeVp8(
  data: Uint8Array,
  row: (y: number, yRow: Uint8Array, uRow: Uint8Array, vRow: Uint8Array) => void,
  slicer: Slicer = new Slicer(),
): Promise<Vp8Header> {
  const { width, height } = vp8Header(data);
  if (width === 0 || height === 0) throw new CorruptImageError("the WebP's VP8 frame is empty");
  const firstPartitionSize = (data[0]! | (data[1]! << 8) | (data[2]! << 16)) >>> 5;
  if (10 + firstPartitionSize > data.length) throw new CorruptImageError("the WebP's VP8 first partition ends past its data");
  const header = new BoolDecoder(data, 10, 10 + firstPartitionSize);
  header.bit(128); // colour space
  header.bit(128); // clamping type (pixel values are always clamped here)

  // Segmentation (section 9.3).
  const segmentQuant = [0, 0, 0, 0];
  const segmentFilter = [0, 0, 0, 0];
  const segmentProbs = [255, 255, 255];
  let segmentsRelative = true;
  const useSegments = header.bit(128) === 1;
  let updateMap = false;
  if (useSegments) {
    updateMap = header.bit(128) === 1;
    if (header.bit(128)) {
      segmentsRelative = header.bit(128) === 0;
      for (let i = 0; i < 4; i++) segmentQuant[i] = header.optionalSigned(7);
      for (let i = 0; i < 4; i++) segmentFilter[i] = header.optionalSigned(6);
    }
    if (updateMap) for (let i = 0; i < 3; i++) segmentProbs[i] = header.bit(128) ? header.literal(8) : 255;
  }

  // Loop filter (section 9.6).
  const simpleFilter = header.bit(128) === 1;
  const filterLevel = header.literal(6);
  const sharpness = header.literal(3);
  const refDelta = [0, 0, 0, 0];
  const modeDelta = [0, 0, 0, 0];
  const useDeltas = header.bit(128) === 1;
  if (useDeltas && header.bit(128)) {
    for (let i = 0; i < 4; i++) refDelta[i] = header.optionalSigned(6);
    for (let i = 0; i < 4; i++) modeDelta[i] = header.optionalSigned(6);
  }

  // DCT partitions (section 9.5).
  const partitionCount = 1 << header.literal(2);
  let at = 10 + firstPartitionSize;
  const sizesAt = at;
  at += 3 * (partitionCount - 1);
  if (at > data.length) throw new CorruptImageError("the WebP's VP8 partition sizes end past its data");
  const partitions: BoolDecoder[] = [];
  for (let p = 0; p < partitionCount; p++) {
    const size =
      p < partitionCount - 1
        ? data[sizesAt + 3 * p]! | (data[sizesAt + 3 * p + 1]! << 8) | (data[sizesAt + 3 * p + 2]! << 16)
        : data.length - at;
    if (at + size > data.length) throw new CorruptImageError("the WebP's VP8 partitions end past its data");
    partitions.push(new BoolDecoder(data, at, at + size));
    at += size;
  }

  // Quantisers (section 9.6, 14.1).
  const baseQ = header.literal(7);
  const dqY1Dc = header.optionalSigned(4);
  const dqY2Dc = header.optionalSigned(4);
  const dqY2Ac = header.optionalSigned(4);
  const dqUvDc = header.optionalSigned(4);
  const dqUvAc = header.optionalSigned(4);
  const q = (v: number, max = 127) => Math.max(0, Math.min(max, v));
  const quants: Quant[] = [];
  for (let s = 0; s < 4; s++) {
    const base = useSegments ? (segmentsRelative ? baseQ + segmentQuant[s]! : segmentQuant[s]!) : baseQ;
    quants.push({
      y1: [DC_QUANT[q(base + dqY1Dc)]!, AC_QUANT[q(base)]!],
      y2: [DC_QUANT[q(base + dqY2Dc)]! * 2, Math.max(8, Math.floor((AC_QUANT[q(base + dqY2Ac)]! * 155) / 100))],
      uv: [DC_QUANT[q(base + dqUvDc, 117)]!, AC_QUANT[q(base + dqUvAc)]!],
    });
  }

  header.bit(128); // refresh entropy probabilities (one frame: nothing to keep)
  const coeffProbs = DEFAULT_COEFF_PROBS.slice();
  for (let i = 0; i < coeffProbs.length; i++) if (header.bit(COEFF_UPDATE_PROBS[i]!)) coeffProbs[i] = header.literal(8);
  const useSkip = header.bit(128) === 1;
  const skipProb = useSkip ? header.literal(8) : 0;

  // Filter parameters per segment and "B_PRED or not" (section 15.2, libwebp's rules).
  const filters: FilterParams[][] = [];
  for (let s = 0; s < 4; s++) {
    const list: FilterParams[] = [];
    for (let bpred = 0; bpred < 2; bpred++) {
      let level = useSegments ? (segmentsRelative ? filterLevel + segmentFilter[s]! : segmentFilter[s]!) : filterLevel;
      if (useDeltas) {
        level += refDelta[0]!;
        if (bpred) level += modeDelta[0]!;
      }
      level = Math.min(63, level);
      if (filterLevel === 0 || level <= 0) {
        list.push({ level: 0, interior: 0, hevThreshold: 0, inner: false });
        continue;
      }
      let interior = level;
      if (sharpness > 0) {
        interior >>= sharpness > 4 ? 2 : 1;
        interior = Math.min(interior, 9 - sharpness);
      }
      interior = Math.max(1, interior);
      list.push({ level: 2 * level + interior, interior, hevThreshold: level >= 40 ? 2 : level >= 15 ? 1 : 0, inner: bpred === 1 });
    }
    filters.push(list);
  }

  const mbw = (width + 15) >> 4;
  const mbh = (height + 15) >> 4;
  const W = mbw * 16;
  const CW = mbw * 8;
  // Reconstruction buffers: row 0 is the unfiltered row above, column 0 the left border, and four
  // columns past the right edge hold the last macroblock's above-right samples.
  const ys = W + 5;
  const cs = CW + 1;
  const yBuf = new Uint8Array(ys * 17);
  const uBuf = new Uint8Array(cs * 9);
  const vBuf = new Uint8Array(cs * 9);
  // Filtered rows: the previous macroblock row (pending) then the current one.
  const yOut = new Uint8Array(W * 32);
  const uOut = new Uint8Array(CW * 16);
  const vOut = new Uint8Array(CW * 16);
  const coeffs = new Int16Array(400);
  // Per-column contexts: non-zero flags of the blocks above (4 luma, 2 + 2 chroma, Y2) and 4x4 modes.
  const aboveNz = new Uint8Array(mbw * 9);
  const aboveModes = new Uint8Array(mbw * 4);
  const leftNz = new Uint8Array(9);
  const leftModes = new Uint8Array(4);
  const mbFilter: FilterParams[] = new Array(mbw);
  const modes = new Uint8Array(16);
  const yRowOut = new Uint8Array(width);
  const uRowOut = new Uint8Array((width + 1) >> 1);
  const vRowOut = new Uint8Array((width + 1) >> 1);
  let emitted = 0;

  const emit = (buf: Uint8Array, ubuf: Uint8Array, vbuf: Uint8Array, from: number, mby: number) => {
    for (let r = 0; r < 16; r++) {
      const y = mby * 16 + r;
      if (y >= height) return;
      yRowOut.set(buf.subarray((from + r) * W, (from + r) * W + width));
      const cr = ((from >> 1) + (r >> 1)) * CW;
      uRowOut.set(ubuf.subarray(cr, cr + uRowOut.length));
      vRowOut.set(vbuf.subarray(cr, cr + vRowOut.length));
      row(y, yRowOut, uRowOut, vRowOut);
      emitted++;
    }
  };

  for (let mby = 0; mby < mbh; mby++) {
    const tokens = partitions[mby & (partitionCount - 1)]!;
    // The row above (unfiltered), or 127 for the first row; the top-left corner is 127 on the first
    // row and 129 on the left edge below it; the left border is 129.
    if (mby === 0) {
      yBuf.fill(127, 0, ys);
      uBuf.fill(127, 0, cs);
      vBuf.fill(127, 0, cs);
    } else {
      yBuf.copyWithin(1, 16 * ys + 1, 16 * ys + 1 + W);
      yBuf.fill(yBuf[W]!, W + 1, W + 5);
      uBuf.copyWithin(1, 8 * cs + 1, 8 * cs + 1 + CW);
      vBuf.copyWithin(1, 8 * cs + 1, 8 * cs + 1 + CW);
      yBuf[0] = uBuf[0] = vBuf[0] = 129;
    }
    for (let r = 1; r <= 16; r++) yBuf[r * ys] = 129;
    for (let r = 1; r <= 8; r++) uBuf[r * cs] = vBuf[r * cs] = 129;
    leftNz.fill(0);
    leftModes.fill(0);
    let segment = 0;

    for (let mbx = 0; mbx < mbw; mbx++) {
      if (updateMap) segment = header.bit(segmentProbs[0]!) ? 2 + header.bit(segmentProbs[2]!) : header.bit(segmentProbs[1]!);
      const skipCoeffs = useSkip ? header.bit(skipProb) === 1 : false;
      // Modes (section 11.2): 16x16 or sixteen 4x4, then chroma.
      const is4x4 = header.bit(145) === 0;
      let yMode = DC;
      if (!is4x4) {
        yMode = header.bit(156) ? (header.bit(128) ? TM : HE) : header.bit(163) ? VE : DC;
        aboveModes.fill(yMode, mbx * 4, mbx * 4 + 4);
        leftModes.fill(yMode);
      } else {
        for (let j = 0; j < 4; j++) {
          let left = leftModes[j]!;
          for (let i = 0; i < 4; i++) {
            const p = (aboveModes[mbx * 4 + i]! * 10 + left) * 9;
            let m: number;
            if (!header.bit(KF_BMODE_PROBS[p]!)) m = DC;
            else if (!header.bit(KF_BMODE_PROBS[p + 1]!)) m = TM;
            else if (!header.bit(KF_BMODE_PROBS[p + 2]!)) m = VE;
            else if (!header.bit(KF_BMODE_PROBS[p + 3]!))
              m = !header.bit(KF_BMODE_PROBS[p + 4]!) ? HE : !header.bit(KF_BMODE_PROBS[p + 5]!) ? RD : VR;
            else if (!header.bit(KF_BMODE_PROBS[p + 6]!)) m = LD;
            else if (!header.bit(KF_BMODE_PROBS[p + 7]!)) m = VL;
            else m = !header.bit(KF_BMODE_PROBS[p + 8]!) ? HD : HU;
            modes[j * 4 + i] = m;
            aboveModes[mbx * 4 + i] = m;
            left = m;
          }
          leftModes[j] = left;
        }
      }
      const uvMode = !header.bit(142) ? DC : !header.bit(114) ? VE : !header.bit(183) ? HE : TM;

      // Residuals (section 13).
      coeffs.fill(0);
      const quant = quants[segment]!;
      let nzMask = 0; // bit n: block n (0-15 luma, 16-19 U, 20-23 V) has coefficients
      let dcOnlyMask = 0; // bit n: block n has only a DC coefficient
      const an = mbx * 9;
      if (!skipCoeffs) {
        let firstType = TYPE_Y_WITH_DC;
        if (!is4x4) {
          const ctx = aboveNz[an + 8]! + leftNz[8]!;
          const nz = readBlock(tokens, coeffProbs, TYPE_Y2, ctx, quant.y2, 0, coeffs, 384);
          aboveNz[an + 8] = leftNz[8] = nz > 0 ? 1 : 0;
          inverseWht(coeffs);
          firstType = TYPE_Y_AFTER_Y2;
        }
        for (let j = 0; j < 4; j++) {
          for (let i = 0; i < 4; i++) {
            const n = j * 4 + i;
            const ctx = aboveNz[an + i]! + leftNz[j]!;
            const last = readBlock(tokens, coeffProbs, firstType, ctx, quant.y1, is4x4 ? 0 : 1, coeffs, n * 16);
            aboveNz[an + i] = leftNz[j] = last > 0 ? 1 : 0;
            // A block with tokens gets the full inverse DCT; one whose only coefficient is the DC
            // from Y2, the DC-only shortcut (the same result).
            if (last > 0) nzMask |= 1 << n;
            else if (coeffs[n * 16] !== 0) dcOnlyMask |= 1 << n;
          }
        }
        for (let c = 0; c < 2; c++) {
          for (let j = 0; j < 2; j++) {
            for (let i = 0; i < 2; i++) {
              const n = 16 + c * 4 + j * 2 + i;
              const ctx = aboveNz[an + 4 + c * 2 + i]! + leftNz[4 + c * 2 + j]!;
              const last = readBlock(tokens, coeffProbs, TYPE_CHROMA, ctx, quant.uv, 0, coeffs, n * 16);
              aboveNz[an + 4 + c * 2 + i] = leftNz[4 + c * 2 + j] = last > 0 ? 1 : 0;
              if (last > 0) nzMask |= 1 << n;
            }
          }
        }
      } else {
        // No coefficients: the contexts say so (the Y2 one only for a macroblock that has Y2).
        aboveNz.fill(0, an, an + 8);
        leftNz.fill(0, 0, 8);
        if (!is4x4) aboveNz[an + 8] = leftNz[8] = 0;
      }
      const coded = nzMask !== 0 || dcOnlyMask !== 0;
      const f = filters[segment]![is4x4 ? 1 : 0]!;
      mbFilter[mbx] = { ...f, inner: f.inner || coded };

      // Prediction and reconstruction into the buffers.
      const yAt = ys + 1 + mbx * 16; // first pixel of the macroblock in yBuf
      if (!is4x4) {
        predict16(yBuf, yAt, ys, yMode, mbx, mby);
        for (let n = 0; n < 16; n++) addBlock(yBuf, yAt + (n >> 2) * 4 * ys + (n & 3) * 4, ys, coeffs, n * 16, nzMask, dcOnlyMask, n);
      } else {
        // Subblocks on the right edge below the first row take the macroblock's above-right samples.
        const aboveRight = yAt - ys + 16;
        for (let j = 1; j < 4; j++) yBuf.copyWithin(yAt + (j * 4 - 1) * ys + 16, aboveRight, aboveRight + 4);
        for (let n = 0; n < 16; n++) {
          const at = yAt + (n >> 2) * 4 * ys + (n & 3) * 4;
          predict4(yBuf, at, ys, modes[n]!);
          addBlock(yBuf, at, ys, coeffs, n * 16, nzMask, dcOnlyMask, n);
        }
      }
      const cAt = cs + 1 + mbx * 8;
      predict8(uBuf, cAt, cs, uvMode, mbx, mby);
      predict8(vBuf, cAt, cs, uvMode, mbx, mby);
      for (let n = 0; n < 4; n++) {
        addBlock(uBuf, cAt + (n >> 1) * 4 * cs + (n & 1) * 4, cs, coeffs, (16 + n) * 16, nzMask, dcOnlyMask, 16 + n);
        addBlock(vBuf, cAt + (n >> 1) * 4 * cs + (n & 1) * 4, cs, coeffs, (20 + n) * 16, nzMask, dcOnlyMask, 20 + n);
      }
    }
    if (header.exhausted || tokens.exhausted)
      throw new CorruptImageError(`the WebP's VP8 data ends inside macroblock row ${mby + 1} of ${mbh}`);

    // The row, unfiltered, into the lower half of the output buffers; then the loop filter, which also
    // finishes the row above; then the row above is final.
    for (let r = 0; r < 16; r++) yOut.set(yBuf.subarray((r + 1) * ys + 1, (r + 1) * ys + 1 + W), (16 + r) * W);
    for (let r = 0; r < 8; r++) {
      uOut.set(uBuf.subarray((r + 1) * cs + 1, (r + 1) * cs + 1 + CW), (8 + r) * CW);
      vOut.set(vBuf.subarray((r + 1) * cs + 1, (r + 1) * cs + 1 + CW), (8 + r) * CW);
    }
    if (filterLevel > 0) loopFilterRow(yOut, uOut, vOut, W, CW, mbw, mby, mbFilter, simpleFilter);
    if (mby > 0) emit(yOut, uOut, vOut, 0, mby - 1);
    yOut.copyWithin(0, 16 * W);
    uOut.copyWithin(0, 8 * CW);
    vOut.copyWithin(0, 8 * CW);
    // A macroblock row is 16 rows of pixels.
    if (slicer.spend(16 * width)) await slicer.pause();
  }
  emit(yOut, uOut, vOut, 0, mbh - 1);
  if (emitted !== height) throw new Error(`VP8: ${emitted} of ${height} rows emitted`);
  return { width, height };
}

/**
 * Reads one block's tokens (section 13), dequantised into `out` at `base` in raster order. Returns 0
 * when the block ends at once (no coefficients), else the position after its last token.
 */
function readBlock(
  d: BoolDecoder,
  probs: Uint8Array,
  type: number,
  context: number,
  quant: [number, number],
  first: number,
  out: Int16Array,
  base: number,
): number {
  let n = first;
  let p = ((type * 8 + BANDS[n]!) * 3 + context) * 11;
  if (!d.bit(probs[p]!)) return 0; // end of block at once
  for (;;) {
    // Zeros until a non-zero token.
    while (!d.bit(probs[p + 1]!)) {
      n++;
      if (n === 16) return 16;
      p = ((type * 8 + BANDS[n]!) * 3 + 0) * 11;
    }
    let v: number;
    let nextContext: number;
    if (!d.bit(probs[p + 2]!)) {
      v = 1;
      nextContext = 1;
    } else {
      if (!d.bit(probs[p + 3]!)) {
        v = !d.bit(probs[p + 4]!) ? 2 : 3 + d.bit(probs[p + 5]!);
      } else if (!d.bit(probs[p + 6]!)) {
        v = !d.bit(probs[p + 7]!) ? 5 + d.bit(159) : 7 + 2 * d.bit(165) + d.bit(145);
      } else {
        const b1 = d.bit(probs[p + 8]!);
        const b0 = d.bit(probs[p + 9 + b1]!);
        const category = 2 * b1 + b0;
        let extra = 0;
        for (const prob of CATEGORY_PROBS[category]!) extra = extra * 2 + d.bit(prob);
        v = extra + 3 + (8 << category);
      }
      nextContext = 2;
    }
    const position = ZIGZAG[n]!;
    const value = v * quant[position > 0 ? 1 : 0];
    out[base + position] = d.bit(128) ? -value : value;
    n++;
    if (n === 16) return 16;
    p = ((type * 8 + BANDS[n]!) * 3 + nextContext) * 11;
    if (!d.bit(probs[p]!)) return n; // end of block
  }
}

/** The inverse Walsh-Hadamard transform of the Y2 block (at 384) into the luma blocks' DC (section 14.3). */
function inverseWht(c: Int16Array): void {
  const m = new Int32Array(16);
  for (let i = 0; i < 4; i++) {
    const a0 = c[384 + i]! + c[384 + 12 + i]!;
    const a1 = c[384 + 4 + i]! + c[384 + 8 + i]!;
    const a2 = c[384 + 4 + i]! - c[384 + 8 + i]!;
    const a3 = c[384 + i]! - c[384 + 12 + i]!;
    m[i] = a0 + a1;
    m[8 + i] = a0 - a1;
    m[4 + i] = a3 + a2;
    m[12 + i] = a3 - a2;
  }
  for (let i = 0; i < 4; i++) {
    const dc = m[i * 4]! + 3;
    const a0 = dc + m[i * 4 + 3]!;
    const a1 = m[i * 4 + 1]! + m[i * 4 + 2]!;
    const a2 = m[i * 4 + 1]! - m[i * 4 + 2]!;
    const a3 = dc - m[i * 4 + 3]!;
    c[(i * 4 + 0) * 16] = (a0 + a1) >> 3;
    c[(i * 4 + 1) * 16] = (a3 + a2) >> 3;
    c[(i * 4 + 2) * 16] = (a0 - a1) >> 3;
    c[(i * 4 + 3) * 16] = (a3 - a2) >> 3;
  }
}

const C1 = 85627; // 65536 * cos(pi/8) * sqrt(2)
const C2 = 35468; // 65536 * sin(pi/8) * sqrt(2)
const idctTemp = new Int32Array(16);

/** Adds block `n`'s inverse DCT (section 14.3) to the 4x4 pixels at `at`. */
function addBlock(
  buf: Uint8Array,
  at: number,
  stride: number,
  c: Int16Array,
  base: number,
  nzMask: number,
  dcOnlyMask: number,
  n: number,
): void {
  if (nzMask & (1 << n)) {
    const m = idctTemp;
    for (let i = 0; i < 4; i++) {
      const c0 = c[base + i]!;
      const c4 = c[base + 4 + i]!;
      const c8 = c[base + 8 + i]!;
      const c12 = c[base + 12 + i]!;
      const a = c0 + c8;
      const b = c0 - c8;
      const cc = ((c4 * C2) >> 16) - ((c12 * C1) >> 16);
      const d = ((c4 * C1) >> 16) + ((c12 * C2) >> 16);
      m[i * 4] = a + d;
      m[i * 4 + 1] = b + cc;
      m[i * 4 + 2] = b - cc;
      m[i * 4 + 3] = a - d;
    }
    for (let j = 0; j < 4; j++) {
      const dc = m[j]! + 4;
      const a = dc + m[8 + j]!;
      const b = dc - m[8 + j]!;
      const cc = ((m[4 + j]! * C2) >> 16) - ((m[12 + j]! * C1) >> 16);
      const d = ((m[4 + j]! * C1) >> 16) + ((m[12 + j]! * C2) >> 16);
      const o = at + j * stride;
      buf[o] = clamp255(buf[o]! + ((a + d) >> 3));
      buf[o + 1] = clamp255(buf[o + 1]! + ((b + cc) >> 3));
      buf[o + 2] = clamp255(buf[o + 2]! + ((b - cc) >> 3));
      buf[o + 3] = clamp255(buf[o + 3]! + ((a - d) >> 3));
    }
  } else if (dcOnlyMask & (1 << n)) {
    const dc = (c[base]! + 4) >> 3;
    for (let j = 0; j < 4; j++) {
      const o = at + j * stride;
      for (let i = 0; i < 4; i++) buf[o + i] = clamp255(buf[o + i]! + dc);
    }
  }
}

/** 16x16 luma prediction (section 12.2); DC without a neighbour uses the other one, or 128. */
function predict16(buf: Uint8Array, at: number, s: number, mode: number, mbx: number, mby: number): void {
  predictSquare(buf, at, s, 16, mode, mbx, mby);
}

/** 8x8 chroma prediction (section 12.2). */
function predict8(buf: Uint8Array, at: number, s: number, mode: number, mbx: number, mby: number): void {
  predictSquare(buf, at, s, 8, mode, mbx, mby);
}

function predictSquare(buf: Uint8Array, at: number, s: number, size: number, mode: number, mbx: number, mby: number): void {
  const top = at - s;
  if (mode === DC) {
    const shift = size === 16 ? 3 : 2;
    let sum = 0;
    let count = 0;
    if (mby > 0) {
      for (let i = 0; i < size; i++) sum += buf[top + i]!;
      count++;
    }
    if (mbx > 0) {
      for (let j = 0; j < size; j++) sum += buf[at + j * s - 1]!;
      count++;
    }
    const value = count === 0 ? 128 : count === 2 ? (sum + size) >> (shift + 2) : (sum + (size >> 1)) >> (shift + 1);
    for (let j = 0; j < size; j++) buf.fill(value, at + j * s, at + j * s + size);
  } else if (mode === VE) {
    for (let j = 0; j < size; j++) buf.copyWithin(at + j * s, top, top + size);
  } else if (mode === HE) {
    for (let j = 0; j < size; j++) buf.fill(buf[at + j * s - 1]!, at + j * s, at + j * s + size);
  } else {
    const corner = buf[top - 1]!;
    for (let j = 0; j < size; j++) {
      const left = buf[at + j * s - 1]! - corner;
      const o = at + j * s;
      for (let i = 0; i < size; i++) buf[o + i] = clamp255(left + buf[top + i]!);
    }
  }
}

/** 4x4 luma prediction (section 12.3), from the pixels above (8, with above-right) and left. */
function predict4(buf: Uint8Array, at: number, s: number, mode: number): void {
  const t = at - s;
  const A = buf[t]!;
  const B = buf[t + 1]!;
  const C = buf[t + 2]!;
  const D = buf[t + 3]!;
  const E = buf[t + 4]!;
  const F = buf[t + 5]!;
  const G = buf[t + 6]!;
  const H = buf[t + 7]!;
  const P = buf[t - 1]!;
  const I = buf[at - 1]!;
  const J = buf[at + s - 1]!;
  const K = buf[at + 2 * s - 1]!;
  const L = buf[at + 3 * s - 1]!;
  const avg3 = (x: number, y: number, z: number) => (x + 2 * y + z + 2) >> 2;
  const avg2 = (x: number, y: number) => (x + y + 1) >> 1;
  const put = (r: number, a: number, b: number, c: number, d: number) => {
    const o = at + r * s;
    buf[o] = a;
    buf[o + 1] = b;
    buf[o + 2] = c;
    buf[o + 3] = d;
  };
  switch (mode) {
    case DC: {
      const v = (A + B + C + D + I + J + K + L + 4) >> 3;
      for (let r = 0; r < 4; r++) put(r, v, v, v, v);
      break;
    }
    case TM:
      for (let r = 0; r < 4; r++) {
        const left = buf[at + r * s - 1]! - P;
        put(r, clamp255(left + A), clamp255(left + B), clamp255(left + C), clamp255(left + D));
      }
      break;
    case VE: {
      const a = avg3(P, A, B);
      const b = avg3(A, B, C);
      const c = avg3(B, C, D);
      const d = avg3(C, D, E);
      for (let r = 0; r < 4; r++) put(r, a, b, c, d);
      break;
    }
    case HE: {
      const r0 = avg3(P, I, J);
      const r1 = avg3(I, J, K);
      const r2 = avg3(J, K, L);
      const r3 = avg3(K, L, L);
      put(0, r0, r0, r0, r0);
      put(1, r1, r1, r1, r1);
      put(2, r2, r2, r2, r2);
      put(3, r3, r3, r3, r3);
      break;
    }
    case RD: {
      const lkj = avg3(L, K, J);
      const kji = avg3(K, J, I);
      const jip = avg3(J, I, P);
      const ipa = avg3(I, P, A);
      const pab = avg3(P, A, B);
      const abc = avg3(A, B, C);
      const bcd = avg3(B, C, D);
      put(0, ipa, pab, abc, bcd);
      put(1, jip, ipa, pab, abc);
      put(2, kji, jip, ipa, pab);
      put(3, lkj, kji, jip, ipa);
      break;
    }
    case VR: {
      const pa = avg2(P, A);
      const ab = avg2(A, B);
      const bc = avg2(B, C);
      const cd = avg2(C, D);
      const kji = avg3(K, J, I);
      const jip = avg3(J, I, P);
      const ipa = avg3(I, P, A);
      const pab = avg3(P, A, B);
      const abc = avg3(A, B, C);
      const bcd = avg3(B, C, D);
      put(0, pa, ab, bc, cd);
      put(1, ipa, pab, abc, bcd);
      put(2, jip, pa, ab, bc);
      put(3, kji, ipa, pab, abc);
      break;
    }
    case LD: {
      const abc = avg3(A, B, C);
      const bcd = avg3(B, C, D);
      const cde = avg3(C, D, E);
      const def = avg3(D, E, F);
      const efg = avg3(E, F, G);
      const fgh = avg3(F, G, H);
      const ghh = avg3(G, H, H);
      put(0, abc, bcd, cde, def);
      put(1, bcd, cde, def, efg);
      put(2, cde, def, efg, fgh);
      put(3, def, efg, fgh, ghh);
      break;
    }
    case VL: {
      const ab = avg2(A, B);
      const bc = avg2(B, C);
      const cd = avg2(C, D);
      const de = avg2(D, E);
      const abc = avg3(A, B, C);
      const bcd = avg3(B, C, D);
      const cde = avg3(C, D, E);
      const def = avg3(D, E, F);
      const efg = avg3(E, F, G);
      const fgh = avg3(F, G, H);
      put(0, ab, bc, cd, de);
      put(1, abc, bcd, cde, def);
      put(2, bc, cd, de, efg);
      put(3, bcd, cde, def, fgh);
      break;
    }
    case HD: {
      const lk = avg2(L, K);
      const kj = avg2(K, J);
      const ji = avg2(J, I);
      const ip = avg2(I, P);
      const lkj = avg3(L, K, J);
      const kji = avg3(K, J, I);
      const jip = avg3(J, I, P);
      const ipa = avg3(I, P, A);
      const pab = avg3(P, A, B);
      const abc = avg3(A, B, C);
      put(0, ip, ipa, pab, abc);
      put(1, ji, jip, ip, ipa);
      put(2, kj, kji, ji, jip);
      put(3, lk, lkj, kj, kji);
      break;
    }
    default: {
      // HU
      const ij = avg2(I, J);
      const jk = avg2(J, K);
      const kl = avg2(K, L);
      const ijk = avg3(I, J, K);
      const jkl = avg3(J, K, L);
      const kll = avg3(K, L, L);
      put(0, ij, ijk, jk, jkl);
      put(1, jk, jkl, kl, kll);
      put(2, kl, kll, L, L);
      put(3, L, L, L, L);
    }
  }
}

// --- Loop filter (section 15) -----------------------------------------------------------------------

/** The simple filter across one edge: `n` pixels along it, `step` across it. */
function simpleEdge(buf: Uint8Array, at: number, along: number, across: number, n: number, limit: number): void {
  for (let k = 0; k < n; k++, at += along) {
    const p1 = buf[at - 2 * across]!;
    const p0 = buf[at - across]!;
    const q0 = buf[at]!;
    const q1 = buf[at + across]!;
    if (Math.abs(p0 - q0) * 2 + (Math.abs(p1 - q1) >> 1) > limit) continue;
    const a = 3 * (q0 - p0) + clamp127(p1 - q1);
    buf[at - across] = clamp255(p0 + clamp15((a + 3) >> 3));
    buf[at] = clamp255(q0 - clamp15((a + 4) >> 3));
  }
}

/** The normal filter across one edge: macroblock edges change 3 pixels each side, inner edges 2. */
function normalEdge(
  buf: Uint8Array,
  at: number,
  along: number,
  across: number,
  n: number,
  limit: number,
  interior: number,
  hev: number,
  inner: boolean,
): void {
  for (let k = 0; k < n; k++, at += along) {
    const p3 = buf[at - 4 * across]!;
    const p2 = buf[at - 3 * across]!;
    const p1 = buf[at - 2 * across]!;
    const p0 = buf[at - across]!;
    const q0 = buf[at]!;
    const q1 = buf[at + across]!;
    const q2 = buf[at + 2 * across]!;
    const q3 = buf[at + 3 * across]!;
    if (Math.abs(p0 - q0) * 2 + (Math.abs(p1 - q1) >> 1) > limit) continue;
    if (
      Math.abs(p3 - p2) > interior ||
      Math.abs(p2 - p1) > interior ||
      Math.abs(p1 - p0) > interior ||
      Math.abs(q1 - q0) > interior ||
      Math.abs(q2 - q1) > interior ||
      Math.abs(q3 - q2) > interior
    )
      continue;
    if (Math.abs(p1 - p0) > hev || Math.abs(q1 - q0) > hev) {
      const a = 3 * (q0 - p0) + clamp127(p1 - q1);
      buf[at - across] = clamp255(p0 + clamp15((a + 3) >> 3));
      buf[at] = clamp255(q0 - clamp15((a + 4) >> 3));
    } else if (inner) {
      const a = 3 * (q0 - p0);
      const a1 = clamp15((a + 4) >> 3);
      const a2 = clamp15((a + 3) >> 3);
      const a3 = (a1 + 1) >> 1;
      buf[at - 2 * across] = clamp255(p1 + a3);
      buf[at - across] = clamp255(p0 + a2);
      buf[at] = clamp255(q0 - a1);
      buf[at + across] = clamp255(q1 - a3);
    } else {
      const a = clamp127(3 * (q0 - p0) + clamp127(p1 - q1));
      const a1 = (27 * a + 63) >> 7;
      const a2 = (18 * a + 63) >> 7;
      const a3 = (9 * a + 63) >> 7;
      buf[at - 3 * across] = clamp255(p2 + a3);
      buf[at - 2 * across] = clamp255(p1 + a2);
      buf[at - across] = clamp255(p0 + a1);
      buf[at] = clamp255(q0 - a1);
      buf[at + across] = clamp255(q1 - a2);
      buf[at + 2 * across] = clamp255(q2 - a3);
    }
  }
}

/**
 * Filters macroblock row `mby`, held in rows 16..31 of `y` (8..15 of `u` and `v`) below the previous
 * row, in the order of section 15: per macroblock, its left edge, inner vertical edges, top edge,
 * inner horizontal edges.
 */
function loopFilterRow(
  y: Uint8Array,
  u: Uint8Array,
  v: Uint8Array,
  W: number,
  CW: number,
  mbw: number,
  mby: number,
  params: FilterParams[],
  simple: boolean,
): void {
  for (let mbx = 0; mbx < mbw; mbx++) {
    const f = params[mbx]!;
    if (f.level === 0) continue;
    const yAt = 16 * W + mbx * 16;
    const cAt = 8 * CW + mbx * 8;
    const mbLimit = f.level + 4;
    if (simple) {
      if (mbx > 0) simpleEdge(y, yAt, W, 1, 16, mbLimit);
      if (f.inner) for (let x = 4; x < 16; x += 4) simpleEdge(y, yAt + x, W, 1, 16, f.level);
      if (mby > 0) simpleEdge(y, yAt, 1, W, 16, mbLimit);
      if (f.inner) for (let r = 4; r < 16; r += 4) simpleEdge(y, yAt + r * W, 1, W, 16, f.level);
      continue;
    }
    const { interior, hevThreshold: hev } = f;
    if (mbx > 0) {
      normalEdge(y, yAt, W, 1, 16, mbLimit, interior, hev, false);
      normalEdge(u, cAt, CW, 1, 8, mbLimit, interior, hev, false);
      normalEdge(v, cAt, CW, 1, 8, mbLimit, interior, hev, false);
    }
    if (f.inner) {
      for (let x = 4; x < 16; x += 4) normalEdge(y, yAt + x, W, 1, 16, f.level, interior, hev, true);
      normalEdge(u, cAt + 4, CW, 1, 8, f.level, interior, hev, true);
      normalEdge(v, cAt + 4, CW, 1, 8, f.level, interior, hev, true);
    }
    if (mby > 0) {
      normalEdge(y, yAt, 1, W, 16, mbLimit, interior, hev, false);
      normalEdge(u, cAt, 1, CW, 8, mbLimit, interior, hev, false);
      normalEdge(v, cAt, 1, CW, 8, mbLimit, interior, hev, false);
    }
    if (f.inner) {
      for (let r = 4; r < 16; r += 4) normalEdge(y, yAt + r * W, 1, W, 16, f.level, interior, hev, true);
      normalEdge(u, cAt + 4 * CW, 1, CW, 8, f.level, interior, hev, true);
      normalEdge(v, cAt + 4 * CW, 1, CW, 8, f.level, interior, hev, true);
    }
  }
}
