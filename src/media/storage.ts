/**
 * R2 keys and writes for media (bucket MEDIA). Keys are generated, never taken from the client:
 * `media/{mediaId}/{original|medium|small}` and `instruction-images/{definitionId}/{uuid}`.
 * Objects are written before the row that names them; when anything after the first write fails,
 * what was written is deleted again, and the orphan sweep (sweep.ts) removes whatever a crash left.
 */
import type { Logger } from "../pkg/logger";
import type { MediaSize } from "./schema";
import type { StoredVersion } from "./store";

export const MEDIA_PREFIX = "media/";
export const INSTRUCTION_IMAGE_PREFIX = "instruction-images/";

export function mediaKey(mediaId: string, size: MediaSize): string {
  return `${MEDIA_PREFIX}${mediaId}/${size.toLowerCase()}`;
}

/** The media id a key under MEDIA_PREFIX belongs to, or undefined for a key of another shape. */
export function mediaIdOfKey(key: string): string | undefined {
  const match = /^media\/([0-9a-f-]{36})\//.exec(key);
  return match?.[1];
}

export function instructionImageKey(definitionId: string, uuid: string): string {
  return `${INSTRUCTION_IMAGE_PREFIX}${definitionId}/${uuid}`;
}

export interface VersionToStore {
  size: MediaSize;
  bytes: Uint8Array;
  contentType: string;
  width: number | null;
  height: number | null;
  /** SHA-256 (hex) for R2 to verify on receipt, when already computed. */
  sha256?: string;
}

/**
 * Writes every version (in parallel); all of them or none: when one write fails, the others are
 * deleted and the error is rethrown.
 */
export async function putVersions(bucket: R2Bucket, mediaId: string, versions: VersionToStore[], log: Logger): Promise<StoredVersion[]> {
  const results = await Promise.allSettled(
    versions.map(async (v): Promise<StoredVersion> => {
      const key = mediaKey(mediaId, v.size);
      const object = await bucket.put(key, v.bytes, {
        httpMetadata: { contentType: v.contentType },
        customMetadata: { mediaId, size: v.size },
        ...(v.sha256 ? { sha256: v.sha256 } : {}),
      });
      return {
        size: v.size,
        key,
        bytes: v.bytes.byteLength,
        contentType: v.contentType,
        width: v.width,
        height: v.height,
        etag: object.etag,
      };
    }),
  );
  const failed = results.find((r) => r.status === "rejected");
  if (failed) {
    await deleteObjects(
      bucket,
      versions.map((v) => mediaKey(mediaId, v.size)),
      log,
    );
    throw failed.reason;
  }
  return results.map((r) => (r as PromiseFulfilledResult<StoredVersion>).value);
}

/** Best effort: a failure is logged and left to the orphan sweep. */
export async function deleteObjects(bucket: R2Bucket, keys: string[], log: Logger): Promise<void> {
  if (keys.length === 0) return;
  try {
    await bucket.delete(keys);
  } catch (error) {
    log.warn("media objects not deleted; the orphan sweep will remove them", { keys, error: String(error) });
  }
}
