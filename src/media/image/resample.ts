/**
 * Downscaling in JavaScript: a separable convolution whose kernel is widened by the scale factor,
 * so every source pixel contributes (no aliasing), as Pillow and libvips resample. A large
 * reduction is first done by averaging whole boxes of pixels (Pillow's `reducing_gap`: the box
 * step leaves at least 1.5x for the kernel), which costs one add per source pixel instead of a
 * dozen multiplies. The kernel is Catmull-Rom (bicubic, a = -0.5) for reductions of 1.5x and more,
 * and the triangle (bilinear) below that: after the JPEG decoder's DCT-domain scaling, Medium is
 * typically a 1.01x to 1.14x step, where the two look alike and the triangle needs half the taps.
 * Colour with alpha is resampled premultiplied, so transparent pixels do not bleed their
 * (invisible) colour into the edges.
 */

export interface Pixels {
  width: number;
  height: number;
  /** 1 grey, 2 grey + alpha, 3 RGB, 4 RGBA; interleaved 8-bit. */
  channels: 1 | 2 | 3 | 4;
  data: Uint8Array;
}

/** The kernel step shrinks by at least this much after the box step (Pillow's reducing_gap). */
const REDUCING_GAP = 1.5;

interface Kernel {
  support: number;
  weight(x: number): number;
}

const CUBIC: Kernel = {
  support: 2,
  weight(x) {
    const a = -0.5;
    x = Math.abs(x);
    if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2) return (((x - 5) * x + 8) * x - 4) * a;
    return 0;
  },
};

const TRIANGLE: Kernel = { support: 1, weight: (x) => Math.max(0, 1 - Math.abs(x)) };

/**
 * For each output index: the first source index and `taps` weights (a multiple of 4, zero-padded,
 * with the window moved inside the source), so the passes below run unrolled groups of four taps
 * with the weights in registers: about 2x faster in V8 than a loop over a varying tap count.
 */
interface Contributions {
  start: Int32Array;
  taps: number;
  weights: Float64Array;
}

function contributions(inSize: number, outSize: number): Contributions {
  const scale = inSize / outSize;
  const kernel = scale >= REDUCING_GAP ? CUBIC : TRIANGLE;
  const filterScale = Math.max(scale, 1);
  const support = kernel.support * filterScale;
  const span = Math.ceil(support) * 2 + 1;
  let widest = 1;
  for (let i = 0; i < outSize; i++) {
    const center = (i + 0.5) * scale;
    widest = Math.max(widest, Math.min(inSize, Math.ceil(center + support)) - Math.max(0, Math.floor(center - support)));
  }
  // Never more taps than source samples: a 1 px wide source has one.
  const taps = Math.min(Math.ceil(widest / 4) * 4, Math.max(1, inSize));
  const start = new Int32Array(outSize);
  const weights = new Float64Array(outSize * taps);
  const raw = new Float64Array(span + 1);
  for (let i = 0; i < outSize; i++) {
    const center = (i + 0.5) * scale;
    const first = Math.max(0, Math.floor(center - support));
    const last = Math.min(inSize, Math.ceil(center + support));
    let total = 0;
    for (let j = first; j < last; j++) {
      const w = kernel.weight((j + 0.5 - center) / filterScale);
      raw[j - first] = w;
      total += w;
    }
    const from = Math.max(0, Math.min(first, inSize - taps));
    start[i] = from;
    for (let j = first; j < last; j++) weights[i * taps + j - from] = total === 0 ? 0 : raw[j - first]! / total;
  }
  return { start, taps, weights };
}

// Results go through Uint8ClampedArray stores, which round and clamp (the kernel's negative lobes
// overshoot) in the engine: measured faster here than integer arithmetic with explicit clamping.

function horizontal(src: Uint8Array, width: number, height: number, ch: number, outWidth: number): Uint8Array {
  const srcStride = width * ch;
  const { start, taps, weights } = contributions(width, outWidth);
  const out = new Uint8ClampedArray(outWidth * height * ch);
  if (taps % 4 !== 0) return horizontalPlain(src, height, ch, outWidth, srcStride, start, taps, weights, out);
  if (ch === 1) {
    // Column by column: the column's weights stay in registers for every row.
    const column = new Float64Array(height);
    for (let x = 0; x < outWidth; x++) {
      const s0 = start[x]!;
      for (let g = 0; g < taps; g += 4) {
        const q = x * taps + g;
        const a = weights[q]!,
          b = weights[q + 1]!,
          c = weights[q + 2]!,
          d = weights[q + 3]!;
        if (taps === 4) {
          for (let y = 0, p = s0, o = x; y < height; y++, p += srcStride, o += outWidth)
            out[o] = src[p]! * a + src[p + 1]! * b + src[p + 2]! * c + src[p + 3]! * d;
        } else if (g === 0) {
          for (let y = 0, p = s0; y < height; y++, p += srcStride)
            column[y] = src[p]! * a + src[p + 1]! * b + src[p + 2]! * c + src[p + 3]! * d;
        } else {
          for (let y = 0, p = s0 + g; y < height; y++, p += srcStride)
            column[y] = column[y]! + src[p]! * a + src[p + 1]! * b + src[p + 2]! * c + src[p + 3]! * d;
        }
      }
      if (taps > 4) for (let y = 0, o = x; y < height; y++, o += outWidth) out[o] = column[y]!;
    }
    return new Uint8Array(out.buffer);
  }
  const c1 = ch,
    c2 = 2 * ch,
    c3 = 3 * ch;
  for (let y = 0; y < height; y++) {
    const row = y * srcStride;
    let o = y * outWidth * ch;
    for (let x = 0; x < outWidth; x++) {
      const base = row + start[x]! * ch;
      for (let c = 0; c < ch; c++) {
        let acc = 0;
        for (let g = 0, q = x * taps; g < taps; g += 4, q += 4) {
          const p = base + g * ch + c;
          acc += src[p]! * weights[q]! + src[p + c1]! * weights[q + 1]! + src[p + c2]! * weights[q + 2]! + src[p + c3]! * weights[q + 3]!;
        }
        out[o++] = acc;
      }
    }
  }
  return new Uint8Array(out.buffer);
}

/** Sources narrower than four pixels: a plain loop. */
function horizontalPlain(
  src: Uint8Array,
  height: number,
  ch: number,
  outWidth: number,
  srcStride: number,
  start: Int32Array,
  taps: number,
  weights: Float64Array,
  out: Uint8ClampedArray,
): Uint8Array {
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < outWidth; x++) {
      for (let c = 0; c < ch; c++) {
        let acc = 0;
        for (let k = 0; k < taps; k++) acc += src[y * srcStride + (start[x]! + k) * ch + c]! * weights[x * taps + k]!;
        out[(y * outWidth + x) * ch + c] = acc;
      }
    }
  }
  return new Uint8Array(out.buffer);
}

/** Whole rows at a time, four source rows per step: sequential memory, weights in registers. */
function vertical(src: Uint8Array, width: number, height: number, ch: number, outHeight: number): Uint8Array {
  const { start, taps, weights } = contributions(height, outHeight);
  const rowLength = width * ch;
  const out = new Uint8ClampedArray(rowLength * outHeight);
  if (taps % 4 !== 0) {
    for (let y = 0; y < outHeight; y++) {
      for (let i = 0; i < rowLength; i++) {
        let acc = 0;
        for (let k = 0; k < taps; k++) acc += src[(start[y]! + k) * rowLength + i]! * weights[y * taps + k]!;
        out[y * rowLength + i] = acc;
      }
    }
    return new Uint8Array(out.buffer);
  }
  const acc = taps > 4 ? new Float64Array(rowLength) : undefined;
  for (let y = 0; y < outHeight; y++) {
    const o = y * rowLength;
    for (let g = 0; g < taps; g += 4) {
      const q = y * taps + g;
      const a = weights[q]!,
        b = weights[q + 1]!,
        c = weights[q + 2]!,
        d = weights[q + 3]!;
      const r0 = (start[y]! + g) * rowLength,
        r1 = r0 + rowLength,
        r2 = r1 + rowLength,
        r3 = r2 + rowLength;
      if (!acc) {
        for (let i = 0; i < rowLength; i++) out[o + i] = src[r0 + i]! * a + src[r1 + i]! * b + src[r2 + i]! * c + src[r3 + i]! * d;
      } else if (g === 0) {
        for (let i = 0; i < rowLength; i++) acc[i] = src[r0 + i]! * a + src[r1 + i]! * b + src[r2 + i]! * c + src[r3 + i]! * d;
      } else {
        for (let i = 0; i < rowLength; i++) acc[i] = acc[i]! + src[r0 + i]! * a + src[r1 + i]! * b + src[r2 + i]! * c + src[r3 + i]! * d;
      }
    }
    if (acc) out.set(acc, o);
  }
  return new Uint8Array(out.buffer);
}

/** Averages fx x fy boxes (the last row and column of boxes may be partial). */
function reduceBox(src: Uint8Array, width: number, height: number, ch: number, fx: number, fy: number) {
  const outWidth = Math.ceil(width / fx);
  const outHeight = Math.ceil(height / fy);
  const out = new Uint8ClampedArray(outWidth * outHeight * ch);
  const sums = new Float64Array(outWidth * ch);
  for (let oy = 0; oy < outHeight; oy++) {
    sums.fill(0);
    const y0 = oy * fy;
    const y1 = Math.min(height, y0 + fy);
    for (let y = y0; y < y1; y++) {
      const row = y * width * ch;
      for (let x = 0; x < width; x++) {
        const s = ((x / fx) | 0) * ch;
        const p = row + x * ch;
        for (let c = 0; c < ch; c++) sums[s + c] = sums[s + c]! + src[p + c]!;
      }
    }
    const rows = y1 - y0;
    for (let ox = 0; ox < outWidth; ox++) {
      const area = (Math.min(width, (ox + 1) * fx) - ox * fx) * rows;
      for (let c = 0; c < ch; c++) out[(oy * outWidth + ox) * ch + c] = sums[ox * ch + c]! / area;
    }
  }
  return { data: new Uint8Array(out.buffer), width: outWidth, height: outHeight };
}

function hasTransparency(image: Pixels): boolean {
  if (image.channels !== 2 && image.channels !== 4) return false;
  const { data, channels } = image;
  for (let i = channels - 1; i < data.length; i += channels) if (data[i] !== 255) return true;
  return false;
}

/** Multiplies (or divides back) the colour channels by alpha, in place. */
function premultiply(data: Uint8Array, channels: number, undo: boolean): void {
  const colours = channels - 1;
  for (let i = 0; i < data.length; i += channels) {
    const alpha = data[i + colours]!;
    if (alpha === 255) continue;
    for (let c = 0; c < colours; c++) {
      const v = undo ? (alpha === 0 ? 0 : Math.round((data[i + c]! * 255) / alpha)) : Math.round((data[i + c]! * alpha) / 255);
      data[i + c] = v > 255 ? 255 : v;
    }
  }
}

/**
 * A copy of `image` at `width` x `height` (a downscale; an equal size returns a copy). With
 * `consume`, the caller gives up `image`: a transparent one is premultiplied in place instead of in
 * a copy (a decoded 3 MP RGBA PNG is 12 MB).
 */
export function resize(image: Pixels, width: number, height: number, consume = false): Pixels {
  const { channels } = image;
  const transparent = hasTransparency(image);
  let data = image.data;
  if (transparent) {
    if (!consume) data = data.slice();
    premultiply(data, channels, false);
  }
  let current = { width: image.width, height: image.height };
  const fx = Math.max(1, Math.floor(image.width / width / REDUCING_GAP));
  const fy = Math.max(1, Math.floor(image.height / height / REDUCING_GAP));
  if (fx > 1 || fy > 1) {
    const reduced = reduceBox(data, image.width, image.height, channels, fx, fy);
    data = reduced.data;
    current = reduced;
  }
  if (width !== current.width) data = horizontal(data, current.width, current.height, channels, width);
  if (height !== current.height) data = vertical(data, width, current.height, channels, height);
  if (data === image.data) data = data.slice();
  if (transparent) premultiply(data, channels, true);
  return { width, height, channels, data };
}

/** One 8-bit plane (rows `stride` apart, e.g. a JPEG component plane) resized to outWidth x outHeight, packed. */
export function resizePlane(
  data: Uint8Array,
  stride: number,
  width: number,
  height: number,
  outWidth: number,
  outHeight: number,
): Uint8Array {
  let packed = data;
  if (stride !== width) {
    packed = new Uint8Array(width * height);
    for (let y = 0; y < height; y++) packed.set(data.subarray(y * stride, y * stride + width), y * width);
  }
  return resize({ width, height, channels: 1, data: packed }, outWidth, outHeight).data;
}

/** The largest size within `limit` px on the longer side, keeping the aspect ratio (at least 1 px). */
export function fitWithin(width: number, height: number, limit: number): { width: number; height: number } {
  if (width <= limit && height <= limit) return { width, height };
  const ratio = limit / Math.max(width, height);
  return { width: Math.max(1, Math.round(width * ratio)), height: Math.max(1, Math.round(height * ratio)) };
}
