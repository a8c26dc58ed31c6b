/**
 * The Cloudflare Images binding as the resizer (opt-in, docs/decisions.md "Image decoding"): an
 * operator who adds `[images] binding = "IMAGES"` to wrangler.toml and sets IMAGE_RESIZER = "images"
 * has Medium and Small made by Cloudflare's image service, outside the isolate, so no memory bound
 * applies and every format it reads (JPEG, PNG, GIF, WebP, AVIF, ...) at any size gets versions.
 *
 * What differs from the WASM path: the integrity check is the service's (it read the image, or it
 * did not); versions are JPEG, or PNG when the original format can be transparent; no metadata is
 * carried; the colours are the service's conversion. An image with an EXIF rotation, a format the
 * service refuses, or any failure of the binding falls back to the WASM path, so an upload never gets
 * less than it would without the binding.
 */
import { FORMAT_MIME, type ImageFormat } from "./formats";
import { readHeader, type ImageHeader } from "./header";
import { JPEG_QUALITY, MEDIUM_MAX_SIDE, SMALL_MAX_SIDE } from "./limits";
import type { ImageOutcome, ResizedSize, ResizedVersion } from "./pipeline";
import { fitWithin } from "./resample";
import { asText } from "./segments";

/** Formats the Images binding reads (its documented inputs; SVG is not resized by this service). */
export const IMAGES_BINDING_FORMATS: ReadonlySet<ImageFormat> = new Set(["jpeg", "png", "gif", "webp", "avif", "heic", "bmp", "tiff"]);

const stream = (bytes: Uint8Array) => new Blob([bytes]).stream();

/**
 * Medium and Small by the Images binding, or null when the binding cannot read the image (the caller
 * then runs the WASM pipeline, which also says why when it cannot either).
 */
export async function resizeWithImagesBinding(images: ImagesBinding, format: ImageFormat, bytes: Uint8Array): Promise<ImageOutcome | null> {
  if (!IMAGES_BINDING_FORMATS.has(format)) return null;
  let info: ImageInfoResponse;
  try {
    info = await images.info(stream(bytes));
  } catch {
    return null;
  }
  if (!("width" in info) || !info.width || !info.height) return null;
  // The size as shown, read as the WASM path reads it. An image with an EXIF rotation goes the WASM
  // way: the service's and its local stand-in's handling of orientation differ.
  let header: ImageHeader;
  try {
    header = readHeader(format, bytes);
  } catch {
    return null;
  }
  if (header.orientation !== 1 || !header.width || !header.height) return null;
  const { width, height } = header;
  const longSide = Math.max(width, height);
  const wanted = (
    [
      ["Medium", MEDIUM_MAX_SIDE],
      ["Small", SMALL_MAX_SIDE],
    ] as [ResizedSize, number][]
  ).filter(([, limit]) => longSide > limit);
  const contentType = mayBeTransparent(format, bytes) ? FORMAT_MIME.png : FORMAT_MIME.jpeg;
  const versions: ResizedVersion[] = [];
  for (const [size, limit] of wanted) {
    const target = fitWithin(width, height, limit);
    try {
      // The width alone: the height follows the aspect ratio (locally and in the service alike).
      const result = await images
        .input(stream(bytes))
        .transform({ width: target.width })
        .output({ format: contentType as "image/jpeg" | "image/png", quality: JPEG_QUALITY });
      const out = new Uint8Array(await new Response(result.image()).arrayBuffer());
      const made = await images.info(stream(out));
      if (!("width" in made)) return null;
      versions.push({ size, width: made.width, height: made.height, contentType, bytes: out });
    } catch {
      return null;
    }
  }
  return { width, height, integrity: "passed", detail: null, versions, decoded: null };
}

/** Versions are PNG where the original can hold transparency (PNG, GIF, BMP, TIFF, WebP with alpha), JPEG otherwise. */
function mayBeTransparent(format: ImageFormat, bytes: Uint8Array): boolean {
  if (format === "webp")
    return asText(bytes.subarray(12, 16)) === "VP8L" || (asText(bytes.subarray(12, 16)) === "VP8X" && (bytes[20]! & 0x10) !== 0);
  return format === "png" || format === "gif" || format === "bmp" || format === "tiff";
}
