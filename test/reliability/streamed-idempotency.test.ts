/**
 * Issue 22, "Request bodies": with an Idempotency-Key, a body larger than the JSON limit is hashed as
 * it streams to the handler (src/pkg/body-fingerprint.ts), never read whole first. Replays and 422s
 * behave as they did when the whole body was hashed up front, for forms (POST /Files, POST /Medias)
 * and raw upload parts (PUT /Files/Uploads/{id}/Parts/{n}).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { uploadForm } from "../media/support/media";
import { ALICE, createDataType, fileForm, patternBytes, postForm, sha256Hex } from "../support/factories/upload";
import { call } from "../support/http";

const MiB = 1024 * 1024;
const JSON_LIMIT = Number(env.MAX_BODY_BYTES) || MiB;

/** A form serialised once, so it can be sent in pieces (its boundary fixed), and its Content-Type. */
async function serialised(form: FormData): Promise<{ bytes: Uint8Array; contentType: string }> {
  const response = new Response(form);
  return { bytes: new Uint8Array(await response.arrayBuffer()), contentType: response.headers.get("content-type")! };
}

/**
 * A body the test hands out 64 KiB at a time as the Worker pulls, holding back everything from
 * `holdAt` until `release()`: `sent` says how far the Worker has read.
 */
function gatedBody(bytes: Uint8Array, holdAt: number) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const state = { sent: 0, release };
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (state.sent >= bytes.length) return controller.close();
        if (state.sent >= holdAt) await gate;
        const chunk = bytes.slice(state.sent, Math.min(state.sent + 64 * 1024, holdAt > state.sent ? holdAt : bytes.length));
        state.sent += chunk.length;
        controller.enqueue(chunk);
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, state };
}

async function until(condition: () => boolean, what: string, ms = 10_000) {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function filesOf(dataTypeId: string) {
  return (await call(`/Files?dataTypeIds=${dataTypeId}`)).body as { id: string; checksum: string }[];
}

describe("Idempotency-Key on bodies larger than the JSON limit", () => {
  it(
    "replays a multipart POST /Files of 3 MiB sent again with a new boundary, and refuses other bytes, another name " +
      "or another route with 422",
    async () => {
      const dataType = await createDataType({ allowedExtensions: ["bin"] });
      const key = `big-${crypto.randomUUID()}`;
      const bytes = patternBytes(3 * MiB + 17, 5);
      expect(bytes.length).toBeGreaterThan(JSON_LIMIT);
      const form = (content: Uint8Array, name = "survey.bin") =>
        fileForm([
          ["DataTypeId", dataType.id],
          ["File", { name, content }],
        ]);
      const first = await postForm(form(bytes), undefined, { "idempotency-key": key });
      expect(first.status, first.text).toBe(201);
      expect(first.body.checksum).toBe(await sha256Hex(bytes));

      // FormData gets a new random boundary each time it is serialised: the same meaning replays.
      const again = await postForm(form(bytes), undefined, { "idempotency-key": key });
      expect(again.status).toBe(201);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.body.id).toBe(first.body.id);

      const changed = bytes.slice();
      changed[changed.length - 1] = changed[changed.length - 1]! ^ 1;
      const otherBytes = await postForm(form(changed), undefined, { "idempotency-key": key });
      expect(otherBytes.status).toBe(422);
      expect(otherBytes.body.code).toBe("IdempotencyKeyReused");
      expect((await postForm(form(bytes, "other.bin"), undefined, { "idempotency-key": key })).status).toBe(422);
      // Another route with the same key: refused before its body is read.
      const media = await call("/Medias", {
        method: "POST",
        rawBody: uploadForm(bytes, { name: "survey.txt", type: "document", mimeType: "text/plain" }),
        headers: { "idempotency-key": key },
      });
      expect(media.status).toBe(422);
      expect(await filesOf(dataType.id)).toHaveLength(1);
    },
  );

  it("replays a 2 MiB POST /Medias document", async () => {
    const key = `media-${crypto.randomUUID()}`;
    const bytes = patternBytes(2 * MiB, 8);
    const send = (content: Uint8Array) =>
      call("/Medias", {
        method: "POST",
        rawBody: uploadForm(content, { name: "notes.txt", type: "document", mimeType: "text/plain" }),
        headers: { "idempotency-key": key },
      });
    const first = await send(bytes);
    expect(first.status, first.text).toBe(201);
    const again = await send(bytes);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.id).toBe(first.body.id);
    expect((await send(patternBytes(2 * MiB, 9))).status).toBe(422);
  });

  it(
    "replays a raw upload part (PUT .../Parts/{n}) sent again with the same key and bytes, and refuses other bytes " +
      "or another part with 422",
    async () => {
      const dataType = await createDataType({ allowedExtensions: ["bin"] });
      const part = 5 * MiB;
      const bytes = patternBytes(part + 1000, 12);
      const started = await call("/Files/Uploads", {
        method: "POST",
        user: ALICE,
        body: { dataTypeId: dataType.id, name: "scan.bin", partSize: part, size: bytes.length },
      });
      expect(started.status, started.text).toBe(201);
      const { uploadId } = started.body as { uploadId: string };
      const key = `part-${crypto.randomUUID()}`;
      const put = (n: number, content: Uint8Array) =>
        call(`/Files/Uploads/${uploadId}/Parts/${n}`, {
          method: "PUT",
          user: ALICE,
          rawBody: content,
          headers: { "content-type": "application/octet-stream", "idempotency-key": key },
        });

      const first = await put(1, bytes.subarray(0, part));
      expect(first.status, first.text).toBe(200);
      expect(first.headers.get("idempotent-replayed")).toBeNull();
      const again = await put(1, bytes.subarray(0, part));
      expect(again.status).toBe(200);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.body).toEqual(first.body);

      const other = await put(1, patternBytes(part, 13));
      expect(other.status).toBe(422);
      expect(other.body.code).toBe("IdempotencyKeyReused");
      expect((await put(2, bytes.subarray(part))).status).toBe(422);

      // The replay stored nothing again and the refused bytes never replaced the part: the file is the first bytes.
      expect(
        (
          await call(`/Files/Uploads/${uploadId}/Parts/2`, {
            method: "PUT",
            user: ALICE,
            rawBody: bytes.subarray(part),
            headers: { "content-type": "application/octet-stream" },
          })
        ).status,
      ).toBe(200);
      const done = await call(`/Files/Uploads/${uploadId}/Completion`, { method: "POST", user: ALICE });
      expect(done.status, done.text).toBe(201);
      const data = await env.UPLOADS.get(
        (await env.DB.prepare("SELECT r2_key FROM files WHERE id = ?").bind(done.body.id).first<{ r2_key: string }>())!.r2_key,
      );
      expect(await sha256Hex(await data!.arrayBuffer())).toBe(await sha256Hex(bytes));
    },
  );

  it("stores a refusal of a large part (4xx) for its key like any answer, after hashing the bytes the handler never read", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const part = 5 * MiB;
    const started = await call("/Files/Uploads", {
      method: "POST",
      user: ALICE,
      body: { dataTypeId: dataType.id, name: "scan.bin", partSize: part, size: 2 * part },
    });
    const { uploadId } = started.body as { uploadId: string };
    const key = `refused-${crypto.randomUUID()}`;
    // Part 1 must have exactly partSize bytes: this one is short, refused before the handler reads it.
    const short = patternBytes(part - 1, 3);
    const put = (content: Uint8Array) =>
      call(`/Files/Uploads/${uploadId}/Parts/1`, {
        method: "PUT",
        user: ALICE,
        rawBody: content,
        headers: { "content-type": "application/octet-stream", "idempotency-key": key },
      });
    const first = await put(short);
    expect(first.status).toBe(400);
    const again = await put(short);
    expect(again.status).toBe(400);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await put(patternBytes(part, 3))).status).toBe(422);
  });

  it(
    "claims the key and runs the handler while the body is still arriving: a retry meanwhile is told 409, and the " +
      "file gets every byte",
    async () => {
      const dataType = await createDataType({ allowedExtensions: ["bin"] });
      const key = `streamed-${crypto.randomUUID()}`;
      const content = patternBytes(12 * MiB + 5, 21);
      const { bytes, contentType } = await serialised(
        fileForm([
          ["DataTypeId", dataType.id],
          ["File", { name: "long.bin", content }],
        ]),
      );
      const holdAt = 11 * MiB;
      const { stream, state } = gatedBody(bytes, holdAt);
      const headers = { "idempotency-key": key, "content-type": contentType, "content-length": String(bytes.length) };
      const first = call("/Files", { method: "POST", rawBody: stream, headers });

      // The Worker reads up to the held-back end: had it buffered the body for its fingerprint, it
      // could claim the key only after the last byte.
      await until(() => state.sent >= holdAt, "the Worker has read 11 MiB");
      const meanwhile = await postForm(
        fileForm([
          ["DataTypeId", dataType.id],
          ["File", { name: "long.bin", content: patternBytes(10, 1) }],
        ]),
        undefined,
        { "idempotency-key": key },
      );
      expect(meanwhile.status, meanwhile.text).toBe(409);
      expect(meanwhile.body.code).toBe("IdempotencyKeyInProgress");
      expect(state.sent).toBeLessThan(bytes.length);

      state.release();
      const done = await first;
      expect(done.status, done.text).toBe(201);
      expect(done.body.size).toBe(content.length);
      expect(done.body.checksum).toBe(await sha256Hex(content));

      const replay = await call("/Files", { method: "POST", rawBody: bytes, headers });
      expect(replay.status).toBe(201);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body.id).toBe(done.body.id);
      // A retry with other bytes, now that the first request's body has been fingerprinted: 422.
      expect(
        (
          await postForm(
            fileForm([
              ["DataTypeId", dataType.id],
              ["File", { name: "long.bin", content: patternBytes(10, 1) }],
            ]),
            undefined,
            { "idempotency-key": key },
          )
        ).status,
      ).toBe(422);
      expect(await filesOf(dataType.id)).toHaveLength(1);
    },
  );
});
