import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { FileSchema } from "../../src/upload/files/schema";
import { outboxActions } from "../support/factories/types";
import { ALICE, BOB, createDataType, patternBytes, rawCall, sha256Hex, uploadFile } from "../support/factories/upload";
import { call } from "../support/http";

const CAROL = { id: "carol-0003", name: "Carol Reviewer" };
const text = (s: string) => new TextEncoder().encode(s);

describe("GET /Files/{id}", () => {
  it("returns the definition with an ETag and honours If-None-Match", async () => {
    const dataType = await createDataType();
    const posted = await uploadFile(dataType.id, { name: "a.csv", content: "x" }, ALICE);
    const res = await call(`/Files/${posted.body.id}`, { user: ALICE });
    expect(res.status).toBe(200);
    expect(FileSchema.parse(res.body)).toEqual(posted.body);
    expect(res.headers.get("etag")).toBe(posted.headers.get("etag"));
    expect((await call(`/Files/${posted.body.id}`, { user: ALICE, headers: { "if-none-match": res.headers.get("etag")! } })).status).toBe(
      304,
    );
  });

  it("answers 404 for an unknown id and 400 for a malformed one", async () => {
    expect((await call(`/Files/${crypto.randomUUID()}`)).status).toBe(404);
    expect((await call("/Files/not-a-uuid")).status).toBe(400);
  });
});

describe("visibility: owner and uploader always, others once metadata ties the file to an asset", () => {
  it("hides an unattached file from others and shows it after PUT /Files/{id}/Metadata", async () => {
    const dataType = await createDataType();
    const posted = await uploadFile(dataType.id, { name: "draft.csv", content: "x" }, ALICE);
    const id = posted.body.id;
    expect((await call(`/Files/${id}`, { user: BOB })).status).toBe(404);
    expect((await rawCall(`/Files/${id}/Data`, { user: BOB })).status).toBe(404);
    expect((await call(`/Files?dataTypeIds=${dataType.id}`, { user: BOB })).body).toEqual([]);

    const attached = await call(`/Files/${id}/Metadata`, {
      method: "PUT",
      user: ALICE,
      body: { objectType: "equipment", objectId: "EQ-23-PA-001" },
      headers: { "if-match": posted.headers.get("etag")! },
    });
    expect(attached.status).toBe(200);
    expect(attached.body.metadata).toEqual({ objectType: "equipment", objectId: "EQ-23-PA-001" });
    expect((await call(`/Files/${id}`, { user: BOB })).status).toBe(200);
    expect((await call(`/Files?dataTypeIds=${dataType.id}`, { user: BOB })).body.map((f: { id: string }) => f.id)).toEqual([id]);
    expect(await outboxActions("file", id)).toEqual(["created", "updated"]);
  });

  it("shows a file to its object owner and to its uploader when they differ", async () => {
    const dataType = await createDataType();
    const form = new FormData();
    form.append("DataTypeId", dataType.id);
    form.append("ObjectOwnerId", BOB.id);
    form.append("File", new File(["x"], "for-bob.csv"));
    const posted = await call("/Files", { method: "POST", rawBody: form, user: ALICE });
    expect(posted.status).toBe(201);
    expect((await call(`/Files/${posted.body.id}`, { user: ALICE })).status).toBe(200);
    expect((await call(`/Files/${posted.body.id}`, { user: BOB })).status).toBe(200);
    expect((await call(`/Files/${posted.body.id}`, { user: CAROL })).status).toBe(404);
  });

  it("lets only the owner or the uploader set metadata (others who see the file: 403)", async () => {
    const dataType = await createDataType();
    const posted = await uploadFile(dataType.id, { name: "p.csv", content: "x" }, ALICE);
    await call(`/Files/${posted.body.id}/Metadata`, { method: "PUT", user: ALICE, body: { objectType: "plant", objectId: "P-1" } });
    const res = await call(`/Files/${posted.body.id}/Metadata`, {
      method: "PUT",
      user: BOB,
      body: { objectType: "plant", objectId: "P-2" },
    });
    expect(res.status).toBe(403);
  });
});

describe("PUT /Files/{id}/Metadata", () => {
  describe.each([
    ["an unknown objectType", { objectType: "pipeline", objectId: "1" }, "body.objectType", "invalid_value"],
    ["no objectId", { objectType: "plant" }, "body.objectId", "invalid_type"],
    ["an empty objectId", { objectType: "plant", objectId: " " }, "body.objectId", "too_small"],
  ])("with %s", (_label, body, field, rule) => {
    it("is a 400 naming the field", async () => {
      const dataType = await createDataType();
      const posted = await uploadFile(dataType.id, { name: "m.csv", content: "x" });
      const res = await call(`/Files/${posted.body.id}/Metadata`, { method: "PUT", body });
      expect(res.status).toBe(400);
      expect(res.body.errors).toContainEqual(expect.objectContaining({ field, rule }));
    });
  });

  it("accepts every object type and answers 412 for a stale If-Match", async () => {
    const dataType = await createDataType();
    const posted = await uploadFile(dataType.id, { name: "m.csv", content: "x" });
    for (const objectType of ["equipment", "mainSystem", "plant", "organization"]) {
      const res = await call(`/Files/${posted.body.id}/Metadata`, { method: "PUT", body: { objectType, objectId: "X-1" } });
      expect(res.body.metadata.objectType).toBe(objectType);
    }
    const stale = await call(`/Files/${posted.body.id}/Metadata`, {
      method: "PUT",
      body: { objectType: "plant", objectId: "X" },
      headers: { "if-match": posted.headers.get("etag")! },
    });
    expect(stale.status).toBe(412);
  });

  it("refuses metadata before the file is posted (an upload not completed): 409 for its uploader", async () => {
    const dataType = await createDataType();
    const started = await call("/Files/Uploads", { method: "POST", user: ALICE, body: { dataTypeId: dataType.id, name: "later.csv" } });
    const res = await call(`/Files/${started.body.fileId}/Metadata`, {
      method: "PUT",
      user: ALICE,
      body: { objectType: "plant", objectId: "P-1" },
    });
    expect(res.status).toBe(409);
    expect(
      (await call(`/Files/${started.body.fileId}/Metadata`, { method: "PUT", user: BOB, body: { objectType: "plant", objectId: "P-1" } }))
        .status,
    ).toBe(404);
  });
});

describe("PUT /Files/status", () => {
  it("sets any status from any status, with If-Match and an event", async () => {
    const dataType = await createDataType();
    const posted = await uploadFile(dataType.id, { name: "s.csv", content: "x" });
    let etag = posted.headers.get("etag")!;
    for (const status of [
      "processed",
      "pending",
      "processing",
      "validationError",
      "processingError",
      "new",
      "opened",
      "authorizationError",
      "none",
    ]) {
      const res = await call("/Files/status", { method: "PUT", body: { id: posted.body.id, status }, headers: { "if-match": etag } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.status).toBe(status);
      etag = res.headers.get("etag")!;
    }
    const stale = await call("/Files/status", {
      method: "PUT",
      body: { id: posted.body.id, status: "processed" },
      headers: { "if-match": posted.headers.get("etag")! },
    });
    expect(stale.status).toBe(412);
    expect((await outboxActions("file", posted.body.id)).filter((a) => a === "updated")).toHaveLength(9);
  });

  describe.each([
    ["an unknown status", { status: "done" }, "body.status", "invalid_value"],
    ["no id", { id: undefined, status: "pending" }, "body.id", "invalid_type"],
    ["ids instead of id", { ids: [], status: "pending" }, "body", "unrecognized_keys"],
  ])("with %s", (_label, overrides, field, rule) => {
    it("is a 400 naming the field", async () => {
      const res = await call("/Files/status", { method: "PUT", body: { id: crypto.randomUUID(), ...overrides } });
      expect(res.status).toBe(400);
      expect(res.body.errors).toContainEqual(expect.objectContaining({ field, rule }));
    });
  });

  it("answers 404 for an unknown file and for another user's unattached file", async () => {
    expect((await call("/Files/status", { method: "PUT", body: { id: crypto.randomUUID(), status: "pending" } })).status).toBe(404);
    const dataType = await createDataType();
    const posted = await uploadFile(dataType.id, { name: "s.csv", content: "x" }, ALICE);
    expect((await call("/Files/status", { method: "PUT", user: BOB, body: { id: posted.body.id, status: "pending" } })).status).toBe(404);
  });
});

describe("GET /Files", () => {
  it("filters by data type, status and owner, searches the name, orders and pages", async () => {
    const dataType = await createDataType();
    const other = await createDataType();
    const a = await uploadFile(dataType.id, { name: "alpha-readings.csv", content: "a" }, ALICE);
    const b = await uploadFile(dataType.id, { name: "beta-readings.csv", content: "bb" }, ALICE);
    const c = await uploadFile(other.id, { name: "gamma.csv", content: "ccc" }, ALICE);
    await call("/Files/status", { method: "PUT", user: ALICE, body: { id: b.body.id, status: "processed" } });
    const ids = (res: { body: { id: string }[] }) => res.body.map((f) => f.id);

    const byType = await call(`/Files?dataTypeIds=${dataType.id}&order=name asc&includeTotal=true`, { user: ALICE });
    expect(ids(byType)).toEqual([a.body.id, b.body.id]);
    expect(byType.headers.get("x-total-count")).toBe("2");
    expect(ids(await call(`/Files?dataTypeIds=${dataType.id},${other.id}&statuses=processed`, { user: ALICE }))).toEqual([b.body.id]);
    expect(ids(await call(`/Files?dataTypeIds=${dataType.id},${other.id}&searchText=READINGS&order=size desc`, { user: ALICE }))).toEqual([
      b.body.id,
      a.body.id,
    ]);
    expect(ids(await call(`/Files?objectOwnerIds=${ALICE.id}&dataTypeIds=${other.id}`, { user: ALICE }))).toEqual([c.body.id]);
    expect(ids(await call(`/Files?objectOwnerIds=${BOB.id}&dataTypeIds=${dataType.id}`, { user: ALICE }))).toEqual([]);
    const page = await call(`/Files?dataTypeIds=${dataType.id},${other.id}&order=name desc&skip=1&take=1&includeTotal=true`, {
      user: ALICE,
    });
    expect(ids(page)).toEqual([b.body.id]);
    expect(page.headers.get("x-total-count")).toBe("3");
    expect(ids(await call(`/Files?ids=${a.body.id},${c.body.id}&excludeIds=${c.body.id}`, { user: ALICE }))).toEqual([a.body.id]);
  });

  describe.each([
    ["an unknown status", "statuses=done", "query.statuses"],
    ["a malformed data type id", "dataTypeIds=Not_A_Slug", "query.dataTypeIds"],
    ["an unknown order field", "order=colour asc", "query.order"],
    ["a malformed id", "ids=nope", "query.ids"],
  ])("with %s", (_label, query, field) => {
    it("is a 400 InvalidQuery naming the parameter", async () => {
      const res = await call(`/Files?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("InvalidQuery");
      expect(res.body.errors[0].field).toBe(field);
    });
  });

  it("never lists an upload in progress", async () => {
    const dataType = await createDataType();
    await call("/Files/Uploads", { method: "POST", body: { dataTypeId: dataType.id, name: "pending.csv" } });
    expect((await call(`/Files?dataTypeIds=${dataType.id}`)).body).toEqual([]);
  });
});

describe("GET /Files/{id}/Data", () => {
  it("streams the bytes with content type, attachment name (RFC 6266), ETag and nosniff", async () => {
    const dataType = await createDataType();
    const content = "depth,mm\n1,4.2\n";
    const posted = await uploadFile(dataType.id, { name: 'Målinger "Q3".csv', content, type: "text/csv" });
    const res = await rawCall(`/Files/${posted.body.id}/Data`);
    expect(res.status).toBe(200);
    expect(new TextDecoder().decode(res.bytes)).toBe(content);
    expect(res.headers.get("content-type")).toBe("text/csv");
    expect(res.headers.get("content-disposition")).toBe(
      `attachment; filename="M_linger _Q3_.csv"; filename*=UTF-8''M%C3%A5linger%20%22Q3%22.csv`,
    );
    expect(res.headers.get("etag")).toBe(`"${await sha256Hex(text(content))}"`);
    expect(res.headers.get("accept-ranges")).toBe("bytes");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect((await rawCall(`/Files/${posted.body.id}/Data`, { headers: { "if-none-match": res.headers.get("etag")! } })).status).toBe(304);
  });

  it("answers one range with 206, a range past the end with 416, and several ranges with everything", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const bytes = patternBytes(100_000, 3);
    const posted = await uploadFile(dataType.id, { name: "r.bin", content: bytes });
    const url = `/Files/${posted.body.id}/Data`;
    const cases: [string, number, number][] = [
      ["bytes=0-99", 0, 100],
      ["bytes=99990-", 99_990, 10],
      ["bytes=-5", 99_995, 5],
      ["bytes=50000-999999", 50_000, 50_000],
    ];
    for (const [range, offset, length] of cases) {
      const res = await rawCall(url, { headers: { range } });
      expect(res.status, range).toBe(206);
      expect(res.headers.get("content-range")).toBe(`bytes ${offset}-${offset + length - 1}/100000`);
      expect(res.bytes).toEqual(bytes.subarray(offset, offset + length));
    }
    const past = await rawCall(url, { headers: { range: "bytes=100000-" } });
    expect(past.status).toBe(416);
    expect(past.headers.get("content-range")).toBe("bytes */100000");
    expect(past.headers.get("content-type")).toBe("application/problem+json");
    expect(JSON.parse(new TextDecoder().decode(past.bytes))).toMatchObject({
      status: 416,
      code: "RangeNotSatisfiable",
      type: "urn:integrity-edge:problem:RangeNotSatisfiable",
    });
    const several = await rawCall(url, { headers: { range: "bytes=0-1,5-6" } });
    expect(several.status).toBe(200);
    expect(several.bytes.length).toBe(100_000);
    const staleIfRange = await rawCall(url, { headers: { range: "bytes=0-1", "if-range": '"other"' } });
    expect(staleIfRange.status).toBe(200);
  });
});

describe("DELETE /Files/{id}", () => {
  it("removes the row and the object, with If-Match and an event", async () => {
    const dataType = await createDataType();
    const posted = await uploadFile(dataType.id, { name: "d.csv", content: "x" });
    const row = await env.DB.prepare("SELECT r2_key FROM files WHERE id = ?1").bind(posted.body.id).first<{ r2_key: string }>();
    expect((await call(`/Files/${posted.body.id}`, { method: "DELETE", headers: { "if-match": '"stale"' } })).status).toBe(412);
    expect(
      (await call(`/Files/${posted.body.id}`, { method: "DELETE", headers: { "if-match": posted.headers.get("etag")! } })).status,
    ).toBe(204);
    expect((await call(`/Files/${posted.body.id}`)).status).toBe(404);
    expect(await env.UPLOADS.head(row!.r2_key)).toBeNull();
    expect(await outboxActions("file", posted.body.id)).toEqual(["created", "deleted"]);
  });

  it("lets another files_write holder delete an attached file, but not see an unattached one", async () => {
    const dataType = await createDataType();
    const draft = await uploadFile(dataType.id, { name: "d.csv", content: "x" }, ALICE);
    expect((await call(`/Files/${draft.body.id}`, { method: "DELETE", user: BOB })).status).toBe(404);
    await call(`/Files/${draft.body.id}/Metadata`, { method: "PUT", user: ALICE, body: { objectType: "organization", objectId: "ORG-1" } });
    expect((await call(`/Files/${draft.body.id}`, { method: "DELETE", user: BOB })).status).toBe(204);
  });
});

describe("security", () => {
  it.each([
    ["GET", "/Files"],
    ["GET", `/Files/${crypto.randomUUID()}`],
    ["GET", `/Files/${crypto.randomUUID()}/Data`],
    ["PUT", "/Files/status"],
    ["PUT", `/Files/${crypto.randomUUID()}/Metadata`],
    ["DELETE", `/Files/${crypto.randomUUID()}`],
  ])("%s %s needs a token", async (method, path) => {
    expect((await call(path, { method, anonymous: true })).status).toBe(401);
  });

  it("reads need files_read, writes files_write", async () => {
    const dataType = await createDataType();
    const posted = await uploadFile(dataType.id, { name: "x.csv", content: "x" });
    const writer = { permissions: ["files_write"] };
    const reader = { permissions: ["files_read"] };
    expect((await call("/Files", { user: writer })).status).toBe(403);
    expect((await call(`/Files/${posted.body.id}`, { user: writer })).status).toBe(403);
    expect((await rawCall(`/Files/${posted.body.id}/Data`, { user: writer })).status).toBe(403);
    expect((await call("/Files/status", { method: "PUT", user: reader, body: { id: posted.body.id, status: "new" } })).status).toBe(403);
    expect(
      (await call(`/Files/${posted.body.id}/Metadata`, { method: "PUT", user: reader, body: { objectType: "plant", objectId: "1" } }))
        .status,
    ).toBe(403);
    expect((await call(`/Files/${posted.body.id}`, { method: "DELETE", user: reader })).status).toBe(403);
  });
});
