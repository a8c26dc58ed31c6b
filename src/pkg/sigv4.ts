/**
 * AWS Signature Version 4 query-string presigning (the "presigned URL" form), enough for R2's S3
 * API: a URL that lets its holder make one kind of request until it expires, with no credentials of
 * its own. Written here on WebCrypto (HMAC-SHA256) because aws4fetch is not among the installed
 * packages; checked against the example of AWS's "Authenticating requests: using query parameters".
 *
 * What it does not do: sign a payload (the URL carries `UNSIGNED-PAYLOAD`, as S3 presigning does)
 * or headers other than those named in `headers` (host is always signed).
 */

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

const encoder = new TextEncoder();

function toHex(buffer: ArrayBuffer): string {
  return [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** RFC 3986 encoding as SigV4 wants it: everything but A-Z a-z 0-9 - _ . ~ is percent-encoded. */
export function uriEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** `20130524T000000Z`: ISO 8601 basic format, UTC, no fraction. */
export function amzDate(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z").replace(/[-:]/g, "");
}

async function hmac(key: ArrayBuffer | Uint8Array, data: string): Promise<ArrayBuffer> {
  const cryptoKey = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return crypto.subtle.sign("HMAC", cryptoKey, encoder.encode(data));
}

/** The path as S3 canonicalises it: each segment decoded once and encoded again, slashes kept. */
function canonicalPath(url: URL): string {
  return url.pathname
    .split("/")
    .map((segment) => uriEncode(decodeURIComponent(segment)))
    .join("/");
}

/** Returns `input.url` with the X-Amz-* query parameters and the signature added. */
export async function presignUrl(input: PresignInput): Promise<URL> {
  if (!Number.isInteger(input.expiresIn) || input.expiresIn < 1 || input.expiresIn > 604_800) {
    throw new RangeError(`expiresIn must be 1 to 604800 seconds, not ${input.expiresIn}`);
  }
  const datetime = amzDate(input.signedAt);
  const scope = `${datetime.slice(0, 8)}/${input.region}/${input.service}/aws4_request`;
  const headers = new Map<string, string>([["host", input.url.host]]);
  for (const [name, value] of Object.entries(input.headers ?? {})) headers.set(name.toLowerCase(), value.trim());
  const signedHeaders = [...headers.keys()].sort().join(";");

  const url = new URL(input.url);
  url.searchParams.set("X-Amz-Algorithm", "AWS4-HMAC-SHA256");
  url.searchParams.set("X-Amz-Credential", `${input.accessKeyId}/${scope}`);
  url.searchParams.set("X-Amz-Date", datetime);
  url.searchParams.set("X-Amz-Expires", String(input.expiresIn));
  url.searchParams.set("X-Amz-SignedHeaders", signedHeaders);
  const query = [...url.searchParams]
    .map(([key, value]) => [uriEncode(key), uriEncode(value)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`)
    .join("&");
  const canonicalHeaders = [...headers.keys()]
    .sort()
    .map((name) => `${name}:${headers.get(name)}\n`)
    .join("");
  const canonicalRequest = [input.method.toUpperCase(), canonicalPath(url), query, canonicalHeaders, signedHeaders, "UNSIGNED-PAYLOAD"].join("\n");
  const stringToSign = ["AWS4-HMAC-SHA256", datetime, scope, toHex(await crypto.subtle.digest("SHA-256", encoder.encode(canonicalRequest)))].join("\n");

  let key: ArrayBuffer = await hmac(encoder.encode(`AWS4${input.secretAccessKey}`), datetime.slice(0, 8));
  for (const part of [input.region, input.service, "aws4_request"]) key = await hmac(key, part);
  // The signature goes last and is not part of what is signed; the query keeps the sorted order.
  url.search = `${query}&X-Amz-Signature=${toHex(await hmac(key, stringToSign))}`;
  return url;
}
