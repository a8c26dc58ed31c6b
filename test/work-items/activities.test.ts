/** /Activities: creation from a template revision (alone or in a work item), inputs, PUT rules, delete, list, unique values, security. */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { createUserStatus, outboxActions } from "../support/factories/types";
import { copyActivityTemplateRevision, seedActivityTemplate, seedActivityType, seedWorkTemplate } from "../support/factories/templates-sql";
import { postActivity, postWorkItem, seedAsset, withoutEtag } from "./support";

describe("POST /Activities", () => {
  it("creates an activity without a work item from the latest revision, copying the template's fields", async () => {
    const type = await seedActivityType();
    const template = await seedActivityTemplate({ activityTypeId: type.id });
    await copyActivityTemplateRevision(template.id, { displayName: "Revision two" });
    const created = await postActivity({ basedOn: { id: template.id } });
    expect(created).toMatchObject({
      workItemId: null,
      basedOn: { id: template.id, revision: 2 },
      displayName: "Revision two",
      referenceId: template.referenceId,
      status: "new",
      type: { id: type.id, name: type.name },
      responsible: null,
    });
    expect(created.inputs.map((i: { id: string }) => i.id)).toEqual(template.inputs.map((i) => i.id));
    const read = await call(`/Activities/${created.id}`);
    expect(read.body).toEqual(withoutEtag(created));
    expect(read.headers.get("etag")).toBe(created.etag);
    expect(await outboxActions("activity", created.id)).toEqual(["created"]);
  });

  it("in a work item, uses the revision the work item used first and records a first use", async () => {
    const template = await seedActivityTemplate();
    const item = await postWorkItem();
    const first = await postActivity({ basedOn: { id: template.id }, workItemId: item.id });
    expect(first.basedOn.revision).toBe(1);
    await copyActivityTemplateRevision(template.id);
    const second = await postActivity({ basedOn: { id: template.id }, workItemId: item.id });
    expect(second.basedOn.revision).toBe(1);
    const used = await call(`/WorkItems/${item.id}/ActivityTemplates`);
    expect(used.body.map((t: { id: string; revision: number }) => [t.id, t.revision])).toEqual([[template.id, 1]]);
    const wrong = await call("/Activities", { method: "POST", body: { basedOn: { id: template.id, revision: 2 }, workItemId: item.id } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors).toEqual([expect.objectContaining({ field: "body.basedOn.revision", rule: "workItemRevision" })]);
    // Without a work item any existing revision may be chosen.
    expect((await postActivity({ basedOn: { id: template.id, revision: 2 } })).basedOn.revision).toBe(2);
  });

  it("uses the revision instantiated from the work template for later activities", async () => {
    const template = await seedActivityTemplate();
    const work = await seedWorkTemplate({ activityTemplateIds: [template.id] });
    const item = await postWorkItem({ basedOn: [{ id: work.id }] });
    await copyActivityTemplateRevision(template.id);
    const added = await postActivity({ basedOn: { id: template.id }, workItemId: item.id });
    expect(added.basedOn).toEqual({ id: template.id, revision: 1 });
  });

  describe.each([
    ["an unknown template", { basedOn: { id: crypto.randomUUID() } }, "body.basedOn.id"],
    ["an unknown revision", { revision: 9 }, "body.basedOn.revision"],
    ["an unknown work item", { workItemId: crypto.randomUUID() }, "body.workItemId"],
    ["an unknown activity type", { typeId: crypto.randomUUID() }, "body.typeId"],
    ["a bad dateOfActivity", { dateOfActivity: "31/31/2026" }, "body.dateOfActivity"],
    ["a value of the wrong format", { inputs: "wrong" }, "body.inputs.0.value"],
    ["an unknown input", { inputs: "unknown" }, "body.inputs.0.id"],
  ] as [string, Record<string, unknown>, string][])("with %s", (_name, patch, field) => {
    it("answers 400 naming the field", async () => {
      const template = await seedActivityTemplate({ inputs: [{ format: "integer", required: true }] });
      const body: Record<string, unknown> = { basedOn: { id: template.id }, ...patch };
      if ("revision" in patch) body.basedOn = { id: template.id, revision: patch.revision };
      delete body.revision;
      if (patch.inputs === "wrong") body.inputs = [{ id: template.inputs[0]!.id, value: "12" }];
      if (patch.inputs === "unknown") body.inputs = [{ id: "nope", value: 1 }];
      const res = await call("/Activities", { method: "POST", body });
      expect(res.status, res.text).toBe(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    });
  });
});

describe("PUT /Activities", () => {
  it("changes the fields and input values, validated by format, and honours If-Match", async () => {
    const template = await seedActivityTemplate({
      inputs: [{ format: "decimal", required: true }, { format: "date" }, { format: "boolean" }, { format: "text" }],
    });
    const [thickness, measured, ok, note] = template.inputs.map((i) => i.id);
    const created = await postActivity({ basedOn: { id: template.id } });
    const plant = await seedAsset("plant");
    const type = await seedActivityType();
    const status = await createUserStatus();
    const body = {
      ...withoutEtag(created),
      displayName: "Measured",
      status: status.id,
      dateOfActivity: "2026-11-22T09:30:00Z",
      responsible: { id: "tech-1", name: "Tech One" },
      typeId: type.id,
      designations: [{ id: plant.id }],
      inputs: [
        { id: thickness, value: 4.5 },
        { id: measured, value: "11/22/2026 09:30" },
        { id: ok, value: true },
        { id: note, value: "fine" },
      ],
      metadata: { checked: true },
    };
    const updated = await call("/Activities", { method: "PUT", body, headers: { "if-match": created.etag } });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({
      displayName: "Measured",
      status: status.id,
      dateOfActivity: "2026-11-22T09:30:00.000Z",
      responsible: { id: "tech-1", name: "Tech One" },
      type: { id: type.id, name: type.name },
      designations: [expect.objectContaining({ id: plant.id, kind: "plant" })],
      metadata: { checked: true },
    });
    expect(updated.body.inputs.map((i: { value: unknown }) => i.value)).toEqual([4.5, "2026-11-22T09:30:00.000Z", true, "fine"]);
    expect((await call(`/Activities/${created.id}`)).body).toEqual(updated.body);
    expect((await call("/Activities", { method: "PUT", body, headers: { "if-match": created.etag } })).status).toBe(412);

    // A required input with a value cannot be cleared; inputs not listed keep their value.
    const cleared = await call("/Activities", { method: "PUT", body: { ...updated.body, inputs: [{ id: thickness, value: null }] } });
    expect(cleared.status).toBe(400);
    expect(cleared.body.errors).toEqual([expect.objectContaining({ field: "body.inputs.0.value", rule: "required" })]);
    const partial = await call("/Activities", { method: "PUT", body: { ...updated.body, inputs: [{ id: note, value: null }] } });
    expect(partial.status).toBe(200);
    expect(partial.body.inputs.map((i: { value: unknown }) => i.value)).toEqual([4.5, "2026-11-22T09:30:00.000Z", true, null]);
    expect(await outboxActions("activity", created.id)).toEqual(["created", "updated", "updated"]);
  });

  it("refuses to change basedOn or workItemId", async () => {
    const template = await seedActivityTemplate();
    const created = await postActivity({ basedOn: { id: template.id } });
    const res = await call("/Activities", {
      method: "PUT",
      body: { ...withoutEtag(created), basedOn: { id: crypto.randomUUID(), revision: 1 }, workItemId: crypto.randomUUID() },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(["body.basedOn.id", "body.workItemId"]);
  });
});

describe("DELETE /Activities/{id}", () => {
  it("removes the activity and its inputs", async () => {
    const created = await postActivity({ basedOn: { id: (await seedActivityTemplate()).id } });
    expect((await call(`/Activities/${created.id}`, { method: "DELETE", headers: { "if-match": '"old"' } })).status).toBe(412);
    expect((await call(`/Activities/${created.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/Activities/${created.id}`)).status).toBe(404);
    expect((await call(`/Activities/${created.id}`, { method: "DELETE" })).status).toBe(404);
    expect(await outboxActions("activity", created.id)).toEqual(["created", "deleted"]);
  });
});

describe("GET /Activities", () => {
  it("applies every filter", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const typeA = await seedActivityType();
    const t1 = await seedActivityTemplate({
      displayName: `Alpha ${tag}`,
      referenceId: `REF-${tag}-1`,
      activityTypeId: typeA.id,
      inputs: [],
    });
    const t2 = await seedActivityTemplate({ displayName: `Beta ${tag}`, inputs: [] });
    const plant = await seedAsset("plant");
    const main = await seedAsset("mainSystem", { id: plant.id, plantId: plant.id });
    const equipment = await seedAsset("equipment", { id: main.id, plantId: plant.id });
    const design = await seedAsset("designObject", { id: main.id, plantId: plant.id });
    const item = await postWorkItem();
    const a = await postActivity({
      basedOn: { id: t1.id },
      workItemId: item.id,
      dateOfActivity: "2026-03-01T23:30:00Z",
      responsible: { id: `r-${tag}`, name: "R" },
      designations: [{ id: equipment.id }],
      objectOwner: { id: `o-${tag}`, name: "Owner" },
    });
    const b = await postActivity({
      basedOn: { id: t2.id },
      dateOfActivity: "2026-03-02T00:30:00Z",
      status: "active",
      designations: [{ id: design.id }, { id: main.id }],
    });
    const c = await postActivity({ basedOn: { id: t2.id }, dateOfActivity: "2026-03-05T12:00:00Z", displayName: `Gamma ${tag}` });
    const mine = [a.id, b.id, c.id].join(",");
    const ids = async (query: string) => {
      const order = query.startsWith("order=") ? "" : "order=dateOfActivity asc&";
      const res = await call(`/Activities?ids=${mine}&${order}${query}`);
      expect(res.status, res.text).toBe(200);
      return res.body.map((x: { id: string }) => x.id);
    };
    expect(await ids("")).toEqual([a.id, b.id, c.id]);
    expect(await ids(`excludeIds=${b.id}`)).toEqual([a.id, c.id]);
    expect(await ids(`searchText=ref-${tag}`)).toEqual([a.id]);
    expect(await ids(`searchText=gamma`)).toEqual([c.id]);
    expect(await ids("statuses=active")).toEqual([b.id]);
    expect(await ids("dateOfActivityFrom=2026-03-02T00:00:00Z")).toEqual([b.id, c.id]);
    expect(await ids("dateOfActivityTo=2026-03-02")).toEqual([a.id, b.id]);
    expect(await ids("dateOfActivityTo=2026-03-02T00:00:00Z")).toEqual([a.id]);
    expect(await ids("dateOfActivities=2026-03-01,2026-03-05")).toEqual([a.id, c.id]);
    expect(await ids(`objectOwnerIds=o-${tag}`)).toEqual([a.id]);
    expect(await ids(`responsibleIds=r-${tag}`)).toEqual([a.id]);
    expect(await ids(`basedOnIds=${t2.id}`)).toEqual([b.id, c.id]);
    expect(await ids(`typeIds=${typeA.id}`)).toEqual([a.id]);
    expect(await ids(`workItemIds=${item.id}`)).toEqual([a.id]);
    expect(await ids(`equipmentIds=${equipment.id}`)).toEqual([a.id]);
    expect(await ids(`mainSystemIds=${main.id}`)).toEqual([b.id]);
    expect(await ids(`designObjectIds=${design.id}`)).toEqual([b.id]);
    expect(await ids(`plantNames=${plant.name.toUpperCase()}`)).toEqual([a.id, b.id]);
    expect(await ids("order=displayName desc")).toEqual([c.id, b.id, a.id]);
    expect(await ids("skip=1&take=1")).toEqual([b.id]);
    const total = await call(`/Activities?ids=${mine}&includeTotal=true&take=1`);
    expect(total.headers.get("x-total-count")).toBe("3");
  });

  it.each([
    ["dateOfActivities=2026-3-1", "query.dateOfActivities"],
    ["dateOfActivityFrom=soon", "query.dateOfActivityFrom"],
    ["basedOnIds=x", "query.basedOnIds"],
    ["order=nope asc", "query.order"],
  ])("%s is a 400 on %s", async (query, field) => {
    const res = await call(`/Activities?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe(field);
  });

  it("answers unique values", async () => {
    const type = await seedActivityType();
    const t = await seedActivityTemplate({ activityTypeId: type.id, inputs: [] });
    const a = await postActivity({ basedOn: { id: t.id }, status: "active", responsible: { id: "resp-1", name: "Rita" } });
    const res = await call(`/Activities/UniqueValues?fieldNames=status,type,responsible&ids=${a.id}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual([
      { fieldName: "status", values: [{ displayName: "active", value: "active" }] },
      { fieldName: "type", values: [{ displayName: type.name, value: type.id }] },
      { fieldName: "responsible", values: [{ displayName: "Rita", value: "resp-1" }] },
    ]);
  });
});

describe("security", () => {
  it("needs a token and the permissions", async () => {
    expect((await call("/Activities", { anonymous: true })).status).toBe(401);
    expect((await call("/Activities", { user: { permissions: ["work_write"] } })).status).toBe(403);
    expect(
      (await call("/Activities", { method: "POST", body: { basedOn: { id: crypto.randomUUID() } }, user: { permissions: ["work_read"] } }))
        .status,
    ).toBe(403);
    expect((await call(`/Activities/${crypto.randomUUID()}`, { method: "DELETE", user: { permissions: ["work_read"] } })).status).toBe(403);
  });
});
