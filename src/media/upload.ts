/**
 * POST /Medias: read the multipart form, run the four checks, resize, then store. Processing runs
 * in the request: a 12 MP photo takes a few hundred ms of CPU and under 128 MB (docs/benchmarks.md,
 * "Images"), and the client gets the final answer (which sizes exist) at once, with no "processing"
 * state to poll and nothing to hide until a queue consumer has run.
 */
import type { Context } from "hono";
import type { AppEnv, Bindings } from "../env";
import { ApiError, invalid } from "../pkg/errors";
import { errorFields, type Logger } from "../pkg/logger";
import { writeContext } from "../pkg/db";
import { bodyStream, fieldText, formBoundary, readForm, type FormPart } from "../pkg/multipart";
import { FORMAT_MIME, type ImageFormat } from "./image/formats";
import { hasLocation, LOCATION_FORMATS, stripLocation } from "./image/location";
import { resizeWithImagesBinding } from "./image/images-binding";
import type { ImageOutcome } from "./image/pipeline";
import { firstChecks, imageFormatOf, recognition } from "./recognition";
import { MEDIA_TYPES, type Media, type MediaType } from "./schema";
import { deleteObjects, putVersions, type VersionToStore } from "./storage";
import { insertMedia, sizeEntries, type MediaRecord } from "./store";

/**
 * The decoders and photon, imported on the first image: their code and WebAssembly are large, and
 * most requests (and most test files) never decode a picture.
 */
const loadPipeline = () => import("./image/pipeline");

/** The largest file POST /Medias takes (the form's overhead is allowed on top). */
export const MEDIA_MAX_BYTES = 20 * 1024 * 1024;
export const MEDIA_MAX_BODY_BYTES = MEDIA_MAX_BYTES + 64 * 1024;

export interface UploadForm {
  file: { name: string; type: string | undefined; bytes: Uint8Array };
  type: MediaType;
  /** StripLocation=true: remove the GPS position (EXIF, XMP) from the stored original. */
  stripLocation: boolean;
}

/**
 * Collects a file part into one buffer sized from the request's Content-Length (the file cannot
 * be larger), so the bytes are held once, not once per chunk plus once joined.
 */
async function readFilePart(part: FormPart, capacityHint: number): Promise<Uint8Array> {
  let buffer = new Uint8Array(Math.min(Math.max(capacityHint, 64 * 1024), MEDIA_MAX_BODY_BYTES));
  let length = 0;
  for await (const chunk of part.chunks) {
    if (length + chunk.length > MEDIA_MAX_BYTES)
      throw invalid("body.File", "maxSize", `The file is larger than ${MEDIA_MAX_BYTES} bytes, the most this route accepts.`);
    if (length + chunk.length > buffer.length) {
      const grown = new Uint8Array(Math.min(Math.max(buffer.length * 2, length + chunk.length), MEDIA_MAX_BYTES));
      grown.set(buffer.subarray(0, length));
      buffer = grown;
    }
    buffer.set(chunk, length);
    length += chunk.length;
  }
  return buffer.subarray(0, length);
}

/**
 * Reads the multipart form as it streams in (src/upload/files/form.ts, shared with POST /Files):
 * unlike `request.formData()`, the body is not held whole besides the file, which for a 20 MiB file
 * was the difference between about 70 and 130 MiB of peak memory. Field names and the Type value
 * are matched without regard to case (the original clients send File and Type); other fields are
 * ignored.
 */
export async function readUploadForm(c: Context<AppEnv>): Promise<UploadForm> {
  const boundary = formBoundary(c.req.header("content-type"));
  if (!boundary) throw new ApiError("UnsupportedMediaType", "POST /Medias takes a multipart/form-data body (with a boundary).");
  const capacity = Number(c.req.header("content-length")) || 0;
  let file: UploadForm["file"] | undefined;
  let type: string | undefined;
  let stripLocation: string | undefined;
  for await (const part of readForm(await bodyStream(c), boundary)) {
    const name = part.head.name.toLowerCase();
    if (name === "file" && part.head.filename !== null) {
      if (file) throw invalid("body.File", "single", "Send one file per request.");
      file = { name: part.head.filename, type: part.head.contentType ?? undefined, bytes: await readFilePart(part, capacity) };
    } else if (name === "type") {
      if (type !== undefined) throw invalid("body.Type", "single", "Send one Type field.");
      type = await fieldText(part, "body.Type", 64);
    } else if (name === "striplocation") {
      if (stripLocation !== undefined) throw invalid("body.StripLocation", "single", "Send one StripLocation field.");
      stripLocation = (await fieldText(part, "body.StripLocation", 16)).trim().toLowerCase();
      if (stripLocation !== "true" && stripLocation !== "false")
        throw invalid("body.StripLocation", "boolean", "StripLocation must be true or false.");
    }
  }
  if (!file) throw invalid("body.File", "required", "The form needs a File field holding the file.");
  if (file.bytes.length === 0) throw invalid("body.File", "notEmpty", "The file is empty.");
  if (type === undefined) throw invalid("body.Type", "required", "The form needs a Type field: image or document.");
  const normalised = type.trim().toLowerCase();
  if (!(MEDIA_TYPES as readonly string[]).includes(normalised))
    throw invalid("body.Type", "enum", `Type must be image or document, not '${type}'.`);
  return { file, type: normalised as MediaType, stripLocation: stripLocation === "true" };
}

/** The name without any client path, control characters or surrounding space, at most 255 characters. */
export function cleanFileName(name: string): string {
  const base = (name.split(/[\\/]/).pop() ?? "").replace(/[\u0000-\u001f\u007f]/g, "").trim();
  return (base || "file").slice(0, 255);
}

/** What a non-image is served as: its declared type, unless it claims to be an image it is not. */
function documentContentType(declared: string): string {
  const type = declared.split(";")[0]?.trim().toLowerCase() ?? "";
  if (!/^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/.test(type) || type.startsWith("image/"))
    return "application/octet-stream";
  return type;
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export async function uploadMedia(c: Context<AppEnv>, form: UploadForm): Promise<MediaRecord> {
  const ctx = writeContext(c);
  const log = c.get("log");
  const principal = c.get("principal");
  const name = cleanFileName(form.file.name);
  const checks = firstChecks(name, form.file.type, form.file.bytes);
  // Location is looked for by the magic bytes, so a photo uploaded as a document is covered too.
  const location = originalLocation(checks.detectedFormat, form.file.bytes, form.stripLocation);
  const bytes = location.bytes;
  const format = imageFormatOf(checks);
  const image = format ? await resizeOrKeep(format, bytes, log, c.env) : null;

  const id = ctx.uuid();
  const contentType = format ? FORMAT_MIME[format] : documentContentType(form.file.type ?? "");
  const checksum = await sha256Hex(bytes);
  const toStore: VersionToStore[] = [
    { size: "Original", bytes, contentType, width: image?.width ?? null, height: image?.height ?? null, sha256: checksum },
    ...(image?.versions ?? []).map((v) => ({ size: v.size, bytes: v.bytes, contentType: v.contentType, width: v.width, height: v.height })),
  ];
  const versions = await putVersions(c.env.MEDIA, id, toStore, log);
  const rec = {
    ...recognition(
      checks,
      image?.integrity ?? "notChecked",
      format ? (image?.detail ?? null) : `not an image (${failedFirst(checks)} failed), so not decoded`,
    ),
    location: location.state,
  };
  const media: Media = {
    id,
    name,
    type: form.type,
    contentType,
    size: bytes.byteLength,
    checksum,
    isImage: format !== undefined,
    width: image?.width ?? null,
    height: image?.height ?? null,
    sizes: sizeEntries(format !== undefined, rec.integrity, versions),
    recognition: rec,
    owner: { id: principal.id, name: principal.name },
    createdAt: ctx.now,
  };
  let etag: string;
  try {
    etag = await insertMedia(ctx, media, versions, format ?? null);
  } catch (error) {
    await deleteObjects(
      c.env.MEDIA,
      versions.map((v) => v.key),
      log,
    );
    throw error;
  }
  return { media, versions, etag };
}

/**
 * The original's location (docs/decisions.md, "Location in photos"): "kept" when it carries a GPS
 * position, "removed" when StripLocation took it out, "none" when it has none (GIF, BMP, ICO and SVG
 * have no place for one).
 */
function originalLocation(
  format: ImageFormat | null,
  bytes: Uint8Array,
  strip: boolean,
): { bytes: Uint8Array; state: "none" | "kept" | "removed" } {
  if (!format || !LOCATION_FORMATS.has(format)) return { bytes, state: "none" };
  // Only a strip copies the file; reporting what it carries reads it in place.
  if (!strip) return { bytes, state: hasLocation(format, bytes) ? "kept" : "none" };
  const stripped = stripLocation(format, bytes);
  return stripped.removed ? { bytes: stripped.bytes, state: "removed" } : { bytes, state: "none" };
}

function failedFirst(checks: ReturnType<typeof firstChecks>): string {
  return [!checks.extension && "extension", !checks.mimeType && "mimeType", !checks.detectedFormat && "magicBytes"]
    .filter(Boolean)
    .join(", ");
}

/**
 * The pipeline reports bad images as outcomes; anything it throws is our failure (e.g. the codec
 * itself), and the upload still keeps the original (spec 7) rather than losing the file.
 */
async function resizeOrKeep(format: ImageFormat, bytes: Uint8Array, log: Logger, env: Bindings): Promise<ImageOutcome> {
  try {
    // The Images binding when the operator chose it; the WASM pipeline otherwise, and for whatever the binding cannot read.
    const byBinding = env.IMAGE_RESIZER === "images" && env.IMAGES ? await resizeWithImagesBinding(env.IMAGES, format, bytes) : null;
    if (byBinding) return byBinding;
    const outcome = await (await loadPipeline()).processImage(format, bytes);
    if (outcome.integrity !== "passed")
      log.info("image kept without resized versions", { format, integrity: outcome.integrity, detail: outcome.detail });
    return outcome;
  } catch (error) {
    log.error("resizing failed; the original is kept", { format, ...errorFields(error) });
    return {
      width: null,
      height: null,
      integrity: "notChecked",
      detail: "the resized versions could not be made",
      versions: [],
      decoded: null,
    };
  }
}
