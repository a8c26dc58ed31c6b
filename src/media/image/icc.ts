/**
 * Colour of photos with an ICC profile (issue 11): phones write Display P3, cameras Adobe RGB. The
 * resized versions carry no profile, so a viewer reads them as sRGB; their pixels are converted to
 * sRGB instead, with the profile's matrix and tone curves (the matrix/TRC form every RGB camera and
 * phone profile has). A profile of another form (lookup tables, CMYK, grey) is left alone.
 *
 * Why our own code: the maintained ICC packages on npm read profile descriptions, not colour
 * transforms, and a matrix/TRC transform is a 3x3 matrix and three curves.
 */
import { unzlibSync } from "fflate";
import type { Pixels } from "./resample";
import { asText, concatBytes, heifFile, jpegSegments, pngChunks } from "./segments";

/** The profile in a PNG's iCCP chunk (a name, a zero byte, method 0, then the zlib-compressed profile), or null. */
export function readPngIcc(bytes: Uint8Array): Uint8Array | null {
  for (const { type, body } of pngChunks(bytes)) {
    if (type === "IDAT") return null; // the profile comes before the image data
    if (type !== "iCCP") continue;
    const zero = body.indexOf(0);
    if (zero < 1 || zero > 79 || body[zero + 1] !== 0) return null;
    try {
      return unzlibSync(body.subarray(zero + 2));
    } catch {
      return null; // an unreadable profile: the colours stay as stored
    }
  }
  return null;
}

const ICC_SIGNATURE = "ICC_PROFILE\u0000";

/** The profile in a JPEG's APP2 "ICC_PROFILE" segments (in sequence order), or null. */
export function readJpegIcc(bytes: Uint8Array): Uint8Array | null {
  const parts = new Map<number, Uint8Array>();
  for (const { marker, body } of jpegSegments(bytes)) {
    if (marker === 0xe2 && body.length > 14 && asText(body.subarray(0, 12)) === ICC_SIGNATURE) parts.set(body[12]!, body.subarray(14));
  }
  if (parts.size === 0) return null;
  return concatBytes([...parts.entries()].sort((a, b) => a[0] - b[0]).map(([, p]) => p));
}

type Curve = (v: number) => number;

const s15 = (view: DataView, at: number) => view.getInt32(at) / 65536;

function readCurve(view: DataView, at: number, size: number): Curve | null {
  const type = String.fromCharCode(view.getUint8(at), view.getUint8(at + 1), view.getUint8(at + 2), view.getUint8(at + 3));
  if (type === "curv") {
    const count = view.getUint32(at + 8);
    if (count === 0) return (v) => v;
    if (count === 1) {
      const gamma = view.getUint16(at + 12) / 256;
      return (v) => Math.pow(v, gamma);
    }
    if (12 + count * 2 > size) return null;
    const table = Array.from({ length: count }, (_, i) => view.getUint16(at + 12 + i * 2) / 65535);
    return (v) => {
      const x = v * (count - 1);
      const i = Math.min(count - 2, Math.floor(x));
      return table[i]! + (table[i + 1]! - table[i]!) * (x - i);
    };
  }
  if (type === "para") {
    const fn = view.getUint16(at + 8);
    const n = [1, 3, 4, 5, 7][fn];
    if (n === undefined || 12 + n * 4 > size) return null;
    const [g, a = 1, b = 0, c = 0, d = 0, e = 0, f = 0] = Array.from({ length: n }, (_, i) => s15(view, at + 12 + i * 4));
    switch (fn) {
      case 0:
        return (v) => Math.pow(v, g!);
      case 1:
        return (v) => (v >= -b / a ? Math.pow(a * v + b, g!) : 0);
      case 2:
        return (v) => (v >= -b / a ? Math.pow(a * v + b, g!) + c : c);
      case 3:
        return (v) => (v >= d ? Math.pow(a * v + b, g!) : c * v);
      default:
        return (v) => (v >= d ? Math.pow(a * v + b, g!) + e : c * v + f);
    }
  }
  return null;
}

/** XYZ (D50) to linear sRGB: the inverse of sRGB's Bradford-adapted primaries. */
const SRGB_D50 = [
  [0.4360747, 0.3850649, 0.1430804],
  [0.2225045, 0.7168786, 0.0606169],
  [0.0139322, 0.0971045, 0.7141733],
];

function invert(m: number[][]): number[][] {
  const [[a, b, c], [d, e, f], [g, h, i]] = m as [[number, number, number], [number, number, number], [number, number, number]];
  const det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g);
  return [
    [(e * i - f * h) / det, (c * h - b * i) / det, (b * f - c * e) / det],
    [(f * g - d * i) / det, (a * i - c * g) / det, (c * d - a * f) / det],
    [(d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det],
  ];
}

const multiply = (a: number[][], b: number[][]) => a.map((row) => [0, 1, 2].map((j) => row.reduce((s, v, k) => s + v * b[k]![j]!, 0)));

export interface ColourTransform {
  /** The profile's description (for logs), e.g. "Display P3". */
  name: string;
  /** Converts 8-bit RGB or RGBA pixels to sRGB in place. */
  apply(image: Pixels): void;
}

/** The sRGB transform of an RGB matrix/TRC profile, or null when the profile is not one (or is sRGB). */
export function srgbTransform(profile: Uint8Array): ColourTransform | null {
  if (profile.length < 132) return null;
  const view = new DataView(profile.buffer, profile.byteOffset, profile.byteLength);
  const space = String.fromCharCode(...profile.subarray(16, 20));
  const pcs = String.fromCharCode(...profile.subarray(20, 24));
  if (space !== "RGB " || pcs !== "XYZ ") return null;
  const tags = new Map<string, { at: number; size: number }>();
  const count = view.getUint32(128);
  for (let i = 0; i < count && 132 + i * 12 + 12 <= profile.length; i++) {
    const at = 132 + i * 12;
    const sig = String.fromCharCode(...profile.subarray(at, at + 4));
    const offset = view.getUint32(at + 4);
    const size = view.getUint32(at + 8);
    if (offset + size <= profile.length) tags.set(sig, { at: offset, size });
  }
  const xyz = (sig: string) => {
    const t = tags.get(sig);
    return t && t.size >= 20 ? [s15(view, t.at + 8), s15(view, t.at + 12), s15(view, t.at + 16)] : null;
  };
  const r = xyz("rXYZ");
  const g = xyz("gXYZ");
  const b = xyz("bXYZ");
  const curves = ["rTRC", "gTRC", "bTRC"].map((sig) => {
    const t = tags.get(sig);
    return t ? readCurve(view, t.at, t.size) : null;
  });
  if (!r || !g || !b || curves.some((c) => c === null)) return null;
  const toXyz = [0, 1, 2].map((i) => [r[i]!, g[i]!, b[i]!]);
  const desc = tags.get("desc");
  return matrixTransform(
    desc ? descriptionOf(profile, desc.at, desc.size) : "an RGB profile",
    multiply(invert(SRGB_D50), toXyz),
    curves as Curve[],
  );
}

const srgbDecode: Curve = (v) => (v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4));

/**
 * The transform taking pixels through `curves` to linear light, `m` to linear sRGB, and sRGB's curve
 * back; null when that changes nothing (the matrix is the identity and the curves are sRGB's).
 */
function matrixTransform(name: string, m: number[][], curves: Curve[]): ColourTransform | null {
  const identity = m.every((row, i) => row.every((v, j) => Math.abs(v - (i === j ? 1 : 0)) < 0.002));
  const linear = curves.map((curve) => Float64Array.from({ length: 256 }, (_, i) => curve(i / 255)));
  const curvesAreSrgb = linear.every((lut) => lut.every((v, i) => Math.abs(v - srgbDecode(i / 255)) < 0.002));
  if (identity && curvesAreSrgb) return null;
  const ENCODE = 4096;
  const encode = Uint8Array.from({ length: ENCODE + 1 }, (_, i) => {
    const v = i / ENCODE;
    return Math.round(255 * (v <= 0.0031308 ? 12.92 * v : 1.055 * Math.pow(v, 1 / 2.4) - 0.055));
  });
  const [m0, m1, m2] = m as [number[], number[], number[]];
  const [lr, lg, lb] = linear as [Float64Array, Float64Array, Float64Array];
  return {
    name,
    apply(image) {
      if (image.channels < 3) return;
      const d = image.data;
      const step = image.channels;
      const clamp = (v: number) => encode[Math.round(Math.min(1, Math.max(0, v)) * ENCODE)]!;
      for (let i = 0; i < d.length; i += step) {
        const R = lr[d[i]!]!;
        const G = lg[d[i + 1]!]!;
        const B = lb[d[i + 2]!]!;
        d[i] = clamp(m0[0]! * R + m0[1]! * G + m0[2]! * B);
        d[i + 1] = clamp(m1[0]! * R + m1[1]! * G + m1[2]! * B);
        d[i + 2] = clamp(m2[0]! * R + m2[1]! * G + m2[2]! * B);
      }
    },
  };
}

/** Wide-gamut colour primaries of ITU-T H.273 that are converted, as x, y of red, green, blue (white is D65 for all). */
const WIDE_PRIMARIES: Record<number, { name: string; xy: number[][] }> = {
  9: {
    name: "BT.2020",
    xy: [
      [0.708, 0.292],
      [0.17, 0.797],
      [0.131, 0.046],
    ],
  },
  12: {
    name: "Display P3",
    xy: [
      [0.68, 0.32],
      [0.265, 0.69],
      [0.15, 0.06],
    ],
  },
};
const SRGB_XY = [
  [0.64, 0.33],
  [0.3, 0.6],
  [0.15, 0.06],
];
const D65 = [0.3127, 0.329];

/** Transfer characteristics of H.273 that are converted: their decoding to linear light. */
const TRANSFERS: Record<number, Curve> = {
  // BT.709, BT.601, BT.2020 (10 and 12 bit): the camera curve inverted, as colour-managed browsers do.
  1: (v) => (v < 0.081 ? v / 4.5 : Math.pow((v + 0.099) / 1.099, 1 / 0.45)),
  4: (v) => Math.pow(v, 2.2),
  5: (v) => Math.pow(v, 2.8),
  8: (v) => v,
  13: srgbDecode,
};
TRANSFERS[6] = TRANSFERS[14] = TRANSFERS[15] = TRANSFERS[1]!;

/** RGB to XYZ for primaries and white given by their x, y chromaticities. */
function rgbToXyz(xy: number[][], white: number[]): number[][] {
  const column = ([x, y]: number[]) => [x! / y!, 1, (1 - x! - y!) / y!];
  const primaries = [0, 1, 2].map((i) => xy.map((p) => column(p)[i]!));
  const w = column(white);
  const scale = invert(primaries).map((row) => row.reduce((sum, v, k) => sum + v * w[k]!, 0));
  return primaries.map((row) => row.map((v, j) => v * scale[j]!));
}

/**
 * The transform to sRGB of a colour description by code points (an `nclx` colr in HEIC and AVIF, as
 * Android phones write Display P3): wide-gamut primaries (Display P3, BT.2020) with an SDR transfer
 * are converted; BT.709 primaries (sRGB's) are shown as they are, and HDR transfers (PQ, HLG) and
 * other primaries are left alone. Null when nothing is converted.
 */
export function nclxTransform(primaries: number, transfer: number): ColourTransform | null {
  const wide = WIDE_PRIMARIES[primaries];
  const curve = TRANSFERS[transfer];
  if (!wide || !curve) return null;
  const m = multiply(invert(rgbToXyz(SRGB_XY, D65)), rgbToXyz(wide.xy, D65));
  return matrixTransform(`${wide.name} (nclx)`, m, [curve, curve, curve]);
}

/**
 * The colour of a HEIF's (HEIC's, AVIF's) primary picture as a transform to sRGB: its ICC profile
 * (colr of type prof or rICC), else its nclx code points; null when there is neither or nothing to
 * convert. (libheif reads HEIC's profile too; libavif applies neither, so AVIF's is read here.)
 */
export function readHeifColour(bytes: Uint8Array): ColourTransform | null {
  const { primary, items } = heifFile(bytes);
  const colr = (primary === null ? undefined : items.get(primary))?.properties.filter((p) => p.type === "colr") ?? [];
  const profile = colr.find((p) => ["prof", "rICC"].includes(asText(p.body.subarray(0, 4))) && p.body.length > 4);
  if (profile) return srgbTransform(profile.body.subarray(4));
  const nclx = colr.find((p) => asText(p.body.subarray(0, 4)) === "nclx" && p.body.length >= 10)?.body;
  return nclx ? nclxTransform((nclx[4]! << 8) | nclx[5]!, (nclx[6]! << 8) | nclx[7]!) : null;
}

function descriptionOf(profile: Uint8Array, at: number, size: number): string {
  const type = String.fromCharCode(...profile.subarray(at, at + 4));
  if (type === "desc") {
    const length = new DataView(profile.buffer, profile.byteOffset).getUint32(at + 8);
    return String.fromCharCode(...profile.subarray(at + 12, at + 12 + Math.min(length, 64))).replace(/\u0000+$/, "");
  }
  if (type === "mluc" && size > 28) {
    const view = new DataView(profile.buffer, profile.byteOffset);
    const length = view.getUint32(at + 20);
    const offset = view.getUint32(at + 24);
    const chars: string[] = [];
    for (let i = 0; i + 1 < Math.min(length, 128); i += 2) chars.push(String.fromCharCode(view.getUint16(at + offset + i)));
    return chars.join("");
  }
  return "an RGB profile";
}
