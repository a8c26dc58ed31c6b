/**
 * Presigned direct-to-R2 parts. R2's S3 endpoint is not reachable from the tests, so a part "sent
 * to the presigned URL" is stored through the binding under the key and upload id the URL names,
 * which is what R2 does with that PUT; the URL's signature is checked by the SigV4 tests.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { FileSchema } from "../../src/upload/files/schema";
import { ALICE, BOB, createDataType, patternBytes, rawCall, sha256Hex } from "../support/factories/upload";
import { call, tokenFor } from "../support/http";

const MiB = 1024 * 1024;
const PART = 5 * MiB;
const R2_S3 = {
  R2_ACCESS_KEY_ID: "AKIDEXAMPLE",
  R2_SECRET_ACCESS_KEY: "secret-example",
  R2_ACCOUNT_ID: "0123456789abcdef",
  R2_BUCKET_NAME: "uploads-test",
};

/** One request to the Worker as deployed with R2 S3 credentials. */
async function callConfigured(path: string, init: { method?: string; body?: unknown; user?: { id: string; name: string } } = {}) {
  const headers = new Headers({ authorization: `Bearer ${await tokenFor(init.user ?? ALICE)}` });
  if (init.body !== undefined) headers.set("content-type", "application/json");
  const ctx = createExecutionContext();
  const request = new Request(`https://api.test${path}`, {
    method: init.method ?? "GET",
    headers,
    body: init.body === undefined ? null : JSON.stringify(init.body),
  });
  const response = await worker.fetch!(request as Request<unknown, IncomingRequestCfProperties>, { ...env, ...R2_S3 }, ctx);
  await waitOnExecutionContext(ctx);
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

async function start(body: Record<string, unknown>) {
  const res = await call("/Files/Uploads", { method: "POST", body, user: ALICE });
  expect(res.status, res.text).toBe(201);
  return res.body as { uploadId: string; fileId: string };
}

/** What R2 does with a PUT to a presigned UploadPart URL: stores the part under the URL's key and upload id. */
async function putToPresigned(url: string, bytes: Uint8Array): Promise<string> {
  const parsed = new URL(url);
  const key = decodeURIComponent(parsed.pathname.split("/").slice(2).join("/"));
  const part = await env.UPLOADS.resumeMultipartUpload(key, parsed.searchParams.get("uploadId")!).uploadPart(
    Number(parsed.searchParams.get("partNumber")),
    bytes,
  );
  return part.etag;
}

describe("POST /Files/Uploads/{uploadId}/Parts/{partNumber}/PresignedUrl", () => {
  it("answers 501 NotConfigured without R2 S3 credentials (the local default)", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const upload = await start({ dataTypeId: dataType.id, name: "a.bin" });
    const res = await call(`/Files/Uploads/${upload.uploadId}/Parts/1/PresignedUrl`, { method: "POST", user: ALICE });
    expect(res.status).toBe(501);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.body).toMatchObject({ code: "NotConfigured", status: 501 });
    expect(res.body.detail).toContain("R2_ACCESS_KEY_ID");
  });

  it("presigns an UploadPart URL for R2's S3 endpoint, signing the part's size when it is known", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const upload = await start({ dataTypeId: dataType.id, name: "big.bin", size: PART + 10, partSize: PART });
    const row = await env.DB.prepare("SELECT r2_key, r2_upload_id FROM file_uploads WHERE id = ?1")
      .bind(upload.uploadId)
      .first<{ r2_key: string; r2_upload_id: string }>();
    const res = await callConfigured(`/Files/Uploads/${upload.uploadId}/Parts/2/PresignedUrl`, { method: "POST" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ partNumber: 2, method: "PUT", headers: { "content-length": "10" } });
    const url = new URL(res.body.url);
    expect(url.origin).toBe("https://0123456789abcdef.r2.cloudflarestorage.com");
    expect(url.pathname).toBe(`/uploads-test/${row!.r2_key}`);
    expect(url.searchParams.get("partNumber")).toBe("2");
    expect(url.searchParams.get("uploadId")).toBe(row!.r2_upload_id);
    expect(url.searchParams.get("X-Amz-Credential")).toMatch(/^AKIDEXAMPLE\/\d{8}\/auto\/s3\/aws4_request$/);
    expect(url.searchParams.get("X-Amz-SignedHeaders")).toBe("content-length;host");
    expect(url.searchParams.get("X-Amz-Expires")).toBe("3600");
    expect(url.searchParams.get("X-Amz-Signature")).toMatch(/^[0-9a-f]{64}$/);
    expect(Date.parse(res.body.expiresAt) - Date.now()).toBeLessThanOrEqual(3600_000);
  });

  it.each([
    ["a part past the declared size", "/Parts/3/PresignedUrl", 400],
    ["part 0", "/Parts/0/PresignedUrl", 400],
  ])("refuses %s", async (_, suffix, status) => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const upload = await start({ dataTypeId: dataType.id, name: "s.bin", size: PART + 10, partSize: PART });
    const res = await callConfigured(`/Files/Uploads/${upload.uploadId}${suffix}`, { method: "POST" });
    expect(res.status).toBe(status);
    expect(res.body.errors[0].field).toBe("path.partNumber");
  });

  it("is a 404 for anyone but the caller who started the upload", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const upload = await start({ dataTypeId: dataType.id, name: "o.bin" });
    expect((await callConfigured(`/Files/Uploads/${upload.uploadId}/Parts/1/PresignedUrl`, { method: "POST", user: BOB })).status).toBe(
      404,
    );
  });

  it("needs a token and files_write", async () => {
    expect((await call(`/Files/Uploads/${crypto.randomUUID()}/Parts/1/PresignedUrl`, { method: "POST", anonymous: true })).status).toBe(
      401,
    );
    const reader = { ...ALICE, permissions: ["files_read"] };
    expect((await call(`/Files/Uploads/${crypto.randomUUID()}/Parts/1/PresignedUrl`, { method: "POST", user: reader })).status).toBe(403);
  });
});

describe("POST /Files/Uploads/{uploadId}/DirectCompletion", () => {
  it("assembles parts sent straight to R2 and through the Worker; the checksum is the plain SHA-256, read back", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const bytes = patternBytes(2 * PART + 99, 21);
    const upload = await start({ dataTypeId: dataType.id, name: "mixed.bin", size: bytes.length, partSize: PART });
    const etags: { partNumber: number; etag: string }[] = [];
    for (const n of [1, 3]) {
      const presigned = await callConfigured(`/Files/Uploads/${upload.uploadId}/Parts/${n}/PresignedUrl`, { method: "POST" });
      etags.push({ partNumber: n, etag: await putToPresigned(presigned.body.url, bytes.subarray((n - 1) * PART, n * PART)) });
    }
    // Part 2 goes through the Worker (a client may mix both).
    const viaWorker = await call(`/Files/Uploads/${upload.uploadId}/Parts/2`, {
      method: "PUT",
      rawBody: bytes.subarray(PART, 2 * PART),
      user: ALICE,
    });
    expect(viaWorker.status).toBe(200);

    const done = await call(`/Files/Uploads/${upload.uploadId}/DirectCompletion`, { method: "POST", user: ALICE, body: { parts: etags } });
    expect(done.status, done.text).toBe(201);
    expect(FileSchema.parse(done.body)).toMatchObject({ id: upload.fileId, size: bytes.length, checksum: await sha256Hex(bytes) });
    const download = await rawCall(`/Files/${upload.fileId}/Data`, { user: ALICE });
    expect(await sha256Hex(download.bytes)).toBe(await sha256Hex(bytes));
    const again = await call(`/Files/Uploads/${upload.uploadId}/DirectCompletion`, { method: "POST", user: ALICE, body: { parts: etags } });
    expect(again.status).toBe(200);
  });

  it("answers 409 (rule assemble) for a wrong ETag and leaves the upload usable", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const bytes = patternBytes(1000, 22);
    const upload = await start({ dataTypeId: dataType.id, name: "wrong.bin" });
    const presigned = await callConfigured(`/Files/Uploads/${upload.uploadId}/Parts/1/PresignedUrl`, { method: "POST" });
    const etag = await putToPresigned(presigned.body.url, bytes);
    const wrong = await call(`/Files/Uploads/${upload.uploadId}/DirectCompletion`, {
      method: "POST",
      user: ALICE,
      body: { parts: [{ partNumber: 1, etag: "0".repeat(32) }] },
    });
    expect(wrong.status).toBe(409);
    expect(wrong.body.errors[0]).toMatchObject({ field: "parts", rule: "assemble" });
    const right = await call(`/Files/Uploads/${upload.uploadId}/DirectCompletion`, {
      method: "POST",
      user: ALICE,
      body: { parts: [{ partNumber: 1, etag }] },
    });
    expect(right.status, right.text).toBe(201);
    expect(right.body.checksum).toBe(await sha256Hex(bytes));
  });

  it("removes the upload when the assembled size differs from the declared one", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const upload = await start({ dataTypeId: dataType.id, name: "short.bin", size: 5000 });
    const presigned = await callConfigured(`/Files/Uploads/${upload.uploadId}/Parts/1/PresignedUrl`, { method: "POST" });
    // R2 would refuse this PUT (its Content-Length is signed); stored through the binding it shows what the completion checks.
    const etag = await putToPresigned(presigned.body.url, patternBytes(4000));
    const res = await call(`/Files/Uploads/${upload.uploadId}/DirectCompletion`, {
      method: "POST",
      user: ALICE,
      body: { parts: [{ partNumber: 1, etag }] },
    });
    expect(res.status).toBe(409);
    expect(res.body.errors[0]).toMatchObject({ field: "parts", rule: "size" });
    expect((await call(`/Files/Uploads/${upload.uploadId}`, { user: ALICE })).status).toBe(404);
    expect((await call(`/Files/${upload.fileId}`, { user: ALICE })).status).toBe(404);
  });

  it.each([
    ["no parts", { parts: [] }, "body.parts"],
    [
      "a repeated part number",
      {
        parts: [
          { partNumber: 1, etag: "a" },
          { partNumber: 1, etag: "b" },
        ],
      },
      "body.parts",
    ],
    ["an empty etag", { parts: [{ partNumber: 1, etag: "" }] }, "body.parts.0.etag"],
  ])("refuses %s (400)", async (_, body, field) => {
    const res = await call(`/Files/Uploads/${crypto.randomUUID()}/DirectCompletion`, { method: "POST", user: ALICE, body });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });
});
