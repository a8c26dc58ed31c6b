/** /WorkItems CRUD: fields and their validation, ETags, deletion of everything a work item owns, events, security. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { createEntityType, createUserStatus, outboxActions } from "../support/factories/types";
import { seedPropertyDefinition } from "../support/factories/types";
import { seedActivityTemplate, seedReadyFile, seedWorkTemplate } from "../support/factories/templates-sql";
import { postWorkItem, seedAsset, withoutEtag } from "./support";

const GENERAL = "00000000-0000-4000-8000-000000000001";

async function workType(definitions: { id: string }[]) {
  return createEntityType({ appliesTo: null, propertyDefinitions: definitions.map((d) => ({ id: d.id })) });
}

describe("POST and GET /WorkItems", () => {
  it("stores every field and reads it back with its ETag", async () => {
    const depth = await seedPropertyDefinition({ format: "integer", applicationRule: "WorkItem" });
    const type = await workType([depth]);
    const plant = await seedAsset("plant");
    const equipment = await seedAsset("equipment", { id: plant.id, plantId: plant.id });
    const status = await createUserStatus();
    const created = await postWorkItem({
      displayName: "Replace seal",
      referenceId: "WI-1",
      status: status.id,
      dueDate: "2026-12-01T10:00:00+02:00",
      typeId: type.id,
      tags: ["seal", "seal", "pump"],
      properties: [{ name: depth.name, value: 3 }],
      designations: [{ id: equipment.id }],
      metadata: { priority: "high" },
    });
    expect(created).toMatchObject({
      displayName: "Replace seal",
      referenceId: "WI-1",
      status: status.id,
      dueDate: "2026-12-01T08:00:00.000Z",
      objectOwner: { id: "00000000-0000-4000-8000-00000000aaaa", name: "Test User" },
      typeId: type.id,
      tags: ["seal", "pump"],
      properties: [{ name: depth.name, value: 3 }],
      basedOn: [],
      designations: [{ id: equipment.id, kind: "equipment", name: equipment.name, plant: { id: plant.id, name: plant.name } }],
      deviationIds: [],
      metadata: { priority: "high" },
    });
    const read = await call(`/WorkItems/${created.id}`);
    expect(read.status).toBe(200);
    expect(read.headers.get("etag")).toBe(created.etag);
    expect(read.body).toEqual(withoutEtag(created));
    const notModified = await call(`/WorkItems/${created.id}`, { headers: { "if-none-match": created.etag } });
    expect(notModified.status).toBe(304);
  });

  it("defaults the type to General, the status to new and the owner to the caller", async () => {
    const res = await call("/WorkItems", { method: "POST", body: { displayName: "Defaults" }, user: { id: "u-77", name: "Ola" } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ typeId: GENERAL, status: "new", dueDate: null, objectOwner: { id: "u-77", name: "Ola" } });
  });

  describe.each([
    ["no displayName", { displayName: undefined }, "body.displayName"],
    ["a bad dueDate", { dueDate: "next tuesday" }, "body.dueDate"],
    ["an unknown status", { status: "dreaming" }, "body.status"],
    ["an unknown type", { typeId: crypto.randomUUID() }, "body.typeId"],
    ["an unknown property", { properties: [{ name: "nope", value: 1 }] }, "body.properties.0.name"],
    ["an unknown asset", { designations: [{ id: crypto.randomUUID() }] }, "body.designations.0.id"],
    ["an unknown work template", { basedOn: [{ id: crypto.randomUUID() }] }, "body.basedOn.0.id"],
    ["a non-UUID template id", { basedOn: [{ id: "x" }] }, "body.basedOn.0.id"],
    ["too many tags", { tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }, "body.tags"],
  ])("with %s", (_name, patch, field) => {
    it("answers 400 naming the field", async () => {
      const res = await call("/WorkItems", { method: "POST", body: { displayName: "Invalid", ...patch } });
      expect(res.status, res.text).toBe(400);
      expect(res.body.code).toBe("ValidationFailed");
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    });
  });

  it("404 for an unknown id", async () => {
    const res = await call(`/WorkItems/${crypto.randomUUID()}`);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("NotFound");
  });
});

describe("PUT /WorkItems", () => {
  it("replaces the fields and honours If-Match", async () => {
    const created = await postWorkItem({ tags: ["a"] });
    const body = { ...withoutEtag(created), displayName: "Renamed", tags: ["b"], dueDate: "2027-01-02" };
    const updated = await call("/WorkItems", { method: "PUT", body, headers: { "if-match": created.etag } });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({ displayName: "Renamed", tags: ["b"], dueDate: "2027-01-02T00:00:00.000Z" });
    expect(updated.headers.get("etag")).not.toBe(created.etag);
    const stale = await call("/WorkItems", { method: "PUT", body, headers: { "if-match": created.etag } });
    expect(stale.status).toBe(412);
    expect(stale.body.code).toBe("PreconditionFailed");
    expect((await call(`/WorkItems/${created.id}`)).body).toEqual(updated.body);
    expect(await outboxActions("workItem", created.id)).toEqual(["created", "updated"]);
  });

  it("lets exactly one of several PUTs from the same ETag through", async () => {
    const created = await postWorkItem();
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        call("/WorkItems", {
          method: "PUT",
          body: { ...withoutEtag(created), displayName: `Race ${i}` },
          headers: { "if-match": created.etag },
        }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 412, 412, 412, 412]);
  });

  it("404 for an unknown id", async () => {
    const res = await call("/WorkItems", { method: "PUT", body: { id: crypto.randomUUID(), displayName: "Ghost" } });
    expect(res.status).toBe(404);
  });
});

describe("DELETE /WorkItems/{id}", () => {
  it("removes the work item with its activities, inputs, values, tags, designations, file references and links", async () => {
    const template = await seedWorkTemplate({
      activityTemplateIds: [(await seedActivityTemplate()).id],
      tags: ["gone"],
      fileReferences: [{ location: "External", url: "https://x.example/a" }],
    });
    const plant = await seedAsset("plant");
    const created = await postWorkItem({ basedOn: [{ id: template.id }], designations: [{ id: plant.id }] });
    await call(`/WorkItems/${created.id}/FileReferences`, {
      method: "POST",
      body: { location: "Platform", platformFile: { id: await seedReadyFile() } },
    });
    const activityIds = (await call(`/Activities?workItemIds=${created.id}`)).body.map((a: { id: string }) => a.id);
    expect(activityIds).toHaveLength(1);

    const stale = await call(`/WorkItems/${created.id}`, { method: "DELETE", headers: { "if-match": '"nope"' } });
    expect(stale.status).toBe(412);
    const res = await call(`/WorkItems/${created.id}`, { method: "DELETE", headers: { "if-match": created.etag } });
    expect(res.status).toBe(204);
    expect((await call(`/WorkItems/${created.id}`)).status).toBe(404);
    expect((await call(`/Activities/${activityIds[0]}`)).status).toBe(404);
    const counts = await env.DB.batch(
      [
        ["SELECT count(*) AS n FROM activity_inputs WHERE activity_id = ?1", activityIds[0]],
        ["SELECT count(*) AS n FROM entity_tags WHERE entity_id = ?1", created.id],
        ["SELECT count(*) AS n FROM designations WHERE entity_id = ?1", created.id],
        ["SELECT count(*) AS n FROM file_references WHERE owner_id = ?1", created.id],
        ["SELECT count(*) AS n FROM work_item_templates WHERE work_item_id = ?1", created.id],
        ["SELECT count(*) AS n FROM work_item_activity_templates WHERE work_item_id = ?1", created.id],
      ].map(([sql, id]) => env.DB.prepare(sql!).bind(id)),
    );
    expect(counts.map((r) => (r.results[0] as { n: number }).n)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(await outboxActions("workItem", created.id)).toEqual(["created", "deleted"]);
    expect(await outboxActions("activity", activityIds[0])).toEqual(["created", "deleted"]);
    expect((await call(`/WorkItems/${created.id}`, { method: "DELETE" })).status).toBe(404);
  });
});

describe("usage of shared things", () => {
  it("an entity type or a user status used by a work item cannot be deleted", async () => {
    const type = await workType([]);
    const status = await createUserStatus();
    await postWorkItem({ typeId: type.id, status: status.id });
    const typeDelete = await call(`/EntityTypes/${type.id}`, { method: "DELETE" });
    expect(typeDelete.status).toBe(409);
    expect(typeDelete.body.code).toBe("InUse");
    const statusDelete = await call(`/UserStatuses/${status.id}`, { method: "DELETE" });
    expect(statusDelete.status).toBe(409);
  });
});

describe("security", () => {
  const reader = { permissions: ["work_read"] };
  it.each([
    ["GET", "/WorkItems"],
    ["GET", `/WorkItems/${crypto.randomUUID()}`],
    ["POST", "/WorkItems"],
    ["PUT", "/WorkItems"],
    ["DELETE", `/WorkItems/${crypto.randomUUID()}`],
    ["GET", "/WorkItems/UniqueValues?fieldNames=status"],
    ["GET", `/WorkItems/${crypto.randomUUID()}/ActivityTemplates`],
  ])("%s %s needs a token", async (method, path) => {
    const res = await call(path, { method, anonymous: true, ...(method === "POST" || method === "PUT" ? { body: {} } : {}) });
    expect(res.status).toBe(401);
  });

  it.each([
    ["POST", "/WorkItems", { displayName: "x" }],
    ["PUT", "/WorkItems", { id: crypto.randomUUID(), displayName: "x" }],
    ["DELETE", `/WorkItems/${crypto.randomUUID()}`, undefined],
  ])("%s %s needs work_write", async (method, path, body) => {
    const res = await call(path, { method, body, user: reader });
    expect(res.status).toBe(403);
  });

  it("reading needs work_read", async () => {
    expect((await call("/WorkItems", { user: { permissions: ["work_write"] } })).status).toBe(403);
    expect((await call("/WorkItems", { user: reader })).status).toBe(200);
  });
});
