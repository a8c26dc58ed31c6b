/**
 * Resumable multipart uploads through the Worker: start, parts in any order (a re-sent part replaces
 * the earlier one), status, completion, abort. Only the caller who started an upload may touch it;
 * for anyone else it does not exist (404).
 */
import type { Database } from "../../db/statements";
import { ApiError, BodyReadError, invalid, notFound } from "../../pkg/errors";
import type { WriteContext } from "../../pkg/db";
import type { Viewer } from "../files/access";
import { checkExtension, cleanFileName, normaliseContentType } from "../files/naming";
import { dataTypeFor, ownerFor } from "../files/post";
import { toFile, type FileRow, type StoredFile } from "../files/store";
import { MAX_REQUEST_BODY } from "../http";
import { compositeChecksum, DEFAULT_PART_SIZE, hashWhileStreaming, hex, MAX_PARTS, newObjectKey, sha256OfObject } from "../storage";
import type { StartUploadInput, Upload } from "./schema";
import { notConfigured, presignPart, type DirectUploadConfig, type PresignedPart } from "./direct";
import { findUpload, insertUpload, listParts, markCompleted, recordPart, removeUpload, type PartRow, type UploadRow } from "./store";

/** An upload without activity for this long is abandoned; the cleanup aborts it. */
export const UPLOAD_IDLE_MS = 24 * 60 * 60 * 1000;
/** R2 aborts incomplete multipart uploads after 7 days by default, so ours never outlive 6. */
export const UPLOAD_MAX_AGE_MS = 6 * 24 * 60 * 60 * 1000;

const MiB = 1024 * 1024;

function expiry(now: string, createdAt: string): string {
  const idle = Date.parse(now) + UPLOAD_IDLE_MS;
  return new Date(Math.min(idle, Date.parse(createdAt) + UPLOAD_MAX_AGE_MS)).toISOString();
}

function choosePartSize(input: StartUploadInput): number {
  if (input.partSize !== undefined) return input.partSize;
  if (input.size === undefined || input.size <= DEFAULT_PART_SIZE * MAX_PARTS) return DEFAULT_PART_SIZE;
  return Math.ceil(input.size / MAX_PARTS / MiB) * MiB;
}

function expectedParts(declaredSize: number | null, partSize: number): number | null {
  return declaredSize ? Math.ceil(declaredSize / partSize) : null;
}

/** The upload if the viewer started it and it is still usable; a 404 otherwise. */
async function ownUpload(db: Database, viewer: Viewer, uploadId: string, now: string): Promise<{ upload: UploadRow; file: FileRow }> {
  const found = await findUpload(db, uploadId);
  if (!found || found.upload.owner_id !== viewer.id) throw notFound("Upload", uploadId);
  if (found.file.state !== "ready" && found.upload.expires_at < now)
    throw new ApiError("NotFound", `Upload ${uploadId} has expired; start a new one.`);
  return found;
}

function describe(upload: UploadRow, file: FileRow, parts: { part_number: number; size: number; uploaded_at: string }[]): Upload {
  const declared = file.state === "ready" ? file.size : file.size || null;
  return {
    uploadId: upload.id,
    fileId: file.id,
    name: file.name,
    dataType: { id: file.data_type_id, name: file.data_type_name },
    size: declared,
    partSize: upload.part_size,
    maxParts: MAX_PARTS,
    expectedParts: expectedParts(declared, upload.part_size),
    parts: parts.map((p) => ({ partNumber: p.part_number, size: p.size, uploadedAt: p.uploaded_at })),
    completed: file.state === "ready",
    expiresAt: upload.expires_at,
  };
}

export async function startUpload(ctx: WriteContext, bucket: R2Bucket, viewer: Viewer, input: StartUploadInput): Promise<Upload> {
  const dataType = await dataTypeFor(ctx.db, input.dataTypeId, "body.dataTypeId");
  const name = cleanFileName(input.name, "body.name");
  checkExtension(name, dataType, "body.name");
  const owner = ownerFor(viewer, input.objectOwner?.id, input.objectOwner?.name, {
    id: "body.objectOwner.id",
    name: "body.objectOwner.name",
  });
  const partSize = choosePartSize(input);
  const declaredSize = input.size ?? null;
  if (declaredSize !== null && Math.ceil(declaredSize / partSize) > MAX_PARTS) {
    throw invalid(
      "body.size",
      "limit",
      `${declaredSize} bytes need more than ${MAX_PARTS} parts of ${partSize} bytes; choose a larger partSize (at ` +
        `most ${MAX_REQUEST_BODY}).`,
    );
  }
  const contentType = normaliseContentType(input.contentType);
  const fileId = ctx.uuid();
  const uploadId = ctx.uuid();
  const key = newObjectKey(fileId);
  const multipart = await bucket.createMultipartUpload(key, { httpMetadata: { contentType } });
  const expiresAt = expiry(ctx.now, ctx.now);
  try {
    await insertUpload(ctx, {
      uploadId,
      fileId,
      r2UploadId: multipart.uploadId,
      r2Key: key,
      partSize,
      name,
      dataTypeId: dataType.id,
      declaredSize,
      contentType,
      owner,
      expiresAt,
    });
  } catch (error) {
    await multipart.abort().catch(() => undefined);
    throw error;
  }
  const file = {
    id: fileId,
    name,
    data_type_id: dataType.id,
    data_type_name: dataType.name,
    size: declaredSize ?? 0,
    state: "uploading",
  } as FileRow;
  return describe(
    {
      id: uploadId,
      file_id: fileId,
      r2_upload_id: multipart.uploadId,
      r2_key: key,
      part_size: partSize,
      owner_id: viewer.id,
      created_at: ctx.now,
      expires_at: expiresAt,
    },
    file,
    [],
  );
}

export async function getUpload(db: Database, viewer: Viewer, uploadId: string, now: string): Promise<Upload> {
  const { upload, file } = await ownUpload(db, viewer, uploadId, now);
  return describe(upload, file, await listParts(db, uploadId));
}

/**
 * Stores one part. `size` is the body's length (from Content-Length, or measured); every part but
 * the last must be exactly partSize, which is checked here when the size was declared and at
 * completion otherwise.
 */
export async function putPart(
  ctx: WriteContext,
  bucket: R2Bucket,
  viewer: Viewer,
  target: { uploadId: string; partNumber: number },
  sent: { value: ReadableStream<Uint8Array> | ArrayBuffer; size: number | null },
): Promise<{ partNumber: number; size: number; uploadedAt: string }> {
  const { upload, file } = await ownUpload(ctx.db, viewer, target.uploadId, ctx.now);
  if (file.state === "ready") throw new ApiError("Conflict", `Upload ${upload.id} is completed; its parts can no longer change.`);
  const body = sent.size !== null ? { value: sent.value, size: sent.size } : await sizedPart(sent.value, upload, file, target.partNumber);
  if (body.size === 0) throw invalid("body", "required", "A part has at least one byte.");
  if (body.size > upload.part_size) {
    throw new ApiError(
      "PayloadTooLarge",
      `A part of this upload is at most ${upload.part_size} bytes (its partSize); this one has ${body.size}.`,
    );
  }
  const expected = expectedParts(file.size || null, upload.part_size);
  if (expected !== null) {
    if (target.partNumber > expected)
      throw invalid("path.partNumber", "range", `The declared size makes ${expected} parts; there is no part ${target.partNumber}.`);
    const want = target.partNumber < expected ? upload.part_size : file.size - (expected - 1) * upload.part_size;
    if (body.size !== want) throw invalid("body", "size", `Part ${target.partNumber} must have ${want} bytes, not ${body.size}.`);
  }
  // The part is hashed on its way to R2, so the completion never reads the file back.
  const hashed =
    body.value instanceof ArrayBuffer
      ? { stream: body.value, checksum: crypto.subtle.digest("SHA-256", body.value).then(hex) }
      : hashWhileStreaming(body.value, body.size);
  const part = await bucket
    .resumeMultipartUpload(upload.r2_key, upload.r2_upload_id)
    .uploadPart(target.partNumber, hashed.stream)
    .catch(async (error: unknown) => {
      // A body that failed on its way (too long or short for its part, past the route's limit) says why.
      const reason = await hashed.checksum.then(
        () => null,
        (failure: unknown) => failure,
      );
      throw reason instanceof ApiError || reason instanceof BodyReadError ? reason : error;
    });
  const checksum = await hashed.checksum;
  await recordPart(
    ctx.db,
    upload.id,
    { partNumber: target.partNumber, etag: part.etag, size: body.size, checksum },
    ctx.now,
    expiry(ctx.now, upload.created_at),
  );
  return { partNumber: target.partNumber, size: body.size, uploadedAt: ctx.now };
}

/**
 * A part sent without Content-Length (chunked, or decompressed from gzip). R2 takes a stream only of
 * known length: when the upload declared its size, every part's length is known and the part streams
 * under it (a body of another length fails the part with a 400); otherwise it is read, up to the
 * upload's part size (at most 95 MiB), the one case where a part is held in memory.
 */
async function sizedPart(
  value: ReadableStream<Uint8Array> | ArrayBuffer,
  upload: UploadRow,
  file: FileRow,
  partNumber: number,
): Promise<{ value: ReadableStream<Uint8Array> | ArrayBuffer; size: number }> {
  if (value instanceof ArrayBuffer) return { value, size: value.byteLength };
  const expected = expectedParts(file.size || null, upload.part_size);
  if (expected !== null) {
    if (partNumber > expected)
      throw invalid("path.partNumber", "range", `The declared size makes ${expected} parts; there is no part ${partNumber}.`);
    const want = partNumber < expected ? upload.part_size : file.size - (expected - 1) * upload.part_size;
    return { value: value.pipeThrough(exactly(want, partNumber)), size: want };
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = value.getReader();
  for (;;) {
    const { value: chunk, done } = await reader.read();
    if (done) break;
    size += chunk.byteLength;
    if (size > upload.part_size) {
      await reader.cancel().catch(() => undefined);
      throw new ApiError(
        "PayloadTooLarge",
        `A part of this upload is at most ${upload.part_size} bytes (its partSize); this one has more.`,
      );
    }
    chunks.push(chunk);
  }
  const joined = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    joined.set(chunk, at);
    at += chunk.byteLength;
  }
  return { value: joined.buffer as ArrayBuffer, size };
}

/** Fails a part whose bytes are not exactly `want` with the 400 a declared length would have got. */
function exactly(want: number, partNumber: number): TransformStream<Uint8Array, Uint8Array> {
  let seen = 0;
  const wrong = () => invalid("body", "size", `Part ${partNumber} must have ${want} bytes, not ${seen > want ? "more" : seen}.`);
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (seen > want) throw wrong();
      controller.enqueue(chunk);
    },
    flush() {
      if (seen !== want) throw wrong();
    },
  });
}

/** A part as the completion sees it: sent through the Worker (size and digest known) or straight to R2 (neither). */
interface CompletionPart {
  part_number: number;
  etag: string;
  size: number | null;
  checksum: string | null;
}

const partsProblem = (rule: string, message: string) => new ApiError("Conflict", message, { errors: [{ field: "parts", rule, message }] });

/**
 * Parts 1..n without gaps, all of partSize but the last (at most partSize), and the declared total.
 * Sizes of parts sent straight to R2 are unknown here: R2 checks them when it assembles, and the
 * total is checked against the declared size after.
 */
function checkParts(upload: UploadRow, file: FileRow, parts: CompletionPart[]): void {
  if (parts.length === 0) throw partsProblem("required", "No part has been uploaded yet.");
  const last = parts[parts.length - 1]!.part_number;
  const have = new Set(parts.map((p) => p.part_number));
  const missing = [];
  for (let n = 1; n <= last && missing.length < 20; n++) if (!have.has(n)) missing.push(n);
  if (missing.length > 0) throw partsProblem("contiguous", `Parts ${missing.join(", ")} are missing (parts 1 to ${last} are needed).`);
  const short = parts.slice(0, -1).find((p) => p.size !== null && p.size !== upload.part_size);
  if (short)
    throw partsProblem("size", `Part ${short.part_number} has ${short.size} bytes; every part but the last must have ${upload.part_size}.`);
  if (parts.some((p) => p.size === null)) return;
  const total = parts.reduce((sum, p) => sum + (p.size ?? 0), 0);
  if (file.size > 0 && total !== file.size) throw partsProblem("size", `The parts hold ${total} bytes; the upload declared ${file.size}.`);
}

/** The parts received through the Worker, with the ones the client sent straight to R2 replacing or adding to them. */
function mergeParts(received: PartRow[], direct: readonly DirectPart[]): CompletionPart[] {
  const byNumber = new Map<number, CompletionPart>(
    received.map((p) => [p.part_number, { part_number: p.part_number, etag: p.etag, size: p.size, checksum: p.checksum }]),
  );
  for (const part of direct) byNumber.set(part.partNumber, { part_number: part.partNumber, etag: part.etag, size: null, checksum: null });
  return [...byNumber.values()].sort((a, b) => a.part_number - b.part_number);
}

export interface DirectPart {
  partNumber: number;
  /** The ETag R2 answered to the presigned PUT. */
  etag: string;
}

/**
 * Assembles the parts in R2, sets the checksum and makes the file visible. Completing again (also
 * after a crash between the two steps) returns the same file: `created` tells which case it was.
 *
 * The checksum: when every part came through the Worker, the composite of their digests (no byte is
 * read again); when some part went straight to R2 (`direct`), or was recorded without a digest, the
 * plain SHA-256 of the assembled object, read back once.
 */
export async function completeUpload(
  ctx: WriteContext,
  bucket: R2Bucket,
  viewer: Viewer,
  uploadId: string,
  direct: readonly DirectPart[] = [],
): Promise<{ file: StoredFile; created: boolean; timing?: { assembleMs: number; hashMs: number } }> {
  const { upload, file } = await ownUpload(ctx.db, viewer, uploadId, ctx.now);
  if (file.state === "ready") return { file: toFile(file), created: false };
  const parts = mergeParts(await listParts(ctx.db, uploadId), direct);
  checkParts(upload, file, parts);
  const started = performance.now();
  try {
    await bucket
      .resumeMultipartUpload(upload.r2_key, upload.r2_upload_id)
      .complete(parts.map((p) => ({ partNumber: p.part_number, etag: p.etag })));
  } catch (error) {
    // Already assembled by an earlier attempt that did not get to mark the file ready: carry on.
    const existing = await bucket.head(upload.r2_key);
    if (!existing) {
      const reason = error instanceof Error ? error.message : "unknown";
      throw partsProblem(
        "assemble",
        `The storage could not assemble the parts (${reason}); check the ETags of parts sent to R2, send missing or ` +
          `wrong parts again and retry.`,
      );
    }
  }
  const assembled = performance.now();
  const object = await bucket.head(upload.r2_key);
  if (!object) throw new Error(`completed object ${upload.r2_key} is missing`);
  if (file.size > 0 && object.size !== file.size) {
    // Only parts sent straight to R2 can get here (the others were measured). The R2 upload is
    // spent, so the upload is removed: the client starts again.
    await bucket.delete(upload.r2_key);
    await removeUpload(ctx.db, upload);
    throw partsProblem(
      "size",
      `The parts hold ${object.size} bytes; the upload declared ${file.size}. The upload was removed; start a new one.`,
    );
  }
  // R2 keeps no whole-object hash of a multipart object. Parts hashed on their way in give the
  // composite checksum for free; otherwise the assembled bytes are read back once.
  const partChecksums = parts.map((p) => p.checksum);
  const checksum = partChecksums.every((c): c is string => c !== null)
    ? await compositeChecksum(partChecksums)
    : await sha256OfObject(bucket, upload.r2_key, object.size, upload.part_size);
  const timing = { assembleMs: assembled - started, hashMs: performance.now() - assembled };
  const keepUntil = new Date(Date.parse(ctx.now) + UPLOAD_IDLE_MS).toISOString();
  const ready = await markCompleted(ctx, upload, file, { size: object.size, checksum }, keepUntil);
  if (ready) return { file: ready, created: true, timing };
  const again = await findUpload(ctx.db, uploadId);
  if (again?.file.state === "ready") return { file: toFile(again.file), created: false };
  throw notFound("Upload", uploadId);
}

/** A presigned URL to PUT one part straight to R2 (501 when direct upload is not configured). */
export async function presignUploadPart(
  db: Database,
  config: DirectUploadConfig | null,
  viewer: Viewer,
  target: { uploadId: string; partNumber: number },
  now: Date,
): Promise<PresignedPart> {
  const { upload, file } = await ownUpload(db, viewer, target.uploadId, now.toISOString());
  if (file.state === "ready") throw new ApiError("Conflict", `Upload ${upload.id} is completed; its parts can no longer change.`);
  if (!config) throw notConfigured();
  const expected = expectedParts(file.size || null, upload.part_size);
  if (expected !== null && target.partNumber > expected) {
    throw invalid("path.partNumber", "range", `The declared size makes ${expected} parts; there is no part ${target.partNumber}.`);
  }
  const size = expected === null ? null : target.partNumber < expected ? upload.part_size : file.size - (expected - 1) * upload.part_size;
  return presignPart(config, upload, target.partNumber, size, now);
}

export async function abortUpload(db: Database, bucket: R2Bucket, viewer: Viewer, uploadId: string, now: string): Promise<void> {
  const { upload, file } = await ownUpload(db, viewer, uploadId, now);
  if (file.state === "ready")
    throw new ApiError("Conflict", `Upload ${uploadId} is completed; delete the file (DELETE /Files/${file.id}) instead.`);
  // R2 first: if it fails the rows stay and the client (or the cleanup) tries again.
  await abortInR2(bucket, upload);
  // An object assembled by a completion that never marked the file ready goes too.
  await bucket.delete(upload.r2_key);
  await removeUpload(db, upload);
}

/** Aborts the R2 multipart upload; one that is already gone is fine. */
export async function abortInR2(bucket: R2Bucket, upload: UploadRow): Promise<void> {
  try {
    await bucket.resumeMultipartUpload(upload.r2_key, upload.r2_upload_id).abort();
  } catch (error) {
    if (!/NoSuchUpload|does not exist|not found/i.test(error instanceof Error ? error.message : String(error))) throw error;
  }
}
