/**
 * From uploaded bytes to the resized versions. The header is read first and checked against the
 * pixel limits, so nothing too large is ever decoded. JPEGs are decoded by our scaled decoder;
 * PNG (interlaced pass by pass), BMP (run-length encoded too), GIF, WebP (lossy, lossless, an
 * animation's first frame) and TIFF row by row, HEIC tile by tile (libheif), AVIF grids tile by tile
 * and other AVIFs whole up to 2 MP (libavif), all averaged into boxes as they arrive; photon encodes
 * the versions. Decoding is the integrity check (spec 2.6, check 4), so every decodable image is
 * decoded even when it is already within every size. Nothing here throws for a bad image: the
 * outcome says what was checked, what failed and which versions exist.
 */
import { CorruptImageError, ImageTooLargeError, UnsupportedImageError } from "./errors";
import { applyOrientation } from "./exif";
import { FORMAT_MIME, type ImageFormat } from "./formats";
import { displayedSize, readHeader, type ImageHeader } from "./header";
import { planesToPixels, type JpegPlanes } from "./jpeg/color";
import { decodeJpegPlanes } from "./jpeg/decoder";
import type { BlockSize } from "./jpeg/idct";
import {
  JPEG_MAX_COEFFICIENT_BYTES,
  JPEG_MAX_PIXELS,
  HEIF_MAX_PIXELS,
  MAX_SIDE,
  JPEG_QUALITY,
  MEDIUM_MAX_SIDE,
  PNG_MAX_PIXELS,
  SMALL_MAX_SIDE,
  PIXELS_WITHOUT_RATIO,
  MAX_PIXELS_PER_BYTE,
} from "./limits";
import { Slicer } from "../../pkg/slicer";
import { withPhoton } from "./photon/codec";
import type { RgbaImage } from "./photon/instance";
import { fitWithin, resize, resizePlane, type Pixels } from "./resample";
import { decodePngReduced } from "./png-stream";
import { decodeBmpReduced } from "./bmp-stream";
import { readHeifColour, readJpegIcc, readPngIcc, srgbTransform, type ColourTransform } from "./icc";
import { decodeHeifReduced } from "./heif/decode";
import { decodeTiffReduced, readTiffIcc } from "./tiff";
import { decodeGifReduced } from "./gif";
import { decodeAvifReduced } from "./avif";
import { decodeWebpReduced, webpLayout } from "./webp/decode";

export type ResizedSize = "Medium" | "Small";
export type IntegrityOutcome = "passed" | "failed" | "notChecked";

export interface ResizedVersion {
  size: ResizedSize;
  width: number;
  height: number;
  contentType: string;
  bytes: Uint8Array;
}

export interface ImageOutcome {
  /** Dimensions as shown (EXIF orientation applied); null when unknown (SVG) or unreadable. */
  width: number | null;
  height: number | null;
  integrity: IntegrityOutcome;
  /** Why the integrity check failed or did not run, or why no resized versions were made. */
  detail: string | null;
  versions: ResizedVersion[];
  /** How the image was decoded (at blockSize/8 of its size), for logs and the benchmark. */
  decoded: { blockSize: BlockSize; width: number; height: number } | null;
}

/** The encoder seam (house style: platform parts behind small interfaces), photon in production. */
export interface ImageCodec {
  encode(image: RgbaImage, format: "jpeg" | "png", quality: number): Uint8Array;
}

export const photonCodec: ImageCodec = {
  encode: (image, format, quality) => withPhoton((photon) => photon.encode(image, format, quality)),
};

export interface SizeLimits {
  medium: number;
  small: number;
}

/** Decoded by this service (the rest are stored as uploaded). */
const DECODED_FORMATS: ReadonlySet<ImageFormat> = new Set(["jpeg", "png", "gif", "webp", "bmp", "heic", "tiff", "avif"]);

/**
 * The smallest JPEG decode (blockSize/8 of the size) that still has at least `target` pixels on the
 * longer side, so resizing only ever shrinks by less than 8/7: 4032 px decodes at 2/8 (1008 px) for
 * Medium, 3000 px at 3/8 (1125), 1632 px at 5/8 (1020). With no target (nothing to resize, only the
 * integrity check) it decodes at 1/8.
 */
function jpegBlockSize(longSide: number, target: number): BlockSize {
  for (let n = 1; n < 8; n++) if (Math.ceil((longSide * n) / 8) >= target) return n as BlockSize;
  return 8;
}

function toRgba(image: Pixels): RgbaImage {
  if (image.channels === 4) return image;
  const { width, height, channels, data } = image;
  const out = new Uint8Array(width * height * 4);
  for (let i = 0, o = 0; i < width * height; i++, o += 4) {
    const at = i * channels;
    const grey = channels <= 2;
    out[o] = data[at]!;
    out[o + 1] = grey ? data[at]! : data[at + 1]!;
    out[o + 2] = grey ? data[at]! : data[at + 2]!;
    out[o + 3] = channels === 2 ? data[at + 1]! : 255;
  }
  return { width, height, data: out };
}

function isOpaque(image: Pixels): boolean {
  if (image.channels !== 4 && image.channels !== 2) return true;
  for (let i = image.channels - 1; i < image.data.length; i += image.channels) if (image.data[i] !== 255) return false;
  return true;
}

/**
 * A decoded image: JPEGs as component planes (resized before colour conversion, see
 * `jpegToSize`), everything else as RGBA pixels.
 */
type Decoded = ({ kind: "planes"; planes: JpegPlanes } | { kind: "pixels"; pixels: Pixels }) & {
  blockSize: BlockSize;
  /** The conversion of its colours to sRGB (from its ICC profile, or a HEIF's nclx), or null. */
  colour: ColourTransform | null;
};

/** A decoder that averages boxes of `factor` pixels as it goes, and the colour profile it reads. */
interface BoxDecoder {
  /** The most pixels an image may have (CPU time: the memory does not grow with them). */
  maxPixels: number;
  /** Decodes, giving the thread back to the runtime every slice of work (slice.ts). */
  decode(
    bytes: Uint8Array,
    factor: number,
    header: ImageHeader,
    slicer: Slicer,
  ): Promise<Pixels | { pixels: Pixels; iccProfile: Uint8Array | null }>;
  icc?(bytes: Uint8Array): Uint8Array | null;
  /** Its colour when neither the decoder nor `icc` gave a profile (a HEIF's colr: profile, else nclx code points). */
  colour?(bytes: Uint8Array): ColourTransform | null;
}

const BOX_DECODERS: Partial<Record<ImageFormat, BoxDecoder>> = {
  png: { maxPixels: PNG_MAX_PIXELS, decode: (bytes, factor, _, slicer) => decodePngReduced(bytes, factor, slicer), icc: readPngIcc },
  gif: { maxPixels: PNG_MAX_PIXELS, decode: (bytes, factor, _, slicer) => decodeGifReduced(bytes, factor, slicer) },
  bmp: { maxPixels: PNG_MAX_PIXELS, decode: (bytes, factor, _, slicer) => decodeBmpReduced(bytes, factor, slicer) },
  webp: {
    maxPixels: PNG_MAX_PIXELS,
    decode: (bytes, factor, _, slicer) => decodeWebpReduced(bytes, factor, slicer),
    icc: (bytes) => webpLayout(bytes).iccProfile,
  },
  tiff: { maxPixels: PNG_MAX_PIXELS, decode: (bytes, factor, _, slicer) => decodeTiffReduced(bytes, factor, slicer), icc: readTiffIcc },
  // libheif reads the profile; the header's size (the largest ispe) is the picture's as stored.
  heic: {
    maxPixels: HEIF_MAX_PIXELS,
    decode: (bytes, factor, _, slicer) => decodeHeifReduced(bytes, () => factor, slicer),
    colour: readHeifColour,
  },
  // The picture whole up to AVIF_MAX_PIXELS, a grid's tiles one at a time (avif.ts says which).
  avif: {
    maxPixels: HEIF_MAX_PIXELS,
    decode: (bytes, factor, header, slicer) => decodeAvifReduced(bytes, header.width!, header.height!, factor, slicer),
    colour: readHeifColour,
  },
};

async function decode(format: ImageFormat, bytes: Uint8Array, header: ImageHeader, target: number, slicer: Slicer): Promise<Decoded> {
  const width = header.width!;
  const height = header.height!;
  // Decoders hold a row or two: a side this long would make a row alone hundreds of MiB.
  if (Math.max(width, height) > MAX_SIDE)
    throw new ImageTooLargeError(`${width}x${height} has a side longer than the ${MAX_SIDE} pixels an image may have to be resized`);
  // The time of one decode follows its pixels, and some formats describe millions of them in a few
  // bytes: past PIXELS_WITHOUT_RATIO, a file must bring a byte for every MAX_PIXELS_PER_BYTE pixels.
  const allowed = Math.max(PIXELS_WITHOUT_RATIO, bytes.length * MAX_PIXELS_PER_BYTE);
  if (width * height > allowed)
    throw new ImageTooLargeError(
      `${width}x${height} is ${Math.round((width * height) / bytes.length)} pixels per byte of its ${bytes.length}-byte file; ` +
        `images over ${PIXELS_WITHOUT_RATIO} pixels are resized up to ${MAX_PIXELS_PER_BYTE} pixels per byte (decoding time ` +
        `follows the pixels, not the bytes)`,
    );
  if (format === "jpeg") {
    if (width * height > JPEG_MAX_PIXELS)
      throw new ImageTooLargeError(`${width}x${height} is more than the ${JPEG_MAX_PIXELS} pixels a JPEG may have to be resized`);
    const blockSize = jpegBlockSize(Math.max(width, height), target);
    const profile = readJpegIcc(bytes);
    return {
      kind: "planes",
      planes: await decodeJpegPlanes(bytes, { blockSize, maxCoefficientBytes: JPEG_MAX_COEFFICIENT_BYTES }, slicer),
      blockSize,
      colour: profile ? srgbTransform(profile) : null,
    };
  }
  const boxed = BOX_DECODERS[format];
  if (!boxed) throw new UnsupportedImageError(`${format.toUpperCase()} images are not decoded`);
  if (width * height > boxed.maxPixels) {
    const name = format.toUpperCase();
    throw new ImageTooLargeError(
      `${width}x${height} is more than the ${boxed.maxPixels} pixels ${/^[AEIOU]/.test(name) ? "an" : "a"} ${name} may have to be resized`,
    );
  }
  // Boxes of whole pixels down to at most twice the target (the resampler does the rest); with
  // nothing to resize, only the integrity check, as coarse as possible.
  const longSide = Math.max(width, height);
  const result = await boxed.decode(bytes, target > 0 ? Math.floor(longSide / target) : longSide, header, slicer);
  const [pixels, profile] = "pixels" in result ? [result.pixels, result.iccProfile] : [result, boxed.icc?.(bytes) ?? null];
  return { kind: "pixels", pixels, blockSize: 8, colour: profile ? srgbTransform(profile) : (boxed.colour?.(bytes) ?? null) };
}

/**
 * A JPEG's planes resized to width x height (each plane to its share), before colour conversion:
 * at 4:2:0 that resamples 1.5 samples per pixel instead of 3, and colour is converted only for the
 * target's pixels.
 */
function resizeJpegPlanes(image: JpegPlanes, width: number, height: number): JpegPlanes {
  const planes = image.planes.map((p) => {
    const w = Math.ceil((width * p.h) / image.maxH);
    const h = Math.ceil((height * p.v) / image.maxV);
    return { ...p, data: resizePlane(p.data, p.stride, p.width, p.height, w, h), stride: w, width: w, height: h };
  });
  return { ...image, width, height, planes };
}

function outcome(header: ImageHeader | null, integrity: IntegrityOutcome, detail: string | null): ImageOutcome {
  const shown = header ? displayedSize(header) : { width: null, height: null };
  return { ...shown, integrity, detail, versions: [], decoded: null };
}

/**
 * Checks and resizes an image whose magic bytes said `format`. Medium and Small are made only when
 * the image is larger than them (longer side > 1000 px, > 256 px): an image within a size IS that
 * size, and is served as it was uploaded.
 */
export function processImage(
  format: ImageFormat,
  bytes: Uint8Array,
  codec: ImageCodec = photonCodec,
  sizes: SizeLimits = { medium: MEDIUM_MAX_SIDE, small: SMALL_MAX_SIDE },
  slicer: Slicer = new Slicer(),
): Promise<ImageOutcome> {
  return oneDecodeAtATime(() => checkAndResize(format, bytes, codec, sizes, slicer));
}

/** The end of the queue of images waiting for this isolate's decode slot. */
let decodeQueue: Promise<unknown> = Promise.resolve();

/**
 * One image is decoded and resized at a time in an isolate; the others wait their turn (in order).
 * Decodes pause between slices (slice.ts), so without this two uploads would interleave and both hold
 * their decoding memory at once (a libheif instance alone may grow to 100 MiB of the isolate's 128).
 */
function oneDecodeAtATime<T>(work: () => Promise<T>): Promise<T> {
  const run = decodeQueue.then(work);
  decodeQueue = run.catch(() => undefined);
  return run;
}

async function checkAndResize(
  format: ImageFormat,
  bytes: Uint8Array,
  codec: ImageCodec,
  sizes: SizeLimits,
  slicer: Slicer,
): Promise<ImageOutcome> {
  let header: ImageHeader;
  try {
    header = readHeader(format, bytes);
  } catch (error) {
    if (error instanceof CorruptImageError) return outcome(null, "failed", error.message);
    throw error;
  }
  if (!DECODED_FORMATS.has(format)) {
    return outcome(
      header,
      "notChecked",
      `${format.toUpperCase()} is stored as uploaded: this service does not decode it, so it has no resized versions`,
    );
  }
  const width = header.width!;
  const height = header.height!;
  const longSide = Math.max(width, height);
  const wanted: [ResizedSize, number][] = (
    [
      ["Medium", sizes.medium],
      ["Small", sizes.small],
    ] as [ResizedSize, number][]
  ).filter(([, limit]) => longSide > limit);
  let decoded: Decoded;
  try {
    decoded = await decode(format, bytes, header, wanted[0]?.[1] ?? 0, slicer);
  } catch (error) {
    if (error instanceof CorruptImageError) return outcome(header, "failed", error.message);
    if (error instanceof UnsupportedImageError || error instanceof ImageTooLargeError) return outcome(header, "notChecked", error.message);
    throw error;
  }
  await slicer.pause();
  const decodedSize = decoded.kind === "planes" ? { width: decoded.planes.width, height: decoded.planes.height } : decoded.pixels;
  // Lossy originals become JPEG versions unless they are transparent.
  const lossy = format === "heic" || format === "avif" || (format === "webp" && webpLayout(bytes).kind === "lossy");
  const asJpeg = format === "jpeg" || (lossy && decoded.kind === "pixels" && isOpaque(decoded.pixels));
  // The versions carry no ICC profile: the colours of an image with a profile (Display P3 phones,
  // Adobe RGB cameras) or a wide-gamut nclx are converted to sRGB, which is how a profile-less image is shown.
  const colour = decoded.colour;
  // Pixels are converted once, before the first resize (every version is made from them); JPEG
  // planes become pixels per version, and each is converted then.
  if (colour && decoded.kind === "pixels") colour.apply(decoded.pixels);
  const versions: ResizedVersion[] = [];
  // Each size is resized from the previous (larger) one: cheaper, and each step is properly filtered.
  let previous: Pixels | JpegPlanes = decoded.kind === "pixels" ? decoded.pixels : decoded.planes;
  for (const [size, limit] of wanted) {
    const target = fitWithin(width, height, limit);
    let resized: Pixels;
    if ("planes" in previous) {
      previous = resizeJpegPlanes(previous, target.width, target.height);
      resized = planesToPixels(previous) as Pixels;
    } else {
      // The decoded pixels are not needed again: a transparent image is premultiplied in place.
      resized = resize(previous, target.width, target.height, true);
      previous = resized;
    }
    if (colour && decoded.kind === "planes") colour.apply(resized);
    const shown = applyOrientation(resized, header.orientation) as Pixels;
    versions.push({
      size,
      width: shown.width,
      height: shown.height,
      contentType: asJpeg ? FORMAT_MIME.jpeg : FORMAT_MIME.png,
      bytes: codec.encode(toRgba(shown), asJpeg ? "jpeg" : "png", JPEG_QUALITY),
    });
    // Resizing and encoding a version take tens of ms: the thread goes back between them.
    await slicer.pause();
  }
  return {
    ...displayedSize(header),
    integrity: "passed",
    detail: null,
    versions,
    decoded: { blockSize: decoded.blockSize, width: decodedSize.width, height: decodedSize.height },
  };
}
