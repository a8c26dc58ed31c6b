/**
 * SigV4 query-string presigning (aws4fetch), against AWS's documented example (S3 API reference, "Authenticating Requests: Using
 * Query Parameters").
 */
import { describe, expect, it } from "vitest";
import { amzDate, presignUrl } from "../../src/upload/uploads/presign";

const EXAMPLE = {
  method: "GET",
  url: new URL("https://examplebucket.s3.amazonaws.com/test.txt"),
  accessKeyId: "AKIAIOSFODNN7EXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  region: "us-east-1",
  service: "s3",
  signedAt: new Date("2013-05-24T00:00:00Z"),
  expiresIn: 86400,
};

describe("presignUrl", () => {
  it("reproduces AWS's example presigned GET URL", async () => {
    const url = await presignUrl(EXAMPLE);
    expect(url.origin + url.pathname).toBe("https://examplebucket.s3.amazonaws.com/test.txt");
    expect(Object.fromEntries(url.searchParams)).toEqual({
      "X-Amz-Algorithm": "AWS4-HMAC-SHA256",
      "X-Amz-Credential": "AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request",
      "X-Amz-Date": "20130524T000000Z",
      "X-Amz-Expires": "86400",
      "X-Amz-SignedHeaders": "host",
      "X-Amz-Signature": "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404",
    });
  });

  it("signs every input: another key, time, expiry, query parameter or header changes the signature", async () => {
    const signature = async (overrides: Partial<typeof EXAMPLE> & { headers?: Record<string, string> }) =>
      (await presignUrl({ ...EXAMPLE, ...overrides })).searchParams.get("X-Amz-Signature");
    const base = await signature({});
    const variants = await Promise.all([
      signature({ secretAccessKey: "another" }),
      signature({ signedAt: new Date("2013-05-24T00:00:01Z") }),
      signature({ expiresIn: 3600 }),
      signature({ url: new URL("https://examplebucket.s3.amazonaws.com/test.txt?partNumber=2&uploadId=abc") }),
      signature({ method: "PUT" }),
      signature({ region: "auto" }),
      signature({ headers: { "content-length": "5242880" } }),
    ]);
    for (const variant of variants) expect(variant).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set([base, ...variants]).size).toBe(variants.length + 1);
  });

  it("lists signed headers in order and keeps the URL's own parameters", async () => {
    const url = await presignUrl({
      ...EXAMPLE,
      method: "PUT",
      url: new URL("https://acct.r2.cloudflarestorage.com/bucket/files/a b?uploadId=x%2By&partNumber=3"),
      headers: { "Content-Length": "10" },
    });
    expect(url.searchParams.get("X-Amz-SignedHeaders")).toBe("content-length;host");
    expect(url.searchParams.get("uploadId")).toBe("x+y");
    expect(url.searchParams.get("partNumber")).toBe("3");
  });

  it.each([0, 604_801, 1.5])("refuses an expiry of %s seconds", async (expiresIn) => {
    await expect(presignUrl({ ...EXAMPLE, expiresIn })).rejects.toThrow(RangeError);
  });

  it("formats SigV4's date", () => {
    expect(amzDate(new Date("2013-05-24T00:00:00.000Z"))).toBe("20130524T000000Z");
  });
});
