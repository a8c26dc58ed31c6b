/**
 * The UPLOADS bucket: object keys, and a writer that stores a stream of unknown length in R2 while
 * hashing it, holding at most two parts in memory.
 *
 * Keys are generated, never taken from the client: `files/<fileId>/<random>`. The random segment
 * means a key is never reused, so a stale object from a failed attempt can never be mistaken for
 * the current one, and the cleanup can tell a file's object from an orphan by key alone.
 */

import { bodyFailure } from "../pkg/errors";
import { bodySlicer, chunkRead } from "../pkg/slicer";

export const FILES_PREFIX = "files/";

/** R2's smallest part (all parts but the last must be at least this, and all equal). */
export const MIN_PART_SIZE = 5 * 1024 * 1024;
/** The part size the Worker buffers when it stores a form upload, and the default of multipart uploads. */
export const DEFAULT_PART_SIZE = 10 * 1024 * 1024;
/** R2 allows 10,000 parts per upload. */
export const MAX_PARTS = 10_000;

export function newObjectKey(fileId: string): string {
  const random = crypto.getRandomValues(new Uint8Array(12));
  return `${FILES_PREFIX}${fileId}/${[...random].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** The file id a key names, or null when the key is not one of ours. */
export function fileIdOfKey(key: string): string | null {
  const match = /^files\/([0-9a-f-]{36})\/[0-9a-f]+$/.exec(key);
  return match ? match[1]! : null;
}

export function hex(buffer: ArrayBuffer): string {
  return [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * SHA-256 of a stored object, read as ranges of `chunk` bytes with up to `ahead` ranges fetched
 * ahead of the one being hashed: reading is the slow part and the ranges arrive in parallel, while
 * the hash (sequential by nature) consumes them in order. Holds at most `ahead + 1` chunks.
 */
export async function sha256OfObject(bucket: R2Bucket, key: string, size: number, chunk = DEFAULT_PART_SIZE, ahead = 3): Promise<string> {
  const digest = new crypto.DigestStream("SHA-256");
  const writer = digest.getWriter();
  const fetchRange = async (offset: number): Promise<ArrayBuffer> => {
    const object = await bucket.get(key, { range: { offset, length: Math.min(chunk, size - offset) } });
    if (!object) throw new Error(`object ${key} disappeared while being hashed`);
    return object.arrayBuffer();
  };
  const queue: Promise<ArrayBuffer>[] = [];
  let next = 0;
  const refill = () => {
    while (queue.length <= ahead && next < size) {
      const pending = fetchRange(next);
      // Observed now; awaited in order below.
      pending.catch(() => undefined);
      queue.push(pending);
      next += chunk;
    }
  };
  try {
    refill();
    while (queue.length > 0) {
      const bytes = await queue.shift()!;
      refill();
      await writer.write(new Uint8Array(bytes));
    }
    await writer.close();
  } catch (error) {
    await writer.abort(error).catch(() => undefined);
    throw error;
  }
  return hex(await digest.digest);
}

/** Lower-case hex of a hex digest's bytes, and back. */
function unhex(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(text.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/** The prefix of a composite checksum, which names a file stored from parts (see `compositeChecksum`). */
export const COMPOSITE_CHECKSUM_PREFIX = "sha256-parts:";

/**
 * The checksum of a file assembled from parts whose SHA-256 digests are known, without reading the
 * file: `sha256-parts:` + hex SHA-256 of the parts' 32-byte digests concatenated in part order +
 * `-` + the number of parts (as S3's composite multipart checksums, in hex). One part is the whole
 * file, so its plain SHA-256 is the file's. A client recomputes it from its own bytes and part size.
 */
export async function compositeChecksum(partChecksums: readonly string[]): Promise<string> {
  if (partChecksums.length === 1) return partChecksums[0]!;
  const joined = new Uint8Array(partChecksums.length * 32);
  partChecksums.forEach((checksum, i) => joined.set(unhex(checksum), i * 32));
  return `${COMPOSITE_CHECKSUM_PREFIX}${hex(await crypto.subtle.digest("SHA-256", joined))}-${partChecksums.length}`;
}

/**
 * A body of known length on its way to R2, hashed as it passes: the stream to hand to R2 (with its
 * length, which R2 needs) and the SHA-256 once the last byte went through. Each chunk is hashed and
 * passed on under R2's backpressure, so the part is never held whole (a tee would buffer for the
 * slower branch: up to a whole 95 MiB part when the client sends faster than R2 takes).
 */
export function hashWhileStreaming(
  body: ReadableStream<Uint8Array>,
  size: number,
): { stream: ReadableStream<Uint8Array>; checksum: Promise<string> } {
  const digest = new crypto.DigestStream("SHA-256");
  // An aborted hash (the body failed) rejects its digest, which nobody awaits then.
  digest.digest.catch(() => undefined);
  const hasher = digest.getWriter();
  let settle: { resolve: (checksum: string) => void; reject: (error: unknown) => void } | undefined;
  const checksum = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  // Observed here: when R2 fails first, whoever awaits `checksum` is not reached, and the rejection must not go unhandled.
  checksum.catch(() => undefined);
  // A client faster than R2 leaves chunks waiting: the thread is given back every slice (../pkg/slicer.ts).
  const slicer = bodySlicer();
  const hashing = new TransformStream<Uint8Array, Uint8Array>({
    async transform(chunk, controller) {
      await hasher.write(chunk);
      controller.enqueue(chunk);
      await chunkRead(slicer, chunk.byteLength);
    },
    async flush() {
      await hasher.close();
      settle!.resolve(hex(await digest.digest));
    },
  });
  const fixed = new FixedLengthStream(size);
  markingReadFailures(body)
    .pipeThrough(hashing)
    .pipeTo(fixed.writable)
    .catch(async (error: unknown) => {
      await hasher.abort(error).catch(() => undefined);
      settle!.reject(error);
    });
  return { stream: fixed.readable, checksum };
}

/**
 * `body`, whose read failures (the client went away) become BodyReadErrors, so a part that broke off
 * is told from an R2 failure (../pkg/errors.ts).
 */
function markingReadFailures(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { value, done } = await reader.read().catch((error: unknown) => {
          throw bodyFailure(error);
        });
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

export interface StoredObject {
  key: string;
  size: number;
  /** SHA-256, lower-case hex. */
  checksum: string;
}

/** A digest whose result is observed: an aborted hash (the body failed) rejects it, and nobody awaits it then. */
function observed(digest: DigestStream): DigestStream {
  digest.digest.catch(() => undefined);
  return digest;
}

/**
 * Writes one object from chunks of any size. Up to `partSize` bytes it is a single `put` (with the
 * SHA-256, which R2 verifies); beyond, an R2 multipart upload of equal `partSize` parts, each sent
 * while the next is being read. Call `abort()` when the source fails, so nothing is left behind.
 */
export class ObjectWriter {
  /** Grows with what was written, up to one part: a 20 KiB file must not cost 10 MiB while it is stored. */
  private buffer = new Uint8Array(0);
  private filled = 0;
  private size = 0;
  private readonly digest = observed(new crypto.DigestStream("SHA-256"));
  private readonly hasher = this.digest.getWriter();
  private upload: R2MultipartUpload | undefined;
  private readonly parts: R2UploadedPart[] = [];
  private pending: Promise<void> | undefined;
  private finished = false;

  constructor(
    private readonly bucket: R2Bucket,
    readonly key: string,
    private readonly contentType: string,
    private readonly partSize = DEFAULT_PART_SIZE,
  ) {}

  async write(chunk: Uint8Array): Promise<void> {
    await this.hasher.write(chunk);
    this.size += chunk.length;
    let offset = 0;
    while (offset < chunk.length) {
      const take = Math.min(chunk.length - offset, this.partSize - this.filled);
      this.reserve(this.filled + take);
      this.buffer.set(chunk.subarray(offset, offset + take), this.filled);
      this.filled += take;
      offset += take;
      if (this.filled === this.partSize) await this.sendFullPart();
    }
  }

  /** Stores what was written and returns the object's size and SHA-256. */
  async close(): Promise<StoredObject> {
    if (this.finished) throw new Error("ObjectWriter already closed");
    this.finished = true;
    await this.hasher.close();
    const checksum = hex(await this.digest.digest);
    const httpMetadata = { contentType: this.contentType };
    if (!this.upload) {
      await this.bucket.put(this.key, this.buffer.subarray(0, this.filled), { httpMetadata, sha256: checksum });
    } else {
      await this.pending;
      if (this.filled > 0) this.parts.push(await this.upload.uploadPart(this.parts.length + 1, this.buffer.subarray(0, this.filled)));
      await this.upload.complete(this.parts);
    }
    return { key: this.key, size: this.size, checksum };
  }

  /** Best effort: removes whatever this writer stored. The orphan sweep catches what this misses. */
  async abort(): Promise<void> {
    this.finished = true;
    await this.hasher.abort().catch(() => undefined);
    await this.pending?.catch(() => undefined);
    if (this.upload) await this.upload.abort().catch(() => undefined);
    await this.bucket.delete(this.key).catch(() => undefined);
  }

  /**
   * Room for `size` bytes (at most a part): doubled from 64 KiB as needed. Held per request, so 100
   * form uploads of small files at once hold kilobytes each, not 100 parts (see docs/decisions.md,
   * "Overload").
   */
  private reserve(size: number): void {
    if (size <= this.buffer.length) return;
    const grown = new Uint8Array(Math.min(this.partSize, Math.max(size, this.buffer.length * 2, 64 * 1024)));
    grown.set(this.buffer.subarray(0, this.filled));
    this.buffer = grown;
  }

  private async sendFullPart(): Promise<void> {
    // At most one part in flight: wait for the previous one before giving its buffer away.
    await this.pending;
    this.upload ??= await this.bucket.createMultipartUpload(this.key, { httpMetadata: { contentType: this.contentType } });
    const upload = this.upload;
    const full = this.buffer;
    const partNumber = this.parts.length + 1;
    // A file past one part is a large one: the next part is held whole from the start.
    this.buffer = new Uint8Array(this.partSize);
    this.filled = 0;
    // Parts land in order because only one is in flight.
    this.pending = upload.uploadPart(partNumber, full).then((part) => {
      this.parts.push(part);
    });
    // Observed here so a failure while the next part is being read is not an unhandled rejection;
    // whoever awaits `pending` next still sees it.
    this.pending.catch(() => undefined);
  }
}
