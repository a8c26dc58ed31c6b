/**
 * The image formats of spec 2.6 and the first three checks: the file name's extension, the declared
 * MIME type, and the magic numbers at the start of the bytes.
 */

export const IMAGE_FORMATS = ["jpeg", "png", "gif", "bmp", "tiff", "ico", "webp", "heic", "svg", "avif"] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

/** The content type each format is served with. */
export const FORMAT_MIME: Record<ImageFormat, string> = {
  jpeg: "image/jpeg",
  png: "image/png",
  gif: "image/gif",
  bmp: "image/bmp",
  tiff: "image/tiff",
  ico: "image/x-icon",
  webp: "image/webp",
  heic: "image/heic",
  svg: "image/svg+xml",
  avif: "image/avif",
};

/** Spec 2.6 check 1: these extensions (case-insensitive); `.tif` is accepted as TIFF's usual short form. */
const EXTENSIONS: Record<string, ImageFormat> = {
  jpg: "jpeg",
  jpeg: "jpeg",
  png: "png",
  gif: "gif",
  bmp: "bmp",
  tiff: "tiff",
  tif: "tiff",
  ico: "ico",
  webp: "webp",
  heic: "heic",
  svg: "svg",
  avif: "avif",
};

/**
 * Spec 2.6 check 2: these MIME types, plus the aliases clients really send (image/jpg from Android
 * pickers, image/x-icon and image/vnd.microsoft.icon for ICO, image/heif for HEIC, ...).
 */
const MIME_TYPES: Record<string, ImageFormat> = {
  "image/jpeg": "jpeg",
  "image/jpg": "jpeg",
  "image/pjpeg": "jpeg",
  "image/png": "png",
  "image/x-png": "png",
  "image/gif": "gif",
  "image/bmp": "bmp",
  "image/x-bmp": "bmp",
  "image/x-ms-bmp": "bmp",
  "image/tiff": "tiff",
  "image/x-ico": "ico",
  "image/x-icon": "ico",
  "image/vnd.microsoft.icon": "ico",
  "image/webp": "webp",
  "image/heic": "heic",
  "image/heif": "heic",
  "image/svg+xml": "svg",
  "image/avif": "avif",
};

export function formatOfExtension(fileName: string): ImageFormat | undefined {
  const dot = fileName.lastIndexOf(".");
  if (dot < 0) return undefined;
  return EXTENSIONS[fileName.slice(dot + 1).toLowerCase()];
}

/** The format a declared content type names (parameters such as `; charset=` are ignored). */
export function formatOfMimeType(contentType: string | undefined): ImageFormat | undefined {
  const type = contentType?.split(";")[0]?.trim().toLowerCase();
  return type ? MIME_TYPES[type] : undefined;
}

const HEIC_BRANDS = new Set(["heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs"]);
const AVIF_BRANDS = new Set(["avif", "avis"]);

const ascii = (bytes: Uint8Array, from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));

/**
 * Spec 2.6 check 3: which image format the leading bytes are. The first 8 bytes decide for JPEG,
 * PNG, GIF, BMP, TIFF and ICO; the 12-byte container headers of WebP (RIFF....WEBP) and HEIC/AVIF
 * (....ftyp + brand, with the compatible brands after it) need a few more, and SVG is text, sniffed
 * in its first 4 KiB (an XML declaration, comments or a doctype may come before `<svg`).
 */
export function sniffFormat(bytes: Uint8Array): ImageFormat | undefined {
  const b = bytes;
  if (b.length < 4) return undefined;
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "jpeg";
  if (b.length >= 8 && b[0] === 0x89 && ascii(b, 1, 4) === "PNG" && b[4] === 0x0d && b[5] === 0x0a && b[6] === 0x1a && b[7] === 0x0a)
    return "png";
  if (b.length >= 6 && (ascii(b, 0, 6) === "GIF87a" || ascii(b, 0, 6) === "GIF89a")) return "gif";
  if (b.length >= 12 && ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 12) === "WEBP") return "webp";
  // "BM" alone is two letters of text: the DIB header size that follows must be one of the known ones.
  if (
    b.length >= 18 &&
    b[0] === 0x42 &&
    b[1] === 0x4d &&
    [12, 40, 52, 56, 64, 108, 124].includes(b[14]! | (b[15]! << 8)) &&
    b[16] === 0 &&
    b[17] === 0
  ) {
    return "bmp";
  }
  if (
    b.length >= 8 &&
    ((b[0] === 0x49 && b[1] === 0x49 && b[2] === 0x2a && b[3] === 0) || (b[0] === 0x4d && b[1] === 0x4d && b[2] === 0 && b[3] === 0x2a))
  )
    return "tiff";
  // ICO: reserved 0, type 1, then at least one image.
  if (b.length >= 6 && b[0] === 0 && b[1] === 0 && b[2] === 1 && b[3] === 0 && (b[4]! | (b[5]! << 8)) > 0) return "ico";
  if (b.length >= 12 && ascii(b, 4, 8) === "ftyp") {
    const boxSize = Math.min(((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0, b.length, 256);
    const brands = [ascii(b, 8, 12)];
    for (let at = 16; at + 4 <= boxSize; at += 4) brands.push(ascii(b, at, at + 4));
    if (brands.some((x) => AVIF_BRANDS.has(x))) return "avif";
    if (brands.some((x) => HEIC_BRANDS.has(x))) return "heic";
    return undefined;
  }
  return sniffSvg(b) ? "svg" : undefined;
}

function sniffSvg(bytes: Uint8Array): boolean {
  let text = new TextDecoder().decode(bytes.subarray(0, 4096));
  text = text.replace(/^\uFEFF/, "").trimStart();
  if (text.startsWith("<svg")) return true;
  if (!text.startsWith("<?xml") && !text.startsWith("<!--") && !text.startsWith("<!DOCTYPE svg")) return false;
  // Skip the prolog (declaration, comments, processing instructions, doctype) to the root element.
  const root = text.replace(/^(\s*(<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!DOCTYPE[^>[]*(\[[\s\S]*?\])?\s*>))*\s*/, "");
  return root.startsWith("<svg");
}
