/**
 * Inverse DCTs that write one 8x8 block's samples straight into a component plane, at full size or
 * scaled to N/8 (N = 1..7) in the DCT domain: an N-point IDCT of the N x N lowest frequencies, as
 * libjpeg's scaled decoding (jidctint.c, jpeg_idct_NxN) does. For every N the normalisation is the
 * 8-point one, (1/4) C(u) C(v) F(u,v) cos((2x+1)u pi / 2N) cos((2y+1)v pi / 2N), so the block mean is
 * kept. Scaling here is what lets a 12 MP photo be decoded at a quarter of its size: the
 * full-resolution pixels never exist.
 *
 * Coefficients arrive in natural (row-major) order, not yet dequantized.
 */

import { clamp, flat } from "./clamp";
import { idct5, idct6, idct7 } from "./idct-unrolled";

/** The natural-order index of each zig-zag position (plus guards for corrupt run lengths). */
export const ZIGZAG = new Int32Array([
  0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57,
  50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
  // a corrupt run may point past the end: those coefficients land in a slot that is never read
  64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64,
]);

/** Samples per block side in the output: the image is decoded at blockSize/8 of its size. */
export type BlockSize = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;

/** The AAN (Arai, Agui, Nakajima) float IDCT's per-frequency factors, folded into the quantisation table. */
const AAN = [1.0, 1.387039845, 1.306562965, 1.175875602, 1.0, 0.785694958, 0.5411961, 0.275899379];

/** A quantisation table prepared for one block size: what `idctBlock` multiplies each coefficient by. */
export function prepareQuantTable(table: Uint16Array, blockSize: BlockSize): Float32Array {
  const out = new Float32Array(64);
  for (let row = 0; row < 8; row++) {
    for (let col = 0; col < 8; col++) {
      const q = table[row * 8 + col]!;
      // The AAN factors for the full-size IDCT; the 1/8 (and +128) are applied when storing.
      out[row * 8 + col] = blockSize === 8 ? (q * AAN[row]! * AAN[col]!) / 8 : q;
    }
  }
  return out;
}

const workspace = new Float32Array(64);

/** Full-size float AAN IDCT (libjpeg's jidctflt.c), 64 samples into `plane` at `offset`. */
function idct8(coefficients: Int32Array, q: Float32Array, plane: Uint8Array, offset: number, stride: number): void {
  const ws = workspace;
  for (let col = 0; col < 8; col++) {
    const c1 = coefficients[8 + col]!,
      c2 = coefficients[16 + col]!,
      c3 = coefficients[24 + col]!,
      c4 = coefficients[32 + col]!;
    const c5 = coefficients[40 + col]!,
      c6 = coefficients[48 + col]!,
      c7 = coefficients[56 + col]!;
    if ((c1 | c2 | c3 | c4 | c5 | c6 | c7) === 0) {
      const dc = coefficients[col]! * q[col]!;
      for (let r = 0; r < 64; r += 8) ws[r + col] = dc;
      continue;
    }
    // Even part.
    let t0 = coefficients[col]! * q[col]!;
    let t1 = c2 * q[16 + col]!;
    let t2 = c4 * q[32 + col]!;
    let t3 = c6 * q[48 + col]!;
    let t10 = t0 + t2;
    let t11 = t0 - t2;
    const t13 = t1 + t3;
    let t12 = (t1 - t3) * 1.414213562 - t13;
    t0 = t10 + t13;
    t3 = t10 - t13;
    t1 = t11 + t12;
    t2 = t11 - t12;
    // Odd part.
    const t4 = c1 * q[8 + col]!;
    const t5 = c3 * q[24 + col]!;
    const t6 = c5 * q[40 + col]!;
    const t7 = c7 * q[56 + col]!;
    const z13 = t6 + t5;
    const z10 = t6 - t5;
    const z11 = t4 + t7;
    const z12 = t4 - t7;
    const o7 = z11 + z13;
    t11 = (z11 - z13) * 1.414213562;
    const z5 = (z10 + z12) * 1.847759065;
    t10 = 1.0823922 * z12 - z5;
    t12 = -2.61312593 * z10 + z5;
    const o6 = t12 - o7;
    const o5 = t11 - o6;
    const o4 = t10 + o5;
    ws[col] = t0 + o7;
    ws[56 + col] = t0 - o7;
    ws[8 + col] = t1 + o6;
    ws[48 + col] = t1 - o6;
    ws[16 + col] = t2 + o5;
    ws[40 + col] = t2 - o5;
    ws[32 + col] = t3 + o4;
    ws[24 + col] = t3 - o4;
  }
  for (let row = 0; row < 64; row += 8) {
    let t10 = ws[row]! + ws[row + 4]!;
    let t11 = ws[row]! - ws[row + 4]!;
    const t13 = ws[row + 2]! + ws[row + 6]!;
    let t12 = (ws[row + 2]! - ws[row + 6]!) * 1.414213562 - t13;
    const t0 = t10 + t13;
    const t3 = t10 - t13;
    const t1 = t11 + t12;
    const t2 = t11 - t12;
    const z13 = ws[row + 5]! + ws[row + 3]!;
    const z10 = ws[row + 5]! - ws[row + 3]!;
    const z11 = ws[row + 1]! + ws[row + 7]!;
    const z12 = ws[row + 1]! - ws[row + 7]!;
    const o7 = z11 + z13;
    t11 = (z11 - z13) * 1.414213562;
    const z5 = (z10 + z12) * 1.847759065;
    t10 = 1.0823922 * z12 - z5;
    t12 = -2.61312593 * z10 + z5;
    const o6 = t12 - o7;
    const o5 = t11 - o6;
    const o4 = t10 + o5;
    const out = offset + (row >> 3) * stride;
    plane[out] = clamp(t0 + o7 + 128);
    plane[out + 7] = clamp(t0 - o7 + 128);
    plane[out + 1] = clamp(t1 + o6 + 128);
    plane[out + 6] = clamp(t1 - o6 + 128);
    plane[out + 2] = clamp(t2 + o5 + 128);
    plane[out + 5] = clamp(t2 - o5 + 128);
    plane[out + 4] = clamp(t3 + o4 + 128);
    plane[out + 3] = clamp(t3 - o4 + 128);
  }
}

/** cos((2x + 1) u pi / 2N) * C(u) for the N-point IDCTs, row x, column u. */
function basis(n: number): Float32Array {
  const m = new Float32Array(n * n);
  for (let x = 0; x < n; x++) {
    for (let u = 0; u < n; u++) m[x * n + u] = (u === 0 ? Math.SQRT1_2 : 1) * Math.cos(((2 * x + 1) * u * Math.PI) / (2 * n));
  }
  return m;
}

const BASIS4 = basis(4);
const scaledWorkspace = new Float32Array(16);

const BASIS3 = basis(3);

/** 3x3 output from the 3x3 lowest frequencies (scale 3/8), unrolled: 6 MP photos decode at this size. */
function idct3(c: Int32Array, q: Float32Array, plane: Uint8Array, offset: number, stride: number): void {
  if ((c[1]! | c[2]! | c[8]! | c[9]! | c[10]! | c[16]! | c[17]! | c[18]!) === 0)
    return flat(3, clamp((c[0]! * q[0]!) / 8 + 128), plane, offset, stride);
  const m = BASIS3;
  const m00 = m[0]!,
    m01 = m[1]!,
    m02 = m[2]!,
    m10 = m[3]!,
    m11 = m[4]!,
    m12 = m[5]!,
    m20 = m[6]!,
    m21 = m[7]!,
    m22 = m[8]!;
  // Rows of frequencies (v = 0, 1, 2) at the three horizontal positions.
  const a0 = c[0]! * q[0]!,
    a1 = c[1]! * q[1]!,
    a2 = c[2]! * q[2]!;
  const b0 = c[8]! * q[8]!,
    b1 = c[9]! * q[9]!,
    b2 = c[10]! * q[10]!;
  const d0 = c[16]! * q[16]!,
    d1 = c[17]! * q[17]!,
    d2 = c[18]! * q[18]!;
  const r00 = a0 * m00 + a1 * m01 + a2 * m02,
    r01 = a0 * m10 + a1 * m11 + a2 * m12,
    r02 = a0 * m20 + a1 * m21 + a2 * m22;
  const r10 = b0 * m00 + b1 * m01 + b2 * m02,
    r11 = b0 * m10 + b1 * m11 + b2 * m12,
    r12 = b0 * m20 + b1 * m21 + b2 * m22;
  const r20 = d0 * m00 + d1 * m01 + d2 * m02,
    r21 = d0 * m10 + d1 * m11 + d2 * m12,
    r22 = d0 * m20 + d1 * m21 + d2 * m22;
  for (let y = 0; y < 3; y++) {
    const k0 = m[y * 3]! / 4,
      k1 = m[y * 3 + 1]! / 4,
      k2 = m[y * 3 + 2]! / 4;
    const out = offset + y * stride;
    plane[out] = clamp(r00 * k0 + r10 * k1 + r20 * k2 + 128);
    plane[out + 1] = clamp(r01 * k0 + r11 * k1 + r21 * k2 + 128);
    plane[out + 2] = clamp(r02 * k0 + r12 * k1 + r22 * k2 + 128);
  }
}

/** 4x4 output from the 4x4 lowest frequencies (scale 1/2). */
function idct4(coefficients: Int32Array, q: Float32Array, plane: Uint8Array, offset: number, stride: number): void {
  const ws = scaledWorkspace;
  const m = BASIS4;
  const ac =
    coefficients[1]! |
    coefficients[2]! |
    coefficients[3]! |
    coefficients[8]! |
    coefficients[9]! |
    coefficients[10]! |
    coefficients[11]! |
    coefficients[16]! |
    coefficients[17]! |
    coefficients[18]! |
    coefficients[19]! |
    coefficients[24]! |
    coefficients[25]! |
    coefficients[26]! |
    coefficients[27]!;
  // Only the DC term among the frequencies used: a flat block (common in chroma and smooth areas).
  if (ac === 0) return flat(4, clamp((coefficients[0]! * q[0]!) / 8 + 128), plane, offset, stride);
  // Rows of frequencies v -> horizontal positions x.
  for (let v = 0; v < 4; v++) {
    const base = v * 8;
    const f0 = coefficients[base]! * q[base]!;
    const f1 = coefficients[base + 1]! * q[base + 1]!;
    const f2 = coefficients[base + 2]! * q[base + 2]!;
    const f3 = coefficients[base + 3]! * q[base + 3]!;
    const row = v * 4;
    if ((coefficients[base + 1]! | coefficients[base + 2]! | coefficients[base + 3]!) === 0) {
      const level = f0 * m[0]!;
      ws[row] = level;
      ws[row + 1] = level;
      ws[row + 2] = level;
      ws[row + 3] = level;
      continue;
    }
    for (let x = 0; x < 4; x++) ws[row + x] = f0 * m[x * 4]! + f1 * m[x * 4 + 1]! + f2 * m[x * 4 + 2]! + f3 * m[x * 4 + 3]!;
  }
  for (let y = 0; y < 4; y++) {
    const out = offset + y * stride;
    const b0 = m[y * 4]!,
      b1 = m[y * 4 + 1]!,
      b2 = m[y * 4 + 2]!,
      b3 = m[y * 4 + 3]!;
    for (let x = 0; x < 4; x++) {
      plane[out + x] = clamp((ws[x]! * b0 + ws[4 + x]! * b1 + ws[8 + x]! * b2 + ws[12 + x]! * b3) / 4 + 128);
    }
  }
}

const C = Math.SQRT1_2;

/** 2x2 output from the 2x2 lowest frequencies (scale 1/4). */
function idct2(coefficients: Int32Array, q: Float32Array, plane: Uint8Array, offset: number, stride: number): void {
  const f00 = coefficients[0]! * q[0]! * 0.5; // C(0)C(0)
  const f01 = coefficients[1]! * q[1]! * C * C; // C(0) * cos(pi/4)
  const f10 = coefficients[8]! * q[8]! * C * C;
  const f11 = coefficients[9]! * q[9]! * 0.5; // cos(pi/4)^2
  // x = 0 takes +cos(pi/4), x = 1 takes -cos(pi/4).
  plane[offset] = clamp((f00 + f01 + f10 + f11) / 4 + 128);
  plane[offset + 1] = clamp((f00 - f01 + f10 - f11) / 4 + 128);
  plane[offset + stride] = clamp((f00 + f01 - f10 - f11) / 4 + 128);
  plane[offset + stride + 1] = clamp((f00 - f01 - f10 + f11) / 4 + 128);
}

/** 1x1: the block's mean (scale 1/8). */
function idct1(coefficients: Int32Array, q: Float32Array, plane: Uint8Array, offset: number): void {
  plane[offset] = clamp((coefficients[0]! * q[0]!) / 8 + 128);
}

/** Writes one block's blockSize^2 samples into `plane` at `offset` (row stride `stride`). */
export function idctBlock(
  blockSize: BlockSize,
  coefficients: Int32Array,
  q: Float32Array,
  plane: Uint8Array,
  offset: number,
  stride: number,
): void {
  switch (blockSize) {
    case 8:
      return idct8(coefficients, q, plane, offset, stride);
    case 4:
      return idct4(coefficients, q, plane, offset, stride);
    case 2:
      return idct2(coefficients, q, plane, offset, stride);
    case 1:
      return idct1(coefficients, q, plane, offset);
    case 3:
      return idct3(coefficients, q, plane, offset, stride);
    case 5:
      return idct5(coefficients, q, plane, offset, stride);
    case 6:
      return idct6(coefficients, q, plane, offset, stride);
    case 7:
      return idct7(coefficients, q, plane, offset, stride);
  }
}
