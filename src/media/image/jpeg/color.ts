/**
 * JPEG component planes and their conversion to pixels: chroma upsampled by repetition (the planes
 * are already scaled down, so the repeated chroma is at most a few output pixels wide) and YCbCr to
 * RGB with libjpeg's integer tables (JFIF).
 */

/** One component's samples. `width` x `height` are valid; rows are `stride` apart. */
export interface Plane {
  data: Uint8Array;
  stride: number;
  width: number;
  height: number;
  /** Sampling factors: this plane has h/maxH of the image's columns and v/maxV of its rows. */
  h: number;
  v: number;
}

export interface JpegPlanes {
  /** The image's size at the decoded scale. */
  width: number;
  height: number;
  maxH: number;
  maxV: number;
  /** 1 (grey), 3 (YCbCr, or RGB when `rgb`) or 4 (CMYK or YCCK, see `cmyk`). */
  planes: Plane[];
  rgb: boolean;
  /** Set for 4 components: YCCK (Adobe transform 2) or CMYK, and whether stored inverted (Adobe). */
  cmyk?: { ycck: boolean; inverted: boolean } | null;
  /** EXIF orientation (1..8), 1 when absent. */
  orientation: number;
}

export interface DecodedPixels {
  width: number;
  height: number;
  /** 1 (grey) or 3 (RGB) interleaved channels. */
  channels: 1 | 3;
  data: Uint8Array;
  orientation: number;
}

const CR_R = Int32Array.from({ length: 256 }, (_, i) => Math.round(1.402 * (i - 128)));
const CB_B = Int32Array.from({ length: 256 }, (_, i) => Math.round(1.772 * (i - 128)));
// The G terms are scaled by 2^16 (plus the rounding half), as in libjpeg's jdcolor.c.
const CB_G = Int32Array.from({ length: 256 }, (_, i) => Math.round(-0.344136 * (i - 128) * 65536));
const CR_G = Int32Array.from({ length: 256 }, (_, i) => Math.round(-0.714136 * (i - 128) * 65536) + 32768);

/** Pixels of `image.width` x `image.height` from planes sampled relative to that size. */
export function planesToPixels(image: JpegPlanes): DecodedPixels {
  const { width, height, planes, maxH, maxV } = image;
  if (planes.length === 1) {
    const p = planes[0]!;
    const out = new Uint8Array(width * height);
    for (let y = 0; y < height; y++) out.set(p.data.subarray(y * p.stride, y * p.stride + width), y * width);
    return { width, height, channels: 1, data: out, orientation: image.orientation };
  }
  if (planes.length === 4) return cmykToPixels(image);
  const [c0, c1, c2] = planes as [Plane, Plane, Plane];
  const columns = (c: Plane) => Int32Array.from({ length: width }, (_, x) => Math.min(c.width - 1, Math.floor((x * c.h) / maxH)));
  const x0 = columns(c0),
    x1 = columns(c1),
    x2 = columns(c2);
  const rowOf = (c: Plane, y: number) => Math.min(c.height - 1, Math.floor((y * c.v) / maxV)) * c.stride;
  const out = new Uint8ClampedArray(width * height * 3);
  const p0 = c0.data,
    p1 = c1.data,
    p2 = c2.data;
  let o = 0;
  for (let y = 0; y < height; y++) {
    const r0 = rowOf(c0, y),
      r1 = rowOf(c1, y),
      r2 = rowOf(c2, y);
    if (image.rgb) {
      for (let x = 0; x < width; x++) {
        out[o++] = p0[r0 + x0[x]!]!;
        out[o++] = p1[r1 + x1[x]!]!;
        out[o++] = p2[r2 + x2[x]!]!;
      }
      continue;
    }
    for (let x = 0; x < width; x++) {
      const luma = p0[r0 + x0[x]!]!;
      const cb = p1[r1 + x1[x]!]!;
      const cr = p2[r2 + x2[x]!]!;
      out[o++] = luma + CR_R[cr]!;
      out[o++] = luma + ((CB_G[cb]! + CR_G[cr]!) >> 16);
      out[o++] = luma + CB_B[cb]!;
    }
  }
  return { width, height, channels: 3, data: new Uint8Array(out.buffer), orientation: image.orientation };
}

/**
 * CMYK and YCCK to RGB (print JPEGs from Adobe software). Adobe stores the channels inverted (255: no
 * ink), so a pixel is R = C x K / 255 (and likewise G, B) from the stored values; YCCK first turns its
 * three YCC channels back into the stored C, M and Y: each is 255 minus what YCbCr would give as R, G, B. Without the Adobe marker
 * the channels are read as ink amounts (inverted first). A naive conversion (no ICC profile), so print
 * colours come out close, never as a negative.
 */
function cmykToPixels(image: JpegPlanes): DecodedPixels {
  const { width, height, planes, maxH, maxV } = image;
  const [c0, c1, c2, c3] = planes as [Plane, Plane, Plane, Plane];
  const ycck = image.cmyk?.ycck ?? false;
  const inverted = image.cmyk?.inverted ?? true;
  const columns = (c: Plane) => Int32Array.from({ length: width }, (_, x) => Math.min(c.width - 1, Math.floor((x * c.h) / maxH)));
  const xs = [columns(c0), columns(c1), columns(c2), columns(c3)];
  const rowOf = (c: Plane, y: number) => Math.min(c.height - 1, Math.floor((y * c.v) / maxV)) * c.stride;
  const out = new Uint8ClampedArray(width * height * 3);
  let o = 0;
  for (let y = 0; y < height; y++) {
    const r = [rowOf(c0, y), rowOf(c1, y), rowOf(c2, y), rowOf(c3, y)];
    for (let x = 0; x < width; x++) {
      let a = c0.data[r[0]! + xs[0]![x]!]!;
      let b = c1.data[r[1]! + xs[1]![x]!]!;
      let c = c2.data[r[2]! + xs[2]![x]!]!;
      let k = c3.data[r[3]! + xs[3]![x]!]!;
      if (ycck) {
        // YCC holds the complements of the stored C, M and Y (libjpeg's ycck_cmyk_convert):
        // C = 255 - R of the YCC triple, likewise M and Y; K passes through.
        const luma = a;
        a = 255 - Math.max(0, Math.min(255, luma + CR_R[c]!));
        const g = 255 - Math.max(0, Math.min(255, luma + ((CB_G[b]! + CR_G[c]!) >> 16)));
        c = 255 - Math.max(0, Math.min(255, luma + CB_B[b]!));
        b = g;
      }
      if (!inverted) {
        a = 255 - a;
        b = 255 - b;
        c = 255 - c;
        k = 255 - k;
      }
      out[o++] = (a * k + 127) / 255;
      out[o++] = (b * k + 127) / 255;
      out[o++] = (c * k + 127) / 255;
    }
  }
  return { width, height, channels: 3, data: new Uint8Array(out.buffer), orientation: image.orientation };
}
