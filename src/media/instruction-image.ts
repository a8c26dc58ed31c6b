/**
 * Instruction images of property definitions (spec 2.1, table 4.2): base64 in JSON, validated with
 * the checks of 2.6 that apply without a file name (the declared MIME type when given, the magic
 * bytes, and integrity by decoding), stored in R2 under a generated key. The key changes with every
 * PUT, so its last segment is the image's ETag. The new object is written before the definition
 * names it, and the old one deleted only after the definition stopped naming it.
 */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { ApiError, invalid } from "../pkg/errors";
import { preconditionFailed } from "../pkg/etag";
import { writeContext } from "../pkg/db";
import { FORMAT_MIME, formatOfMimeType, sniffFormat } from "./image/formats";
import { deleteObjects, instructionImageKey } from "./storage";
import { instructionImageKeyOf, readDefinitionImage, writeInstructionImageKey } from "./instruction-image-store";
import { assertVersion, retryWrite } from "../pkg/resource";

/**
 * The decoders and photon, imported on the first image: their code and WebAssembly are large, and
 * most requests (and most test files) never decode a picture.
 */
const loadPipeline = () => import("./image/pipeline");

/** The largest instruction image, decoded. */
export const INSTRUCTION_IMAGE_MAX_BYTES = 5 * 1024 * 1024;
/** Its base64 (4/3), a data: URL prefix and the JSON around it. */
export const INSTRUCTION_IMAGE_MAX_BODY_BYTES = Math.ceil((INSTRUCTION_IMAGE_MAX_BYTES * 4) / 3) + 4096;

/** Validation never decodes this much: checks only, no resized versions. */
const CHECK_ONLY = { medium: Number.POSITIVE_INFINITY, small: Number.POSITIVE_INFINITY };

export function imageEtag(key: string): string {
  return key.slice(key.lastIndexOf("/") + 1);
}

function decodeBase64(text: string): Uint8Array {
  const compact = text.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1)
    throw invalid("body.image", "base64", "image must be base64 (standard alphabet).");
  const binary = atob(compact);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function encodeBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** The bytes and the type to store them as, or a 400 naming the check that failed. */
export async function validateInstructionImage(input: {
  image: string;
  contentType?: string | undefined;
}): Promise<{ bytes: Uint8Array; contentType: string }> {
  let image = input.image;
  let declared = input.contentType;
  const dataUrl = /^data:([^;,]+)?(;[^,]*)?;base64,/i.exec(image);
  if (dataUrl) {
    image = image.slice(dataUrl[0].length);
    declared ??= dataUrl[1];
  }
  if (declared !== undefined && !formatOfMimeType(declared)) {
    throw invalid("body.contentType", "mimeType", `'${declared}' is not an image type (spec 2.6).`);
  }
  const bytes = decodeBase64(image);
  if (bytes.length === 0) throw invalid("body.image", "notEmpty", "image is empty.");
  if (bytes.length > INSTRUCTION_IMAGE_MAX_BYTES) {
    throw new ApiError("PayloadTooLarge", `The image is ${bytes.length} bytes; at most ${INSTRUCTION_IMAGE_MAX_BYTES} are accepted.`);
  }
  const format = sniffFormat(bytes);
  if (!format) throw invalid("body.image", "magicBytes", "image is not an image: its first bytes match no image format of spec 2.6.");
  const outcome = await (await loadPipeline()).processImage(format, bytes, undefined, CHECK_ONLY);
  if (outcome.integrity === "failed")
    throw invalid("body.image", "integrity", `image is a corrupt ${format.toUpperCase()}: ${outcome.detail}`);
  return { bytes, contentType: FORMAT_MIME[format] };
}

export async function putInstructionImage(
  c: Context<AppEnv>,
  definitionId: string,
  input: { image: string; contentType?: string | undefined },
): Promise<string> {
  const { bytes, contentType } = await validateInstructionImage(input);
  const ctx = writeContext(c);
  const log = c.get("log");
  const state = await readDefinitionImage(ctx.db, definitionId);
  if (ctx.expectedEtag !== undefined && (state.key === null || ctx.expectedEtag !== imageEtag(state.key))) throw preconditionFailed();
  const key = instructionImageKey(definitionId, ctx.uuid());
  await c.env.MEDIA.put(key, bytes, { httpMetadata: { contentType }, customMetadata: { definitionId } });
  try {
    await writeInstructionImageKey(ctx, state, key);
  } catch (error) {
    await deleteObjects(c.env.MEDIA, [key], log);
    throw error;
  }
  if (state.key) await deleteObjects(c.env.MEDIA, [state.key], log);
  return imageEtag(key);
}

export async function deleteInstructionImage(c: Context<AppEnv>, definitionId: string): Promise<void> {
  const ctx = writeContext(c);
  const key = await retryWrite(ctx, async () => {
    const state = await readDefinitionImage(ctx.db, definitionId);
    if (state.key === null) throw new ApiError("NotFound", `Property definition ${definitionId} has no instruction image.`);
    assertVersion(ctx, imageEtag(state.key));
    await writeInstructionImageKey(ctx, state, null);
    return state.key;
  });
  await deleteObjects(c.env.MEDIA, [key], c.get("log"));
}

export async function getInstructionImage(env: AppEnv["Bindings"], definitionId: string): Promise<{ key: string; object: R2ObjectBody }> {
  const key = await instructionImageKeyOf(env.DB, definitionId);
  if (key === null) throw new ApiError("NotFound", `Property definition ${definitionId} has no instruction image.`);
  const object = await env.MEDIA.get(key);
  if (!object) throw new ApiError("NotFound", `Property definition ${definitionId} has no instruction image.`);
  return { key, object };
}

export { instructionImageKeyOf };
