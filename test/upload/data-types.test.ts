import { describe, expect, it } from "vitest";
import { outboxActions } from "../support/factories/types";
import { createDataType, uniqueDataTypeId, uploadFile } from "../support/factories/upload";
import { call } from "../support/http";

describe("data types", () => {
  it("creates, reads, lists, updates and deletes a data type, with events", async () => {
    const id = uniqueDataTypeId("inspection-report");
    const created = await call("/DataTypes", {
      method: "POST",
      body: { id, name: `Inspection report ${id}`, allowedExtensions: [".XLSX", "csv", "xlsx"] },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toBe(`/DataTypes/${id}`);
    expect(created.headers.get("etag")).toMatch(/^".+"$/);
    // Normalised: lower case, without the dot, without repeats.
    expect(created.body).toMatchObject({ id, allowedExtensions: ["xlsx", "csv"] });

    const read = await call(`/DataTypes/${id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
    expect((await call(`/DataTypes/${id}`, { headers: { "if-none-match": read.headers.get("etag")! } })).status).toBe(304);

    const list = await call("/DataTypes");
    expect(list.body.map((d: { id: string }) => d.id)).toContain(id);

    const updated = await call("/DataTypes", {
      method: "PUT",
      body: { id, name: `Renamed ${id}`, allowedExtensions: ["tar.gz", "json"] },
      headers: { "if-match": created.headers.get("etag")! },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: `Renamed ${id}`, allowedExtensions: ["tar.gz", "json"] });

    expect((await call(`/DataTypes/${id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/DataTypes/${id}`)).status).toBe(404);
    expect(await outboxActions("dataType", id)).toEqual(["created", "updated", "deleted"]);
  });

  it("derives the id from the name when none is given", async () => {
    const suffix = crypto.randomUUID().slice(0, 6);
    const res = await call("/DataTypes", {
      method: "POST",
      body: { name: `Thickness Measurements (v2) ${suffix}`, allowedExtensions: ["csv"] },
    });
    expect(res.status).toBe(201);
    expect(res.body.id).toBe(`thickness-measurements-v2-${suffix}`);
  });

  it("refuses a duplicate id and a duplicate name (regardless of case) with 409 naming the field", async () => {
    const existing = await createDataType();
    const sameId = await call("/DataTypes", {
      method: "POST",
      body: { id: existing.id, name: "Another name entirely", allowedExtensions: ["csv"] },
    });
    expect(sameId.status).toBe(409);
    expect(sameId.body.errors).toContainEqual(expect.objectContaining({ field: "body.id", rule: "unique" }));

    const sameName = await call("/DataTypes", {
      method: "POST",
      body: { id: uniqueDataTypeId(), name: existing.name.toUpperCase(), allowedExtensions: ["csv"] },
    });
    expect(sameName.status).toBe(409);
    expect(sameName.body.errors).toContainEqual(expect.objectContaining({ field: "body.name", rule: "unique" }));

    const other = await createDataType();
    const renameClash = await call("/DataTypes", {
      method: "PUT",
      body: { id: other.id, name: existing.name, allowedExtensions: ["csv"] },
    });
    expect(renameClash.status).toBe(409);
    expect(renameClash.body.errors).toContainEqual(expect.objectContaining({ field: "body.name", rule: "unique" }));
  });

  describe.each([
    ["no extensions", { allowedExtensions: [] }, "body.allowedExtensions", "too_small"],
    ["a malformed extension", { allowedExtensions: ["x y"] }, "body.allowedExtensions.0", "invalid_format"],
    ["an extension of only a dot", { allowedExtensions: ["."] }, "body.allowedExtensions.0", "invalid_format"],
    ["an upper-case id", { id: "Report" }, "body.id", "invalid_format"],
    ["a one-character id", { id: "r" }, "body.id", "invalid_format"],
    ["an empty name", { name: " " }, "body.name", "too_small"],
    ["an unknown field", { colour: "red" }, "body", "unrecognized_keys"],
    ["a name without letters or digits and no id", { id: undefined, name: "!!!" }, "body.id", "required"],
  ])("POST with %s", (_label, overrides, field, rule) => {
    it("is a 400 naming the field and the rule", async () => {
      const body = { id: uniqueDataTypeId(), name: `Type ${crypto.randomUUID()}`, allowedExtensions: ["csv"], ...overrides };
      const res = await call("/DataTypes", { method: "POST", body });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("ValidationFailed");
      expect(res.body.errors).toContainEqual(expect.objectContaining({ field, rule }));
    });
  });

  it("answers 404 for an unknown id, 400 for a malformed one, and 412 for a stale If-Match", async () => {
    expect((await call("/DataTypes/no-such-type")).status).toBe(404);
    expect((await call("/DataTypes/NOT_A_SLUG")).status).toBe(400);
    const dataType = await createDataType();
    const stale = await call("/DataTypes", {
      method: "PUT",
      body: { id: dataType.id, name: "x", allowedExtensions: ["csv"] },
      headers: { "if-match": '"stale"' },
    });
    expect(stale.status).toBe(412);
    expect((await call(`/DataTypes/${dataType.id}`, { method: "DELETE", headers: { "if-match": '"stale"' } })).status).toBe(412);
    expect((await call("/DataTypes", { method: "PUT", body: { id: "no-such-type", name: "x", allowedExtensions: ["csv"] } })).status).toBe(
      404,
    );
  });

  it("refuses to delete a data type that a file uses, with 409 InUse", async () => {
    const dataType = await createDataType();
    await uploadFile(dataType.id, { name: "readings.csv", content: "a,b\n1,2\n" });
    const res = await call(`/DataTypes/${dataType.id}`, { method: "DELETE" });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("InUse");
  });

  it("also refuses while an upload in progress uses it", async () => {
    const dataType = await createDataType();
    const started = await call("/Files/Uploads", { method: "POST", body: { dataTypeId: dataType.id, name: "big.csv" } });
    expect(started.status).toBe(201);
    expect((await call(`/DataTypes/${dataType.id}`, { method: "DELETE" })).body.code).toBe("InUse");
  });

  describe("security", () => {
    it("needs a token", async () => {
      expect((await call("/DataTypes", { anonymous: true })).status).toBe(401);
    });
    it("reads with files_read and writes with data_types_write", async () => {
      const reader = { permissions: ["files_read"] };
      expect((await call("/DataTypes", { user: reader })).status).toBe(200);
      const res = await call("/DataTypes", { method: "POST", user: reader, body: { name: "Nope", allowedExtensions: ["csv"] } });
      expect(res.status).toBe(403);
      expect((await call("/DataTypes", { user: { permissions: ["data_types_write"] } })).status).toBe(403);
    });
  });
});
