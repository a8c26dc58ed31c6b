import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SWEEP_CURSOR_KEY } from "../../src/upload/cleanup";
import { ALICE, bucketKeys, createDataType, patternBytes, rawCall, runCron, uploadFile } from "../support/factories/upload";
import { call } from "../support/http";

const HOUR = 60 * 60 * 1000;
const MiB = 1024 * 1024;

async function rowCounts(upload: { uploadId: string; fileId: string }) {
  return env.DB.prepare(
    "SELECT (SELECT count(*) FROM files WHERE id = ?1) AS files, (SELECT count(*) FROM file_uploads WHERE id = ?2) " +
      "AS uploads, (SELECT count(*) FROM upload_parts WHERE upload_id = ?2) AS parts",
  )
    .bind(upload.fileId, upload.uploadId)
    .first<{ files: number; uploads: number; parts: number }>();
}

describe("the scheduled cleanup", () => {
  it("aborts and removes an abandoned upload once it expires, not before", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const started = await call("/Files/Uploads", {
      method: "POST",
      user: ALICE,
      body: { dataTypeId: dataType.id, name: "left.bin", partSize: 5 * MiB },
    });
    const upload = started.body as { uploadId: string; fileId: string; expiresAt: string };
    await call(`/Files/Uploads/${upload.uploadId}/Parts/1`, { method: "PUT", user: ALICE, rawBody: patternBytes(5 * MiB) });

    const r2 = await env.DB.prepare("SELECT r2_key, r2_upload_id FROM file_uploads WHERE id = ?1")
      .bind(upload.uploadId)
      .first<{ r2_key: string; r2_upload_id: string }>();

    await runCron(Date.now());
    expect(await rowCounts(upload)).toEqual({ files: 1, uploads: 1, parts: 1 });

    await runCron(Date.parse(upload.expiresAt) + 1000);
    expect(await rowCounts(upload)).toEqual({ files: 0, uploads: 0, parts: 0 });
    // The R2 multipart upload is aborted too: it takes no more parts, and no object appeared.
    await expect(env.UPLOADS.resumeMultipartUpload(r2!.r2_key, r2!.r2_upload_id).uploadPart(2, "x")).rejects.toThrow();
    expect(await bucketKeys(`files/${upload.fileId}/`)).toEqual([]);
  });

  it("keeps a completed upload's file and only drops the upload row after expiry", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const started = await call("/Files/Uploads", { method: "POST", user: ALICE, body: { dataTypeId: dataType.id, name: "kept.bin" } });
    const upload = started.body as { uploadId: string; fileId: string };
    await call(`/Files/Uploads/${upload.uploadId}/Parts/1`, { method: "PUT", user: ALICE, rawBody: patternBytes(1000) });
    const done = await call(`/Files/Uploads/${upload.uploadId}/Completion`, { method: "POST", user: ALICE });
    expect(done.status).toBe(201);
    await runCron(Date.now() + 48 * HOUR);
    expect(await rowCounts(upload)).toEqual({ files: 1, uploads: 0, parts: 0 });
    expect((await call(`/Files/${upload.fileId}`, { user: ALICE })).status).toBe(200);
  });

  it("deletes an orphan object older than an hour, keeps a younger one and every ready file's object", async () => {
    const dataType = await createDataType();
    const kept = await uploadFile(dataType.id, { name: "kept.csv", content: "x" });
    const keptKey = (await env.DB.prepare("SELECT r2_key FROM files WHERE id = ?1").bind(kept.body.id).first<{ r2_key: string }>())!.r2_key;
    // As left by a POST whose row insert failed: an object under files/ with no row.
    const orphanKey = `files/${crypto.randomUUID()}/0123456789abcdef01234567`;
    await env.UPLOADS.put(orphanKey, "orphan");
    // Not one of our keys: never touched.
    await env.UPLOADS.put("files/hand-made-object", "x");

    await runCron(Date.now());
    expect(await env.UPLOADS.head(orphanKey)).not.toBeNull();

    await runCron(Date.now() + HOUR + 60_000);
    expect(await env.UPLOADS.head(orphanKey)).toBeNull();
    expect(await env.UPLOADS.head(keptKey)).not.toBeNull();
    expect(await env.UPLOADS.head("files/hand-made-object")).not.toBeNull();
    expect(await env.UPLOADS.head(SWEEP_CURSOR_KEY)).toBeNull();
    const download = await rawCall(`/Files/${kept.body.id}/Data`);
    expect(new TextDecoder().decode(download.bytes)).toBe("x");
  });

  it("keeps the object of an upload in progress (assembled but not yet marked ready)", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const started = await call("/Files/Uploads", { method: "POST", user: ALICE, body: { dataTypeId: dataType.id, name: "crash.bin" } });
    const upload = started.body as { uploadId: string; fileId: string };
    const row = await env.DB.prepare("SELECT r2_key FROM file_uploads WHERE id = ?1").bind(upload.uploadId).first<{ r2_key: string }>();
    // A completion that crashed after R2 assembled the object: the object exists, the file is still uploading.
    await env.UPLOADS.put(row!.r2_key, "assembled");
    await runCron(Date.now() + 2 * HOUR);
    expect(await env.UPLOADS.head(row!.r2_key)).not.toBeNull();
  });

  it("walks a large bucket one page per run, resuming after the last key it saw", async () => {
    // 1001 objects: the first run sees a full page and leaves a cursor; the second finishes and clears it.
    const keys = Array.from({ length: 1001 }, () => `files/${crypto.randomUUID()}/00000000000000000000000a`);
    for (let i = 0; i < keys.length; i += 100) await Promise.all(keys.slice(i, i + 100).map((key) => env.UPLOADS.put(key, "o")));
    await runCron(Date.now() + 2 * HOUR);
    expect(await env.UPLOADS.head(SWEEP_CURSOR_KEY)).not.toBeNull();
    await runCron(Date.now() + 2 * HOUR);
    expect(await env.UPLOADS.head(SWEEP_CURSOR_KEY)).toBeNull();
    const left = (await bucketKeys()).filter((key) => keys.includes(key));
    expect(left).toEqual([]);
  });
});

describe("consistency of POST /Files", () => {
  it("deletes the stored object when the row cannot be inserted, so no object without a row remains", async () => {
    const dataType = await createDataType();
    // A database failure right at the insert, after the object was written.
    await env.DB.prepare(
      "CREATE TRIGGER IF NOT EXISTS test_files_insert_fails BEFORE INSERT ON files WHEN NEW.name = 'boom.csv' BEGIN " +
        "SELECT RAISE(ABORT, 'simulated failure'); END",
    ).run();
    const before = await bucketKeys();
    const form = new FormData();
    form.append("DataTypeId", dataType.id);
    form.append("File", new File([patternBytes(11 * MiB)], "boom.csv"));
    const res = await call("/Files", { method: "POST", rawBody: form });
    expect(res.status).toBe(500);
    expect(await bucketKeys()).toEqual(before);
    await env.DB.prepare("DROP TRIGGER test_files_insert_fails").run();
  });
});
