/** Issue 12, defect 3: a retried upload with the same Idempotency-Key is replayed, whatever its boundary. */
import { describe, expect, it } from "vitest";
import { createDataType, fileForm, patternBytes, postForm } from "../support/factories/upload";
import { call } from "../support/http";
import { uploadForm } from "../media/support/media";

describe("Idempotency-Key on multipart uploads", () => {
  it("replays the first answer for the same fields and bytes sent with a new boundary", async () => {
    const dataType = await createDataType();
    const key = `upload-${crypto.randomUUID()}`;
    const bytes = patternBytes(20_000, 7);
    const form = () =>
      fileForm([
        ["DataTypeId", dataType.id],
        ["File", { name: "readings.csv", content: bytes, type: "text/csv" }],
      ]);
    const first = await postForm(form(), undefined, { "idempotency-key": key });
    expect(first.status, first.text).toBe(201);
    for (let i = 0; i < 3; i++) {
      const again = await postForm(form(), undefined, { "idempotency-key": key });
      expect(again.status).toBe(201);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.body.id).toBe(first.body.id);
    }
    const files = await call(`/Files?dataTypeIds=${dataType.id}`);
    expect(files.body).toHaveLength(1);
  });

  it("still refuses the key for a different file, a different name or different fields", async () => {
    const dataType = await createDataType();
    const key = `upload-${crypto.randomUUID()}`;
    const send = (name: string, seed: number) =>
      postForm(
        fileForm([
          ["DataTypeId", dataType.id],
          ["File", { name, content: patternBytes(5_000, seed), type: "text/csv" }],
        ]),
        undefined,
        { "idempotency-key": key },
      );
    expect((await send("a.csv", 1)).status).toBe(201);
    expect((await send("a.csv", 2)).status).toBe(422);
    expect((await send("b.csv", 1)).status).toBe(422);
  });

  it("creates one file from 20 concurrent sends: no 422, every other answer a replay or an in-progress 409", async () => {
    const dataType = await createDataType();
    const key = `upload-${crypto.randomUUID()}`;
    const bytes = patternBytes(8_000, 3);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        postForm(
          fileForm([
            ["DataTypeId", dataType.id],
            ["File", { name: "r.csv", content: bytes, type: "text/csv" }],
          ]),
          undefined,
          { "idempotency-key": key },
        ),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 422)).toEqual([]);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    expect(new Set(answers.filter((a) => a.status === 201).map((a) => a.body.id)).size).toBe(1);
    expect((await call(`/Files?dataTypeIds=${dataType.id}`)).body).toHaveLength(1);
  });

  it("replays a retried media upload", async () => {
    const key = `media-${crypto.randomUUID()}`;
    const bytes = patternBytes(3_000, 9);
    const send = () =>
      call("/Medias", {
        method: "POST",
        rawBody: uploadForm(bytes, { name: "notes.txt", type: "document", mimeType: "text/plain" }),
        headers: { "idempotency-key": key },
      });
    const first = await send();
    expect(first.status, first.text).toBe(201);
    const again = await send();
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.id).toBe(first.body.id);
  });
});
