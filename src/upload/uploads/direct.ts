/**
 * Direct-to-R2 parts: a presigned S3 `UploadPart` URL lets a client send a part straight to R2's S3
 * endpoint, so large files do not pass through the Worker (no 100 MB body cap, no Worker time). It
 * needs R2 S3 credentials, which the R2 binding does not have: the secrets R2_ACCESS_KEY_ID and
 * R2_SECRET_ACCESS_KEY, and the endpoint, from R2_S3_ENDPOINT or R2_ACCOUNT_ID
 * (`https://<account>.r2.cloudflarestorage.com`), with the bucket name R2_BUCKET_NAME (default the
 * UPLOADS bucket's, integrity-edge-uploads). Without them the route answers 501 NotConfigured.
 *
 * The upload id and key are the ones the binding created, so parts sent either way belong to the
 * same R2 multipart upload; the completion (POST .../Completion with the parts' ETags) assembles them
 * through the binding.
 */
import { ApiError } from "../../pkg/errors";
import { presignUrl } from "./presign";
import type { UploadRow } from "./store";

/** The variables and secrets this reads; none is in wrangler.toml, so none is in the generated Env. */
interface DirectUploadVars {
  R2_ACCESS_KEY_ID?: string;
  R2_SECRET_ACCESS_KEY?: string;
  R2_ACCOUNT_ID?: string;
  R2_S3_ENDPOINT?: string;
  R2_BUCKET_NAME?: string;
}

export interface DirectUploadConfig {
  /** Path-style base: endpoint + `/` + bucket. */
  bucketUrl: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export const DEFAULT_UPLOADS_BUCKET = "integrity-edge-uploads";
/** A presigned part URL is valid for this long at most (and never past the upload's expiry). */
export const PRESIGNED_URL_SECONDS = 60 * 60;

/** The S3 settings, or null when direct upload is not configured (any of them missing). */
export function directUploadConfig(env: object): DirectUploadConfig | null {
  const vars = env as DirectUploadVars;
  const accessKeyId = vars.R2_ACCESS_KEY_ID?.trim();
  const secretAccessKey = vars.R2_SECRET_ACCESS_KEY?.trim();
  const endpoint =
    vars.R2_S3_ENDPOINT?.trim() || (vars.R2_ACCOUNT_ID?.trim() ? `https://${vars.R2_ACCOUNT_ID.trim()}.r2.cloudflarestorage.com` : "");
  if (!accessKeyId || !secretAccessKey || !endpoint) return null;
  const bucket = vars.R2_BUCKET_NAME?.trim() || DEFAULT_UPLOADS_BUCKET;
  return { bucketUrl: `${endpoint.replace(/\/+$/, "")}/${encodeURIComponent(bucket)}`, accessKeyId, secretAccessKey };
}

export function notConfigured(): ApiError {
  return new ApiError(
    "NotConfigured",
    "Direct upload to R2 is not configured on this deployment (R2_ACCESS_KEY_ID, R2_SECRET_ACCESS_KEY and " +
      "R2_ACCOUNT_ID or R2_S3_ENDPOINT are needed); send the part to PUT /Files/Uploads/{uploadId}/Parts/{partNumber} " +
      "instead.",
  );
}

export interface PresignedPart {
  partNumber: number;
  method: "PUT";
  url: string;
  /** Headers the request must carry with exactly these values (they are signed). */
  headers: Record<string, string>;
  expiresAt: string;
}

/**
 * A presigned `PUT` of one part. When the part's size is known (a declared upload size) its
 * Content-Length is signed, so R2 refuses a part of any other size.
 */
export async function presignPart(
  config: DirectUploadConfig,
  upload: UploadRow,
  partNumber: number,
  size: number | null,
  now: Date,
): Promise<PresignedPart> {
  const seconds = Math.min(PRESIGNED_URL_SECONDS, Math.floor((Date.parse(upload.expires_at) - now.getTime()) / 1000));
  if (seconds < 1) throw new ApiError("NotFound", `Upload ${upload.id} has expired; start a new one.`);
  const key = upload.r2_key.split("/").map(encodeURIComponent).join("/");
  const target = new URL(`${config.bucketUrl}/${key}`);
  target.searchParams.set("partNumber", String(partNumber));
  target.searchParams.set("uploadId", upload.r2_upload_id);
  const headers: Record<string, string> = size === null ? {} : { "content-length": String(size) };
  const url = await presignUrl({
    method: "PUT",
    url: target,
    accessKeyId: config.accessKeyId,
    secretAccessKey: config.secretAccessKey,
    region: "auto",
    service: "s3",
    signedAt: now,
    expiresIn: seconds,
    headers,
  });
  return { partNumber, method: "PUT", url: url.toString(), headers, expiresAt: new Date(now.getTime() + seconds * 1000).toISOString() };
}
