import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { FileSchema } from "../../src/upload/files/schema";
import { outboxActions } from "../support/factories/types";
import {
  ALICE,
  BOB,
  bucketKeys,
  createDataType,
  fileForm,
  patternBytes,
  postForm,
  rawCall,
  sha256Hex,
  uploadFile,
} from "../support/factories/upload";
import { call, tokenFor } from "../support/http";

const csv = (text = "depth,mm\n1,4.2\n") => ({ name: "readings.csv", content: text, type: "text/csv" });

async function fileRows(dataTypeId: string) {
  const { results } = await env.DB.prepare("SELECT id, r2_key FROM files WHERE data_type_id = ?1")
    .bind(dataTypeId)
    .all<{ id: string; r2_key: string }>();
  return results;
}

describe("POST /Files", () => {
  it("stores the file and returns its definition with status none, owned by the caller", async () => {
    const dataType = await createDataType();
    const content = "depth,mm\n1,4.2\n2,3.9\n";
    const res = await postForm(
      fileForm([
        ["DataTypeId", dataType.id],
        ["File", { name: "wall thickness.csv", content, type: "text/csv" }],
      ]),
      ALICE,
    );
    expect(res.status, res.text).toBe(201);
    expect(FileSchema.safeParse(res.body).success).toBe(true);
    expect(res.body).toMatchObject({
      name: "wall thickness.csv",
      dataType: { id: dataType.id, name: dataType.name },
      size: new TextEncoder().encode(content).length,
      contentType: "text/csv",
      checksum: await sha256Hex(new TextEncoder().encode(content)),
      objectOwner: { id: ALICE.id, name: ALICE.name },
      status: "none",
      metadata: null,
    });
    expect(res.headers.get("location")).toBe(`/Files/${res.body.id}`);
    expect(res.headers.get("etag")).toMatch(/^".+"$/);
    expect(await outboxActions("file", res.body.id)).toEqual(["created"]);

    const [row] = await fileRows(dataType.id);
    expect(row?.r2_key).toMatch(new RegExp(`^files/${res.body.id}/[0-9a-f]{24}$`));
    const object = await env.UPLOADS.get(row!.r2_key);
    expect(await object?.text()).toBe(content);
  });

  describe.each([
    ["camelCase", ["dataTypeId", "file", "objectOwnerId", "objectOwnerName"]],
    ["PascalCase (the original clients)", ["DataTypeId", "File", "ObjectOwnerId", "ObjectOwnerName"]],
    ["lower case", ["datatypeid", "file", "objectownerid", "objectownername"]],
  ])("with %s field names", (_label, [dataTypeField, fileField, ownerField, ownerNameField]) => {
    it("reads the fields and takes the explicit owner", async () => {
      const dataType = await createDataType();
      const res = await postForm(
        fileForm([
          [dataTypeField!, dataType.id],
          [ownerField!, BOB.id],
          [ownerNameField!, BOB.name],
          [fileField!, csv()],
        ]),
        ALICE,
      );
      expect(res.status, res.text).toBe(201);
      expect(res.body.objectOwner).toEqual({ id: BOB.id, name: BOB.name });
    });
  });

  it("takes an owner id without a name (name null), and the caller's name when the id is the caller's", async () => {
    const dataType = await createDataType();
    const other = await postForm(
      fileForm([
        ["DataTypeId", dataType.id],
        ["ObjectOwnerId", BOB.id],
        ["File", csv()],
      ]),
      ALICE,
    );
    expect(other.body.objectOwner).toEqual({ id: BOB.id, name: null });
    const self = await postForm(
      fileForm([
        ["DataTypeId", dataType.id],
        ["ObjectOwnerId", ALICE.id],
        ["File", csv()],
      ]),
      ALICE,
    );
    expect(self.body.objectOwner).toEqual({ id: ALICE.id, name: ALICE.name });
  });

  it("accepts the data type after the file (held until the form ends) and keeps a UTF-8 name", async () => {
    const dataType = await createDataType();
    const res = await postForm(
      fileForm([
        ["File", { name: "Målinger – Ø.csv", content: "x", type: "text/csv" }],
        ["DataTypeId", dataType.id],
      ]),
    );
    expect(res.status, res.text).toBe(201);
    expect(res.body.name).toBe("Målinger – Ø.csv");
  });

  it("matches extensions regardless of case, and compound extensions", async () => {
    const dataType = await createDataType({ allowedExtensions: ["tar.gz", "xlsx"] });
    expect(
      (
        await postForm(
          fileForm([
            ["DataTypeId", dataType.id],
            ["File", { name: "REPORT.XLSX", content: "x" }],
          ]),
        )
      ).status,
    ).toBe(201);
    expect(
      (
        await postForm(
          fileForm([
            ["DataTypeId", dataType.id],
            ["File", { name: "bundle.tar.gz", content: "x" }],
          ]),
        )
      ).status,
    ).toBe(201);
  });

  it("streams a file larger than one part (12 MiB) to R2 in parts and stores the exact bytes", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const bytes = patternBytes(12 * 1024 * 1024 + 123, 7);
    const res = await uploadFile(dataType.id, { name: "model-input.bin", content: bytes });
    expect(res.body.size).toBe(bytes.length);
    expect(res.body.checksum).toBe(await sha256Hex(bytes));
    const download = await rawCall(`/Files/${res.body.id}/Data`);
    expect(download.status).toBe(200);
    expect(download.bytes.length).toBe(bytes.length);
    expect(await sha256Hex(download.bytes)).toBe(res.body.checksum);
  });

  it("hashes the whole body for an Idempotency-Key and replays the same file", async () => {
    const dataType = await createDataType();
    const key = `upload-${crypto.randomUUID()}`;
    const form = () =>
      fileForm([
        ["DataTypeId", dataType.id],
        ["File", csv("same,bytes\n")],
      ]);
    // The same FormData serialises with a new boundary each time, so the replay is of one serialised body.
    const body = await new Response(form()).arrayBuffer();
    const contentType = new Response(form()).headers.get("content-type")!;
    const boundaryBody = new TextDecoder().decode(body);
    const boundary = /^--(.+?)\r\n/.exec(boundaryBody)![1]!;
    const headers = { "idempotency-key": key, "content-type": `multipart/form-data; boundary=${boundary}` };
    expect(contentType).toMatch(/^multipart\/form-data/);
    const first = await call("/Files", { method: "POST", rawBody: body, headers });
    expect(first.status, first.text).toBe(201);
    const second = await call("/Files", { method: "POST", rawBody: body, headers });
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.body.id).toBe(first.body.id);
    expect(await fileRows(dataType.id)).toHaveLength(1);
  });

  describe("refuses a disallowed extension with a 400 listing the allowed ones, storing nothing", () => {
    it.each([
      ["data type first", "before"],
      ["data type after the file", "after"],
    ])("%s", async (_label, order) => {
      const dataType = await createDataType({ allowedExtensions: ["xlsx", "csv"] });
      const keysBefore = await bucketKeys();
      const file = { name: "macro.exe", content: patternBytes(64 * 1024) };
      const entries: [string, string | typeof file][] =
        order === "before"
          ? [
              ["DataTypeId", dataType.id],
              ["File", file],
            ]
          : [
              ["File", file],
              ["DataTypeId", dataType.id],
            ];
      const res = await postForm(fileForm(entries));
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("ValidationFailed");
      expect(res.body.errors).toContainEqual(expect.objectContaining({ field: "body.file", rule: "extension" }));
      expect(res.body.detail).toContain(".xlsx, .csv");
      expect(await fileRows(dataType.id)).toEqual([]);
      expect(await bucketKeys()).toEqual(keysBefore);
    });
  });

  it("refuses a file without an extension", async () => {
    const dataType = await createDataType({ allowedExtensions: ["csv"] });
    const res = await postForm(
      fileForm([
        ["DataTypeId", dataType.id],
        ["File", { name: "csv", content: "x" }],
      ]),
    );
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ field: "body.file", rule: "extension" });
  });

  describe.each([
    ["no data type", () => [["File", csv()]], "body.dataTypeId", "required"],
    [
      "an empty data type",
      () => [
        ["DataTypeId", " "],
        ["File", csv()],
      ],
      "body.dataTypeId",
      "required",
    ],
    [
      "an unknown data type",
      () => [
        ["DataTypeId", "no-such-type"],
        ["File", csv()],
      ],
      "body.dataTypeId",
      "exists",
    ],
    ["no file", (id: string) => [["DataTypeId", id]], "body.file", "required"],
    [
      "the file as a text field",
      (id: string) => [
        ["DataTypeId", id],
        ["File", "just text"],
      ],
      "body.file",
      "file",
    ],
    [
      "two files",
      (id: string) => [
        ["DataTypeId", id],
        ["File", csv()],
        ["file", csv()],
      ],
      "body.file",
      "single",
    ],
    [
      "an unknown field",
      (id: string) => [
        ["DataTypeId", id],
        ["Owner", "x"],
        ["File", csv()],
      ],
      "body.Owner",
      "unknown",
    ],
    [
      "an owner name without an owner id",
      (id: string) => [
        ["DataTypeId", id],
        ["ObjectOwnerName", "x"],
        ["File", csv()],
      ],
      "body.objectOwnerName",
      "requires",
    ],
  ] as const)("a form with %s", (_label, entries, field, rule) => {
    it("is a 400 naming the field, storing nothing", async () => {
      const dataType = await createDataType();
      const keysBefore = await bucketKeys();
      const res = await postForm(fileForm(entries(dataType.id) as [string, string | { name: string; content: string }][]));
      expect(res.status, res.text).toBe(400);
      expect(res.body.errors).toContainEqual(expect.objectContaining({ field, rule }));
      expect(await fileRows(dataType.id)).toEqual([]);
      expect(await bucketKeys()).toEqual(keysBefore);
    });
  });

  it("refuses a body that is not a multipart form (415) and a malformed one (400)", async () => {
    const json = await call("/Files", { method: "POST", body: { dataTypeId: "x" } });
    expect(json.status).toBe(415);
    const truncated = await call("/Files", {
      method: "POST",
      rawBody: '--b\r\nContent-Disposition: form-data; name="DataTypeId"\r\n\r\nx',
      headers: { "content-type": "multipart/form-data; boundary=b" },
    });
    expect(truncated.status).toBe(400);
    expect(truncated.body.errors[0]).toMatchObject({ field: "body", rule: "multipart" });
  });

  it("refuses a body over 95 MiB up front (413) by its Content-Length", async () => {
    const res = await call("/Files", {
      method: "POST",
      rawBody: new ReadableStream({ start: (controller) => controller.close() }),
      headers: { "content-type": "multipart/form-data; boundary=b", "content-length": String(96 * 1024 * 1024) },
    });
    expect(res.status).toBe(413);
  });

  describe("security", () => {
    it("needs a token and files_write", async () => {
      const dataType = await createDataType();
      const form = () =>
        fileForm([
          ["DataTypeId", dataType.id],
          ["File", csv()],
        ]);
      expect((await call("/Files", { method: "POST", rawBody: form(), anonymous: true })).status).toBe(401);
      expect((await postForm(form(), { permissions: ["files_read"] })).status).toBe(403);
      expect(await fileRows(dataType.id)).toEqual([]);
      expect(typeof (await tokenFor())).toBe("string");
    });
  });
});
