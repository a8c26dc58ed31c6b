/**
 * Issue 22, "Request bodies": a large body sent without Content-Length (chunked, or gzip that the
 * Worker decompresses) is counted as it streams, never read whole to be measured. A part of an upload
 * whose size was declared streams to R2 under the length the upload expects of it.
 */
import { describe, expect, it } from "vitest";
import { uploadForm } from "../media/support/media";
import { ALICE, compositeSha256, createDataType, patternBytes, sha256Hex } from "../support/factories/upload";
import { call } from "../support/http";

const MiB = 1024 * 1024;
const PART = 5 * MiB;

/** The bytes as a stream without a known length, in 256 KiB chunks. */
function chunked(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + 256 * 1024));
      at += 256 * 1024;
    },
  });
}

async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer());
}

async function startUpload(size: number | undefined) {
  const dataType = await createDataType({ allowedExtensions: ["bin"] });
  const res = await call("/Files/Uploads", {
    method: "POST",
    user: ALICE,
    body: { dataTypeId: dataType.id, name: "c.bin", partSize: PART, ...(size ? { size } : {}) },
  });
  expect(res.status, res.text).toBe(201);
  return (res.body as { uploadId: string }).uploadId;
}

const putPart = (uploadId: string, n: number, body: BodyInit, headers: Record<string, string> = {}) =>
  call(`/Files/Uploads/${uploadId}/Parts/${n}`, {
    method: "PUT",
    user: ALICE,
    rawBody: body,
    headers: { "content-type": "application/octet-stream", ...headers },
  });

describe("large bodies without Content-Length", () => {
  it(
    "streams chunked and gzip parts of a declared upload to R2 under the expected length, and refuses a part of " +
      "another length with a 400",
    async () => {
      const bytes = patternBytes(PART + 4321, 31);
      const uploadId = await startUpload(bytes.length);
      const first = await putPart(uploadId, 1, chunked(bytes.subarray(0, PART)));
      expect(first.status, first.text).toBe(200);
      expect(first.body).toMatchObject({ partNumber: 1, size: PART });

      const tooLong = await putPart(uploadId, 2, chunked(patternBytes(4322, 1)));
      expect(tooLong.status, tooLong.text).toBe(400);
      expect(tooLong.body.errors[0]).toMatchObject({ field: "body", rule: "size" });
      const tooShort = await putPart(uploadId, 2, chunked(patternBytes(4000, 1)));
      expect(tooShort.status, tooShort.text).toBe(400);

      const packed = await gzip(bytes.subarray(PART));
      const second = await putPart(uploadId, 2, packed, { "content-encoding": "gzip" });
      expect(second.status, second.text).toBe(200);
      const done = await call(`/Files/Uploads/${uploadId}/Completion`, { method: "POST", user: ALICE });
      expect(done.status, done.text).toBe(201);
      expect(done.body.checksum).toBe(await compositeSha256(bytes, PART));
    },
  );

  it("replays a chunked part sent again with its Idempotency-Key", async () => {
    const bytes = patternBytes(PART, 32);
    const uploadId = await startUpload(2 * PART);
    const key = `chunked-${crypto.randomUUID()}`;
    const first = await putPart(uploadId, 1, chunked(bytes), { "idempotency-key": key });
    expect(first.status, first.text).toBe(200);
    const again = await putPart(uploadId, 1, chunked(bytes), { "idempotency-key": key });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect((await putPart(uploadId, 1, chunked(patternBytes(PART, 33)), { "idempotency-key": key })).status).toBe(422);
  });

  it("reads a chunked part of an upload without a declared size up to its part size", async () => {
    const uploadId = await startUpload(undefined);
    const tail = patternBytes(3000, 34);
    const ok = await putPart(uploadId, 1, chunked(tail));
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.size).toBe(3000);
    const tooLarge = await putPart(uploadId, 2, chunked(patternBytes(PART + 1, 35)));
    expect(tooLarge.status, tooLarge.text).toBe(413);
  });

  it("stops a gzip body that inflates past the route's limit with a 413 as it streams (POST /Medias, 20 MiB + 64 KiB)", async () => {
    // A 19 MiB document, then an ignored field that takes the form past the limit: 25 MiB of text,
    // about 25 KiB compressed.
    const form = uploadForm(new Uint8Array(19 * MiB).fill(97), { name: "notes.txt", type: "document", mimeType: "text/plain" });
    form.append("Padding", "x".repeat(6 * MiB));
    const response = new Response(form);
    const packed = await gzip(new Uint8Array(await response.arrayBuffer()));
    expect(packed.length).toBeLessThan(MiB);
    const res = await call("/Medias", {
      method: "POST",
      rawBody: packed,
      headers: { "content-type": response.headers.get("content-type")!, "content-encoding": "gzip" },
    });
    expect(res.status, res.text).toBe(413);
    expect(res.body.code).toBe("PayloadTooLarge");
  });

  it("keeps a chunked file of a form whole: the checksum is the bytes'", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const content = patternBytes(3 * MiB + 3, 36);
    const form = new FormData();
    form.append("DataTypeId", dataType.id);
    form.append("File", new File([content], "c.bin"));
    const response = new Response(form);
    const res = await call("/Files", {
      method: "POST",
      rawBody: chunked(new Uint8Array(await response.arrayBuffer())),
      headers: { "content-type": response.headers.get("content-type")! },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.checksum).toBe(await sha256Hex(content));
  });

  it(
    "answers a gzip JSON PUT without If-Match that inflates past the JSON limit with a 413 (the last-writer-wins " +
      "retry keeps at most the limit)",
    async () => {
      const created = await call("/Categories", { method: "POST", body: { name: `big-${crypto.randomUUID()}` } });
      expect(created.status).toBe(201);
      // 8 MiB of JSON (a long name), about 8 KiB compressed.
      const packed = await gzip(new TextEncoder().encode(JSON.stringify({ id: created.body.id, name: "n".repeat(8 * MiB) })));
      const res = await call("/Categories", {
        method: "PUT",
        rawBody: packed,
        headers: { "content-type": "application/json", "content-encoding": "gzip" },
      });
      expect(res.status, res.text).toBe(413);
      expect(res.body.code).toBe("PayloadTooLarge");
    },
  );
});
