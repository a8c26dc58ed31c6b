import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { FileSchema } from "../../src/upload/files/schema";
import { UploadSchema } from "../../src/upload/uploads/schema";
import { outboxActions } from "../support/factories/types";
import { ALICE, BOB, compositeSha256, createDataType, patternBytes, rawCall, sha256Hex } from "../support/factories/upload";
import { call } from "../support/http";

const MiB = 1024 * 1024;
const PART = 5 * MiB;

async function start(body: Record<string, unknown>, user: { id: string; name: string } = ALICE) {
  const res = await call("/Files/Uploads", { method: "POST", body, user });
  expect(res.status, res.text).toBe(201);
  return res.body as { uploadId: string; fileId: string; partSize: number; expiresAt: string };
}

function putPart(uploadId: string, partNumber: number, bytes: Uint8Array, user: { id: string; name: string } = ALICE) {
  return call(`/Files/Uploads/${uploadId}/Parts/${partNumber}`, {
    method: "PUT",
    rawBody: bytes,
    user,
    headers: { "content-type": "application/octet-stream" },
  });
}

const slice = (bytes: Uint8Array, part: number, size = PART) => bytes.subarray((part - 1) * size, part * size);

describe("resumable multipart upload", () => {
  it("uploads 11 MiB in three parts out of order, survives a bad re-sent part, completes, and downloads the same bytes", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const bytes = patternBytes(11 * MiB + 4321, 11);
    const upload = await start({ dataTypeId: dataType.id, name: "survey.bin", partSize: PART, contentType: "application/x-survey" });
    expect(upload.partSize).toBe(PART);
    expect(Date.parse(upload.expiresAt)).toBeGreaterThan(Date.now());

    expect((await putPart(upload.uploadId, 3, slice(bytes, 3))).status).toBe(200);
    // Part 2 first arrives damaged (an interrupted link, a client bug): the client sends it again.
    expect((await putPart(upload.uploadId, 2, patternBytes(PART, 99))).status).toBe(200);
    const part1 = await putPart(upload.uploadId, 1, slice(bytes, 1));
    expect(part1.body).toMatchObject({ partNumber: 1, size: PART });

    // The client reads what arrived, and resends part 2.
    const status = await call(`/Files/Uploads/${upload.uploadId}`, { user: ALICE });
    expect(status.status).toBe(200);
    expect(UploadSchema.safeParse(status.body).success).toBe(true);
    expect(status.body.parts.map((p: { partNumber: number; size: number }) => [p.partNumber, p.size])).toEqual([
      [1, PART],
      [2, PART],
      [3, MiB + 4321],
    ]);
    expect(status.body.completed).toBe(false);
    expect((await putPart(upload.uploadId, 2, slice(bytes, 2))).status).toBe(200);

    const done = await call(`/Files/Uploads/${upload.uploadId}/Completion`, { method: "POST", user: ALICE });
    expect(done.status, done.text).toBe(201);
    expect(FileSchema.safeParse(done.body).success).toBe(true);
    expect(done.body).toMatchObject({
      id: upload.fileId,
      name: "survey.bin",
      size: bytes.length,
      contentType: "application/x-survey",
      // Three parts: the composite checksum a client recomputes from its bytes and part size.
      checksum: await compositeSha256(bytes, PART),
      status: "none",
      objectOwner: { id: ALICE.id, name: ALICE.name },
    });
    expect(done.headers.get("location")).toBe(`/Files/${upload.fileId}`);
    expect(await outboxActions("file", upload.fileId)).toEqual(["created"]);

    const download = await rawCall(`/Files/${upload.fileId}/Data`, { user: ALICE });
    expect(download.status).toBe(200);
    expect(download.bytes.length).toBe(bytes.length);
    expect(await sha256Hex(download.bytes)).toBe(await sha256Hex(bytes));

    // Completing again returns the same file.
    const again = await call(`/Files/Uploads/${upload.uploadId}/Completion`, { method: "POST", user: ALICE });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(done.body);
    expect((await call(`/Files/Uploads/${upload.uploadId}`, { user: ALICE })).body).toMatchObject({ completed: true, parts: [] });
    expect((await putPart(upload.uploadId, 1, slice(bytes, 1))).status).toBe(409);
    expect((await call(`/Files/Uploads/${upload.uploadId}`, { method: "DELETE", user: ALICE })).status).toBe(409);
  });

  it("checks parts against a declared size as they arrive and the total at completion", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const size = PART + 10;
    const upload = await start({ dataTypeId: dataType.id, name: "sized.bin", size, partSize: PART });
    expect((await call(`/Files/Uploads/${upload.uploadId}`, { user: ALICE })).body.expectedParts).toBe(2);
    const tooShortLast = await putPart(upload.uploadId, 2, patternBytes(9));
    expect(tooShortLast.status).toBe(400);
    expect(tooShortLast.body.errors[0]).toMatchObject({ field: "body", rule: "size" });
    const beyond = await putPart(upload.uploadId, 3, patternBytes(10));
    expect(beyond.body.errors[0]).toMatchObject({ field: "path.partNumber", rule: "range" });
    const bytes = patternBytes(size, 5);
    await putPart(upload.uploadId, 1, bytes.subarray(0, PART));
    await putPart(upload.uploadId, 2, bytes.subarray(PART));
    const done = await call(`/Files/Uploads/${upload.uploadId}/Completion`, { method: "POST", user: ALICE });
    expect(done.status).toBe(201);
    expect(done.body.checksum).toBe(await compositeSha256(bytes, PART));
    expect(done.body.checksum).toMatch(/^sha256-parts:[0-9a-f]{64}-2$/);
    // The download's ETag is the checksum, so a resumed download checks against the same value.
    expect((await rawCall(`/Files/${upload.fileId}/Data`, { user: ALICE, headers: { range: "bytes=0-0" } })).headers.get("etag")).toBe(
      `"${done.body.checksum}"`,
    );
  });

  it("hashes each part as it streams in (also a part sent without Content-Length) and keeps its digest", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const bytes = patternBytes(PART + 777, 12);
    const upload = await start({ dataTypeId: dataType.id, name: "streamed.bin", partSize: PART });
    await putPart(upload.uploadId, 1, bytes.subarray(0, PART));
    // A chunked body: no Content-Length, so the Worker measures it before storing it.
    const tail = bytes.subarray(PART);
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(tail.subarray(0, 100));
        controller.enqueue(tail.subarray(100));
        controller.close();
      },
    });
    expect((await putPart(upload.uploadId, 2, chunked as unknown as Uint8Array)).status).toBe(200);
    const { results } = await env.DB.prepare("SELECT part_number, checksum FROM upload_parts WHERE upload_id = ?1 ORDER BY part_number")
      .bind(upload.uploadId)
      .all<{ part_number: number; checksum: string }>();
    expect(results).toEqual([
      { part_number: 1, checksum: await sha256Hex(bytes.subarray(0, PART)) },
      { part_number: 2, checksum: await sha256Hex(tail) },
    ]);
    const done = await call(`/Files/Uploads/${upload.uploadId}/Completion`, { method: "POST", user: ALICE });
    expect(done.body.checksum).toBe(await compositeSha256(bytes, PART));
  });

  it("reads the file back for a plain SHA-256 when a part has no digest (recorded before parts were hashed)", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const bytes = patternBytes(PART + 5, 13);
    const upload = await start({ dataTypeId: dataType.id, name: "legacy.bin", partSize: PART });
    await putPart(upload.uploadId, 1, bytes.subarray(0, PART));
    await putPart(upload.uploadId, 2, bytes.subarray(PART));
    await env.DB.prepare("UPDATE upload_parts SET checksum = NULL WHERE upload_id = ?1 AND part_number = 2").bind(upload.uploadId).run();
    const done = await call(`/Files/Uploads/${upload.uploadId}/Completion`, { method: "POST", user: ALICE });
    expect(done.status, done.text).toBe(201);
    expect(done.body.checksum).toBe(await sha256Hex(bytes));
  });

  it("refuses completion with a missing part or a short middle part (409 naming the problem)", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const upload = await start({ dataTypeId: dataType.id, name: "gaps.bin", partSize: PART });
    const empty = await call(`/Files/Uploads/${upload.uploadId}/Completion`, { method: "POST", user: ALICE });
    expect(empty.status).toBe(409);
    expect(empty.body.errors[0]).toMatchObject({ field: "parts", rule: "required" });
    await putPart(upload.uploadId, 1, patternBytes(PART));
    await putPart(upload.uploadId, 3, patternBytes(10));
    const gap = await call(`/Files/Uploads/${upload.uploadId}/Completion`, { method: "POST", user: ALICE });
    expect(gap.status).toBe(409);
    expect(gap.body.errors[0]).toMatchObject({ field: "parts", rule: "contiguous" });
    expect(gap.body.detail).toContain("Parts 2 are missing");
    await putPart(upload.uploadId, 2, patternBytes(PART - 1));
    const short = await call(`/Files/Uploads/${upload.uploadId}/Completion`, { method: "POST", user: ALICE });
    expect(short.status).toBe(409);
    expect(short.body.errors[0]).toMatchObject({ field: "parts", rule: "size" });
  });

  it("repairs a completion that crashed after R2 assembled the object: completing again makes the file visible", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const bytes = patternBytes(3000, 8);
    const upload = await start({ dataTypeId: dataType.id, name: "crash.bin" });
    await putPart(upload.uploadId, 1, bytes);
    const r2 = await env.DB.prepare(
      "SELECT u.r2_key, u.r2_upload_id, p.etag FROM file_uploads u JOIN upload_parts p ON p.upload_id = u.id WHERE u.id = ?1",
    )
      .bind(upload.uploadId)
      .first<{ r2_key: string; r2_upload_id: string; etag: string }>();
    // The first attempt got as far as R2's completion and no further.
    await env.UPLOADS.resumeMultipartUpload(r2!.r2_key, r2!.r2_upload_id).complete([{ partNumber: 1, etag: r2!.etag }]);
    expect((await call(`/Files/${upload.fileId}`, { user: ALICE })).status).toBe(404);
    const done = await call(`/Files/Uploads/${upload.uploadId}/Completion`, { method: "POST", user: ALICE });
    expect(done.status, done.text).toBe(201);
    expect(done.body.checksum).toBe(await sha256Hex(bytes));
    expect((await call(`/Files/${upload.fileId}`, { user: ALICE })).status).toBe(200);
  });

  it("refuses a part larger than partSize (413) and an empty part (400)", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const upload = await start({ dataTypeId: dataType.id, name: "big.bin", partSize: PART });
    expect((await putPart(upload.uploadId, 1, patternBytes(PART + 1))).status).toBe(413);
    expect((await putPart(upload.uploadId, 1, new Uint8Array(0))).status).toBe(400);
  });

  it("aborts: the parts, the invisible file and the R2 upload are gone", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const upload = await start({ dataTypeId: dataType.id, name: "abort.bin", partSize: PART });
    await putPart(upload.uploadId, 1, patternBytes(PART));
    expect((await call(`/Files/Uploads/${upload.uploadId}`, { method: "DELETE", user: ALICE })).status).toBe(204);
    expect((await call(`/Files/Uploads/${upload.uploadId}`, { user: ALICE })).status).toBe(404);
    const rows = await env.DB.prepare(
      "SELECT (SELECT count(*) FROM files WHERE id = ?1) AS files, (SELECT count(*) FROM upload_parts WHERE upload_id = ?2) AS parts",
    )
      .bind(upload.fileId, upload.uploadId)
      .first<{ files: number; parts: number }>();
    expect(rows).toEqual({ files: 0, parts: 0 });
    expect(await outboxActions("file", upload.fileId)).toEqual([]);
  });

  describe("start", () => {
    describe.each([
      ["a disallowed extension", { name: "virus.exe" }, "body.name", "extension"],
      ["an unknown data type", { dataTypeId: "no-such-type" }, "body.dataTypeId", "exists"],
      ["a part size under 5 MiB", { partSize: MiB }, "body.partSize", "too_small"],
      ["a part size over 95 MiB", { partSize: 96 * MiB }, "body.partSize", "too_big"],
      ["a size needing more than 10,000 parts of the chosen size", { size: 10_001 * PART, partSize: PART }, "body.size", "limit"],
      ["an owner name without an id", { objectOwner: { name: "x" } }, "body.objectOwner.id", "invalid_type"],
    ])("with %s", (_label, overrides, field, rule) => {
      it("is a 400 naming the field and stores nothing", async () => {
        const dataType = await createDataType({ allowedExtensions: ["bin"] });
        const res = await call("/Files/Uploads", {
          method: "POST",
          user: ALICE,
          body: { dataTypeId: dataType.id, name: "ok.bin", ...overrides },
        });
        expect(res.status, res.text).toBe(400);
        expect(res.body.errors).toContainEqual(expect.objectContaining({ field, rule }));
        const count = await env.DB.prepare("SELECT count(*) AS n FROM files WHERE data_type_id = ?1")
          .bind(dataType.id)
          .first<{ n: number }>();
        expect(count?.n).toBe(0);
      });
    });

    it("picks a part size that fits 10,000 parts for a declared size, and takes an explicit owner", async () => {
      const dataType = await createDataType({ allowedExtensions: ["bin"] });
      const upload = await start({
        dataTypeId: dataType.id,
        name: "huge.bin",
        size: 200 * 1024 * MiB,
        objectOwner: { id: BOB.id, name: BOB.name },
      });
      expect(upload.partSize).toBe(21 * MiB);
      const row = await env.DB.prepare("SELECT owner_id, owner_name, state FROM files WHERE id = ?1").bind(upload.fileId).first();
      expect(row).toEqual({ owner_id: BOB.id, owner_name: BOB.name, state: "uploading" });
    });
  });

  describe("security", () => {
    it("hides another user's upload (404 everywhere)", async () => {
      const dataType = await createDataType({ allowedExtensions: ["bin"] });
      const upload = await start({ dataTypeId: dataType.id, name: "mine.bin", partSize: PART });
      expect((await call(`/Files/Uploads/${upload.uploadId}`, { user: BOB })).status).toBe(404);
      expect((await putPart(upload.uploadId, 1, patternBytes(10), BOB)).status).toBe(404);
      expect((await call(`/Files/Uploads/${upload.uploadId}/Completion`, { method: "POST", user: BOB })).status).toBe(404);
      expect((await call(`/Files/Uploads/${upload.uploadId}`, { method: "DELETE", user: BOB })).status).toBe(404);
      expect((await call(`/Files/${upload.fileId}`, { user: ALICE })).status).toBe(404);
    });

    it("needs a token and files_write", async () => {
      const id = crypto.randomUUID();
      expect((await call("/Files/Uploads", { method: "POST", anonymous: true, body: {} })).status).toBe(401);
      expect((await call(`/Files/Uploads/${id}`, { anonymous: true })).status).toBe(401);
      const reader = { permissions: ["files_read"] };
      expect((await call("/Files/Uploads", { method: "POST", user: reader, body: { dataTypeId: "x", name: "y" } })).status).toBe(403);
      expect((await call(`/Files/Uploads/${id}`, { user: reader })).status).toBe(403);
      expect((await call(`/Files/Uploads/${id}/Parts/1`, { method: "PUT", user: reader, rawBody: "x" })).status).toBe(403);
      expect((await call(`/Files/Uploads/${id}/Completion`, { method: "POST", user: reader })).status).toBe(403);
      expect((await call(`/Files/Uploads/${id}`, { method: "DELETE", user: reader })).status).toBe(403);
    });

    it("answers 400 for a malformed upload id or part number", async () => {
      expect((await call("/Files/Uploads/nope")).status).toBe(400);
      expect((await call(`/Files/Uploads/${crypto.randomUUID()}/Parts/0`, { method: "PUT", rawBody: "x" })).status).toBe(400);
      expect((await call(`/Files/Uploads/${crypto.randomUUID()}/Parts/10001`, { method: "PUT", rawBody: "x" })).status).toBe(400);
    });
  });
});
