/** GET /WorkItems filters and unique values, and /WorkItems/{id}/FileReferences. */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { outboxActions, seedPropertyDefinition } from "../support/factories/types";
import { createEntityType } from "../support/factories/types";
import { seedReadyFile, seedWorkTemplate } from "../support/factories/templates-sql";
import { postWorkItem, seedAsset } from "./support";

describe("GET /WorkItems", () => {
  it("applies every filter", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const score = await seedPropertyDefinition({ format: "integer", applicationRule: "WorkItem", name: `score_${tag}` });
    const type = await createEntityType({ appliesTo: null, propertyDefinitions: [{ id: score.id }] });
    const plant = await seedAsset("plant");
    const main = await seedAsset("mainSystem", { id: plant.id, plantId: plant.id });
    const equipment = await seedAsset("equipment", { id: main.id, plantId: plant.id });
    const design = await seedAsset("designObject", { id: main.id, plantId: plant.id });
    const template = await seedWorkTemplate({ tags: [`inherited-${tag}`] });
    const a = await postWorkItem({
      displayName: `A ${tag}`,
      referenceId: `REF-${tag}`,
      dueDate: "2026-05-01T23:59:59Z",
      typeId: type.id,
      properties: [{ name: score.name, value: 5 }],
      designations: [{ id: equipment.id }],
      objectOwner: { id: `owner-${tag}`, name: "O" },
    });
    const b = await postWorkItem({
      displayName: `B ${tag}`,
      dueDate: "2026-05-02T00:00:00Z",
      status: "active",
      typeId: type.id,
      properties: [{ name: score.name, value: 1 }],
      tags: [`t-${tag}`],
      designations: [{ id: main.id }, { id: design.id }],
    });
    const c = await postWorkItem({ displayName: `C ${tag}`, dueDate: null, basedOn: [{ id: template.id }] });
    const mine = [a.id, b.id, c.id].join(",");
    const ids = async (query: string) => {
      const order = query.startsWith("order=") ? "" : "order=displayName asc&";
      const res = await call(`/WorkItems?ids=${mine}&${order}${query}`);
      expect(res.status, res.text).toBe(200);
      return res.body.map((x: { id: string }) => x.id);
    };
    expect(await ids("")).toEqual([a.id, b.id, c.id]);
    expect(await ids(`excludeIds=${a.id}`)).toEqual([b.id, c.id]);
    expect(await ids(`searchText=ref-${tag}`)).toEqual([a.id]);
    expect(await ids(`searchText=c ${tag}`)).toEqual([c.id]);
    expect(await ids("statuses=active,new")).toEqual([a.id, b.id, c.id]);
    expect(await ids("statuses=active")).toEqual([b.id]);
    expect(await ids("dueDateFrom=2026-05-02T00:00:00Z")).toEqual([b.id]);
    expect(await ids("dueDateTo=2026-05-01")).toEqual([a.id]);
    expect(await ids("dueDateTo=2026-05-02T00:00:00.000Z")).toEqual([a.id, b.id]);
    expect(await ids("dueDates=2026-05-02")).toEqual([b.id]);
    expect(await ids("dueDates=2026-05-01,2026-05-02")).toEqual([a.id, b.id]);
    expect(await ids(`objectOwnerIds=owner-${tag}`)).toEqual([a.id]);
    expect(await ids(`tags=t-${tag},inherited-${tag}`)).toEqual([b.id, c.id]);
    expect(await ids(`basedOnIds=${template.id}`)).toEqual([c.id]);
    expect(await ids(`equipmentIds=${equipment.id}`)).toEqual([a.id]);
    expect(await ids(`mainSystemIds=${main.id}`)).toEqual([b.id]);
    expect(await ids(`designObjectIds=${design.id}`)).toEqual([b.id]);
    expect(await ids(`plantNames=${plant.name}`)).toEqual([a.id, b.id]);
    expect(await ids(`properties=${score.name} gt 2`)).toEqual([a.id]);
    expect(await ids(`properties=${score.name} eq null`)).toEqual([c.id]);
    expect(await ids(`order=properties.${score.name} asc`)).toEqual([b.id, a.id, c.id]);
    expect(await ids("order=dueDate desc")).toEqual([b.id, a.id, c.id]);
    expect(await ids("order=status desc, referenceId asc")).toEqual([a.id, c.id, b.id]);
    expect(await ids("skip=1&take=1")).toEqual([b.id]);
    const counted = await call(`/WorkItems?ids=${mine}&includeTotal=true&take=0`);
    expect(counted.headers.get("x-total-count")).toBe("3");
  });

  it.each([
    ["dueDates=tomorrow", "query.dueDates"],
    ["dueDateTo=31.12.2026", "query.dueDateTo"],
    ["basedOnIds=nope", "query.basedOnIds"],
    ["equipmentIds=nope", "query.equipmentIds"],
    ["properties=unknownProperty eq 1", "query.properties"],
    ["order=owner asc", "query.order"],
  ])("%s is a 400 on %s", async (query, field) => {
    const res = await call(`/WorkItems?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("InvalidQuery");
    expect(res.body.errors[0].field).toBe(field);
  });

  it("answers unique values of fields and properties", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const zone = await seedPropertyDefinition({ format: "text", applicationRule: "WorkItem", name: `zone_${tag}` });
    const type = await createEntityType({ appliesTo: null, propertyDefinitions: [{ id: zone.id }] });
    const a = await postWorkItem({
      typeId: type.id,
      properties: [{ name: zone.name, value: "North" }],
      objectOwner: { id: "own-1", name: "Ann" },
    });
    const b = await postWorkItem({
      typeId: type.id,
      properties: [{ name: zone.name, value: "East" }],
      status: "active",
      objectOwner: { id: "own-1", name: "Ann" },
    });
    const res = await call(`/WorkItems/UniqueValues?fieldNames=status,objectOwner,properties.${zone.name}&ids=${a.id},${b.id}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual([
      {
        fieldName: "status",
        values: [
          { displayName: "active", value: "active" },
          { displayName: "new", value: "new" },
        ],
      },
      { fieldName: "objectOwner", values: [{ displayName: "Ann", value: "own-1" }] },
      {
        fieldName: `properties.${zone.name}`,
        values: [
          { displayName: "East", value: "East" },
          { displayName: "North", value: "North" },
        ],
      },
    ]);
    expect((await call("/WorkItems/UniqueValues")).status).toBe(400);
  });
});

describe("/WorkItems/{id}/FileReferences", () => {
  it("links, lists, reads and unlinks file references", async () => {
    const item = await postWorkItem();
    const fileId = await seedReadyFile();
    const platform = await call(`/WorkItems/${item.id}/FileReferences`, {
      method: "POST",
      body: { location: "Platform", platformFile: { id: fileId } },
    });
    expect(platform.status, platform.text).toBe(201);
    expect(platform.headers.get("location")).toBe(`/WorkItems/${item.id}/FileReferences/${platform.body.id}`);
    expect(platform.body).toMatchObject({ location: "Platform", platformFile: { id: fileId }, url: null, name: null, inheritedFrom: null });
    const external = await call(`/WorkItems/${item.id}/FileReferences`, {
      method: "POST",
      body: { location: "External", url: "http://intranet.example/p.pdf", name: "P&ID" },
    });
    expect(external.status).toBe(201);
    const list = await call(`/WorkItems/${item.id}/FileReferences`);
    expect(list.body.map((f: { id: string }) => f.id).sort()).toEqual([platform.body.id, external.body.id].sort());
    expect((await call(`/WorkItems/${item.id}/FileReferences/${external.body.id}`)).body).toEqual(external.body);

    expect((await call(`/WorkItems/${item.id}/FileReferences?fileReferenceId=${platform.body.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/WorkItems/${item.id}/FileReferences/${external.body.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/WorkItems/${item.id}/FileReferences/${external.body.id}`)).status).toBe(404);
    expect((await call(`/WorkItems/${item.id}/FileReferences/${external.body.id}`, { method: "DELETE" })).status).toBe(404);
    expect((await call(`/WorkItems/${item.id}/FileReferences`, { method: "DELETE" })).status).toBe(400);
    expect((await call(`/WorkItems/${item.id}/FileReferences`)).body).toEqual([]);
    expect(await outboxActions("fileReference", platform.body.id)).toEqual(["created", "deleted"]);
  });

  it("refuses a Platform file the caller may not see (another user's unattached upload), as if it did not exist", async () => {
    const item = await postWorkItem();
    const privateFile = await seedReadyFile("someone-else");
    const res = await call(`/WorkItems/${item.id}/FileReferences`, {
      method: "POST",
      body: { location: "Platform", platformFile: { id: privateFile } },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: "body.platformFile.id", rule: "exists" })]);
  });

  describe.each([
    ["Platform without a file", { location: "Platform" }, "body.platformFile", "required"],
    [
      "Platform with an unknown file",
      { location: "Platform", platformFile: { id: crypto.randomUUID() } },
      "body.platformFile.id",
      "exists",
    ],
    ["Platform with a url", { location: "Platform", platformFile: { id: "x" }, url: "https://a.example" }, "body.url", "notAllowed"],
    ["External without a url", { location: "External" }, "body.url", "required"],
    ["External with ftp", { location: "External", url: "ftp://files.example/a" }, "body.url", "format"],
    ["External with a relative url", { location: "External", url: "/a/b" }, "body.url", "format"],
    [
      "External with a platform file",
      { location: "External", url: "https://a.example", platformFile: { id: "x" } },
      "body.platformFile",
      "notAllowed",
    ],
    ["an unknown location", { location: "Disk" }, "body.location", "invalid_value"],
  ])("%s", (_name, body, field, rule) => {
    it("is a 400 naming the field", async () => {
      const item = await postWorkItem();
      const res = await call(`/WorkItems/${item.id}/FileReferences`, { method: "POST", body });
      expect(res.status, res.text).toBe(400);
      expect(res.body.errors).toContainEqual(expect.objectContaining({ field, rule }));
    });
  });

  it("404 for an unknown work item; 401 and 403 without token or permission", async () => {
    const ghost = crypto.randomUUID();
    expect((await call(`/WorkItems/${ghost}/FileReferences`)).status).toBe(404);
    expect(
      (await call(`/WorkItems/${ghost}/FileReferences`, { method: "POST", body: { location: "External", url: "https://a.example" } }))
        .status,
    ).toBe(404);
    expect((await call(`/WorkItems/${ghost}/FileReferences`, { anonymous: true })).status).toBe(401);
    expect(
      (
        await call(`/WorkItems/${ghost}/FileReferences`, {
          method: "POST",
          body: { location: "External", url: "https://a.example" },
          user: { permissions: ["work_read"] },
        })
      ).status,
    ).toBe(403);
  });
});
