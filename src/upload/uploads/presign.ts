/**
 * Presigned R2 URLs (AWS Signature Version 4, query-string form) signed by aws4fetch, the design's
 * signing library: a URL that lets its holder make one kind of request until it expires, with no
 * credentials of its own. Headers named in `headers` (e.g. content-length, so a part's size is bound)
 * are signed too (`allHeaders`: aws4fetch leaves content-length out otherwise); host always is. The
 * payload is not signed (`UNSIGNED-PAYLOAD`, as S3 presigning does).
 */
import { AwsV4Signer } from "aws4fetch";

export interface PresignInput {
  method: string;
  /** The request URL, with any query parameters of its own (partNumber, uploadId...). */
  url: URL;
  accessKeyId: string;
  secretAccessKey: string;
  /** `auto` for R2, `us-east-1` for AWS's example. */
  region: string;
  service: string;
  /** When the signature starts to count. */
  signedAt: Date;
  /** Seconds the URL stays valid: 1 to 604800 (7 days). */
  expiresIn: number;
  /** Further headers the request must carry exactly (e.g. content-length), lower-case names. */
  headers?: Record<string, string>;
}

/** `20130524T000000Z`: SigV4's date-time. */
export function amzDate(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
}

export async function presignUrl(input: PresignInput): Promise<URL> {
  if (!Number.isInteger(input.expiresIn) || input.expiresIn < 1 || input.expiresIn > 604_800) {
    throw new RangeError(`A presigned URL lives 1 to 604800 seconds, not ${input.expiresIn}.`);
  }
  const url = new URL(input.url);
  url.searchParams.set("X-Amz-Expires", String(input.expiresIn));
  const signer = new AwsV4Signer({
    url: url.toString(),
    method: input.method,
    headers: input.headers ?? {},
    accessKeyId: input.accessKeyId,
    secretAccessKey: input.secretAccessKey,
    region: input.region,
    service: input.service,
    datetime: amzDate(input.signedAt),
    signQuery: true,
    allHeaders: true,
  });
  const signed = await signer.sign();
  return new URL(signed.url.toString());
}
