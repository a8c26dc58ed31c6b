import { describe, expect, it } from "vitest";
import { ActivityTemplateSchema } from "../../src/templates/activity/schema";
import { call } from "../support/http";
import { baseActivityOn, createActivityTemplate, createActivityType, putBody, unique, useActivityTemplateInWorkItem } from "./factories";

describe("activity types", () => {
  it("creates, reads, lists, updates and deletes", async () => {
    const type = await createActivityType({ name: unique("Thickness") });
    expect((await call(`/ActivityTypes/${type.id}`)).body).toMatchObject({ name: type.name, description: "Visual check" });
    const listed = await call(`/ActivityTypes?searchText=${encodeURIComponent(type.name)}`);
    expect(listed.body.map((t: { id: string }) => t.id)).toEqual([type.id]);
    const updated = await call("/ActivityTypes", { method: "PUT", body: { id: type.id, name: `${type.name} v2`, description: null } });
    expect(updated.status).toBe(200);
    expect(
      (
        await call("/ActivityTypes", {
          method: "PUT",
          body: { id: type.id, name: "x", description: null },
          headers: { "if-match": type.etag },
        })
      ).status,
    ).toBe(412);
    expect((await call(`/ActivityTypes/${type.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/ActivityTypes/${type.id}`)).status).toBe(404);
  });

  it("refuses a duplicate name (409, any case)", async () => {
    const type = await createActivityType();
    const res = await call("/ActivityTypes", { method: "POST", body: { name: type.name.toUpperCase() } });
    expect(res.status).toBe(409);
    expect(res.body.errors[0].field).toBe("body.name");
  });

  it("refuses to delete a type an activity template uses (409 InUse)", async () => {
    const type = await createActivityType();
    await createActivityTemplate({ activityType: { id: type.id } });
    const res = await call(`/ActivityTypes/${type.id}`, { method: "DELETE" });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("InUse");
  });
});

describe("POST, GET, PUT /ActivityTemplates", () => {
  it("creates revision 1 and reads it back; a read can be sent back unchanged", async () => {
    const type = await createActivityType();
    const at = await createActivityTemplate({ activityType: { id: type.id }, description: "Measure" });
    expect(ActivityTemplateSchema.safeParse(at).success).toBe(true);
    expect(at).toMatchObject({
      revision: 1,
      status: "new",
      activityType: { id: type.id, name: type.name },
      templateType: "checklist",
      inUse: false,
    });
    expect(at.inputTemplates.map((i: { name: string }) => i.name)).toEqual(["input_0", "input_1", "input_2"]);
    const read = await call(`/ActivityTemplates/${at.id}`);
    expect(read.headers.get("etag")).toBe(at.etag);
    const same = await call("/ActivityTemplates", { method: "PUT", body: putBody(read.body) });
    expect(same.status, same.text).toBe(200);
    expect({ ...same.body, updatedAt: read.body.updatedAt }).toEqual(read.body);
  });

  it("shows inUse and a changed ETag once an activity is based on it", async () => {
    const at = await createActivityTemplate();
    await baseActivityOn(at.id, 1);
    const read = await call(`/ActivityTemplates/${at.id}`);
    expect(read.body.inUse).toBe(true);
    expect(read.headers.get("etag")).not.toBe(at.etag);
  });

  it.each([
    ["missing displayName", { displayName: undefined }, "body.displayName", "invalid_type"],
    ["unknown activity type", { activityType: { id: crypto.randomUUID() } }, "body.activityType.id", "exists"],
    ["unknown status", { status: "nope" }, "body.status", "exists"],
    ["bad input format", { inputTemplates: [{ name: "a", format: "blob" }] }, "body.inputTemplates.0.format", "invalid_value"],
    [
      "duplicate input name",
      {
        inputTemplates: [
          { name: "a", format: "text" },
          { name: "A", format: "text" },
        ],
      },
      "body.inputTemplates.1.name",
      "unique",
    ],
  ])("%s → 400", async (_name, overrides, field, rule) => {
    const res = await call("/ActivityTemplates", { method: "POST", body: { displayName: unique("AT"), ...overrides } });
    expect(res.status, res.text).toBe(400);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field, rule }));
  });

  it("input template routes: add after the last, refuse a duplicate name, 404 on an unknown input", async () => {
    const at = await createActivityTemplate();
    const added = await call(`/ActivityTemplates/${at.id}/InputTemplates`, { method: "POST", body: { name: "extra", format: "date" } });
    expect(added.status).toBe(201);
    expect(added.body.inputTemplates.at(-1)).toMatchObject({ name: "extra", order: 3 });
    const dup = await call(`/ActivityTemplates/${at.id}/InputTemplates`, { method: "POST", body: { name: "EXTRA", format: "date" } });
    expect(dup.body.errors).toEqual([expect.objectContaining({ field: "body.name", rule: "unique" })]);
    expect((await call(`/ActivityTemplates/${at.id}/InputTemplates/${crypto.randomUUID()}`, { method: "DELETE" })).status).toBe(404);
    const listError = await call(`/ActivityTemplates/${at.id}/InputTemplates`, {
      method: "PUT",
      body: [
        { name: "a", format: "text" },
        { name: "b", format: "nope" },
      ],
    });
    expect(listError.body.errors[0].field).toBe("body.1.format");
  });
});

describe("GET /ActivityTemplates", () => {
  it("lists latest revisions with every filter and paging", async () => {
    const type = await createActivityType();
    const kind = unique("kind");
    const a = await createActivityTemplate({
      activityType: { id: type.id },
      templateType: kind,
      status: "active",
      objectOwner: { id: "at-owner", name: "Owner" },
    });
    const b = await createActivityTemplate({ templateType: kind });
    await baseActivityOn(b.id, 1);
    await call("/ActivityTemplates", { method: "PUT", body: putBody(b, { displayName: "b v2" }) });
    const workItem = await useActivityTemplateInWorkItem(a.id, 1);
    const ids = (res: { body: { id: string }[] }) => res.body.map((t) => t.id);
    const all = await call(`/ActivityTemplates?templateTypes=${encodeURIComponent(kind)}&order=displayName asc`);
    expect(all.body.map((t: { id: string; revision: number }) => [t.id, t.revision]).sort()).toEqual(
      [
        [a.id, 1],
        [b.id, 2],
      ].sort(),
    );
    expect(ids(await call(`/ActivityTemplates?activityTypeIds=${type.id}`))).toEqual([a.id]);
    expect(ids(await call(`/ActivityTemplates?templateTypes=${encodeURIComponent(kind)}&statuses=active`))).toEqual([a.id]);
    expect(ids(await call(`/ActivityTemplates?objectOwnerIds=at-owner`))).toEqual([a.id]);
    expect(ids(await call(`/ActivityTemplates?workItemIds=${workItem}`))).toEqual([a.id]);
    expect(ids(await call(`/ActivityTemplates?searchText=${encodeURIComponent(a.referenceId)}`))).toEqual([a.id]);
    expect(ids(await call(`/ActivityTemplates?templateTypes=${encodeURIComponent(kind)}&excludeIds=${a.id}`))).toEqual([b.id]);
    expect((await call(`/ActivityTemplates?templateTypes=${encodeURIComponent(kind)}&take=1`)).body).toHaveLength(1);
    expect((await call("/ActivityTemplates?workItemIds=not-a-uuid")).body.errors[0].field).toBe("query.workItemIds");
  });

  it("answers unique values", async () => {
    const type = await createActivityType();
    const at = await createActivityTemplate({ activityType: { id: type.id } });
    const res = await call(`/ActivityTemplates/UniqueValues?fieldNames=activityType,templateType&ids=${at.id}`);
    expect(res.body).toEqual([
      { fieldName: "activityType", values: [{ displayName: type.name, value: type.id }] },
      { fieldName: "templateType", values: [{ displayName: "checklist", value: "checklist" }] },
    ]);
  });
});

describe("security", () => {
  it.each([
    ["GET", "/ActivityTemplates"],
    ["POST", "/ActivityTemplates"],
    ["PUT", "/ActivityTypes"],
    ["DELETE", `/ActivityTemplates/${crypto.randomUUID()}/InputTemplates/${crypto.randomUUID()}`],
  ])("%s %s: 401 without a token, 403 without the permission", async (method, path) => {
    expect((await call(path, { method, anonymous: true })).status).toBe(401);
    const permissions = method === "GET" ? ["work_write"] : ["work_read"];
    expect(
      (await call(path, { method, body: method === "GET" || method === "DELETE" ? undefined : {}, user: { permissions } })).status,
    ).toBe(403);
  });
});
