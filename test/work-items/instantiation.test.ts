/**
 * Instantiation of work templates (spec section 3, rules 5 and 6): every activity and input of the
 * listed templates, tags inherited, file references copied, only newly added templates on PUT, the
 * revisions kept after the templates change, and the guard against a template edited meanwhile.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { WriteContext } from "../../src/pkg/db";
import { createWorkItem } from "../../src/work-items/write";
import { call } from "../support/http";
import { outboxActions } from "../support/factories/types";
import {
  copyActivityTemplateRevision,
  copyWorkTemplateRevision,
  editActivityTemplateInPlace,
  editWorkTemplateInPlace,
  seedActivityTemplate,
  seedActivityType,
  seedReadyFile,
  seedWorkTemplate,
} from "../support/factories/templates-sql";

async function createItem(body: Record<string, unknown>) {
  const res = await call("/WorkItems", { method: "POST", body: { displayName: "Pump P-101 annual", ...body } });
  expect(res.status, res.text).toBe(201);
  return { ...res.body, etag: res.headers.get("etag")! };
}

async function activitiesOf(workItemId: string) {
  const res = await call(`/Activities?workItemIds=${workItemId}&order=position asc`);
  expect(res.status, res.text).toBe(200);
  return res.body as {
    id: string;
    displayName: string;
    basedOn: { id: string; revision: number };
    inputs: { id: string; name: string; format: string; required: boolean; value: unknown }[];
    type: { id: string; name: string } | null;
  }[];
}

describe("creating a work item with basedOn", () => {
  it("instantiates every activity with its inputs, inherits tags and copies file references", async () => {
    const type = await seedActivityType();
    const a1 = await seedActivityTemplate({
      activityTypeId: type.id,
      inputs: [{ format: "decimal", required: true, name: "thickness" }, { format: "date", name: "measuredAt" }, { format: "boolean" }],
    });
    const a2 = await seedActivityTemplate({ inputs: [] });
    const fileId = await seedReadyFile();
    const w1 = await seedWorkTemplate({
      activityTemplateIds: [a1.id, a2.id],
      tags: ["pump", "annual"],
      fileReferences: [
        { location: "Platform", platformFileId: fileId },
        { location: "External", url: "https://docs.example/manual.pdf", name: "Manual" },
      ],
    });
    const w2 = await seedWorkTemplate({ activityTemplateIds: [a1.id], tags: ["annual", "safety"] });

    const item = await createItem({ tags: ["mine", "pump"], basedOn: [{ id: w1.id }, { id: w2.id }] });

    expect(item.basedOn).toEqual([
      { id: w1.id, revision: 1 },
      { id: w2.id, revision: 1 },
    ]);
    expect(item.tags).toEqual(["mine", "pump", "annual", "safety"]);
    const activities = await activitiesOf(item.id);
    expect(activities.map((a) => [a.basedOn.id, a.basedOn.revision])).toEqual([
      [a1.id, 1],
      [a2.id, 1],
      [a1.id, 1],
    ]);
    expect(activities[0]).toMatchObject({ displayName: a1.displayName, type: { id: type.id, name: type.name } });
    expect(activities[0]!.inputs).toEqual(
      a1.inputs.map((i) => ({ id: i.id, name: i.name, displayName: i.displayName, format: i.format, required: i.required, value: null })),
    );
    expect(activities[1]!.inputs).toEqual([]);

    const files = await call(`/WorkItems/${item.id}/FileReferences`);
    expect(files.body).toHaveLength(2);
    expect(files.body.map((f: { inheritedFrom: string }) => f.inheritedFrom).sort()).toEqual([...w1.fileReferenceIds].sort());
    expect(files.body.find((f: { location: string }) => f.location === "External")).toMatchObject({
      url: "https://docs.example/manual.pdf",
      name: "Manual",
      platformFile: null,
    });
    expect(files.body.find((f: { location: string }) => f.location === "Platform")).toMatchObject({
      platformFile: { id: fileId },
      url: null,
    });

    const used = await call(`/WorkItems/${item.id}/ActivityTemplates`);
    expect(used.body.map((t: { id: string; revision: number }) => [t.id, t.revision]).sort()).toEqual(
      [
        [a1.id, 1],
        [a2.id, 1],
      ].sort(),
    );
    expect(used.body.find((t: { id: string }) => t.id === a1.id).inputTemplates.map((i: { id: string }) => i.id)).toEqual(
      a1.inputs.map((i) => i.id),
    );

    expect(await outboxActions("workItem", item.id)).toEqual(["created"]);
    for (const a of activities) expect(await outboxActions("activity", a.id)).toEqual(["created"]);
  });

  it("answers 400 naming each unknown or repeated template", async () => {
    const w = await seedWorkTemplate();
    const missing = crypto.randomUUID();
    const res = await call("/WorkItems", { method: "POST", body: { displayName: "x", basedOn: [{ id: w.id }, { id: missing }] } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: "body.basedOn.1.id", rule: "exists" })]);
    const twice = await call("/WorkItems", { method: "POST", body: { displayName: "x", basedOn: [{ id: w.id }, { id: w.id }] } });
    expect(twice.body.errors).toEqual([expect.objectContaining({ field: "body.basedOn.1.id", rule: "unique" })]);
  });
});

describe("PUT with more templates in basedOn", () => {
  it("instantiates only the newly added template, reusing the revision the work item already used", async () => {
    const shared = await seedActivityTemplate();
    const other = await seedActivityTemplate({ inputs: [{ format: "integer" }] });
    const w1 = await seedWorkTemplate({ activityTemplateIds: [shared.id], tags: ["a"] });
    const w2 = await seedWorkTemplate({ activityTemplateIds: [shared.id, other.id], tags: ["b"] });
    const item = await createItem({ basedOn: [{ id: w1.id }] });
    // The shared activity template moves on; the work item keeps the revision it used first.
    await copyActivityTemplateRevision(shared.id, { displayName: "Renamed in revision 2", addInput: { format: "text" } });

    const { etag, ...read } = item;
    const res = await call("/WorkItems", {
      method: "PUT",
      body: { ...read, basedOn: [...read.basedOn, { id: w2.id }] },
      headers: { "if-match": etag },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.basedOn).toEqual([
      { id: w1.id, revision: 1 },
      { id: w2.id, revision: 1 },
    ]);
    expect(res.body.tags).toEqual(["a", "b"]);

    const activities = await activitiesOf(item.id);
    expect(activities.map((a) => [a.basedOn.id, a.basedOn.revision])).toEqual([
      [shared.id, 1],
      [shared.id, 1],
      [other.id, 1],
    ]);
    expect(activities[1]!.displayName).toBe(shared.displayName);
    expect(activities[1]!.inputs).toHaveLength(shared.inputs.length);

    // Sending the same basedOn again instantiates nothing more.
    const again = await call("/WorkItems", { method: "PUT", body: { ...read, basedOn: res.body.basedOn } });
    expect(again.status).toBe(200);
    expect(await activitiesOf(item.id)).toHaveLength(3);
  });

  it("refuses to remove an instantiated template from basedOn, and leaves basedOn alone when absent", async () => {
    const w = await seedWorkTemplate({ activityTemplateIds: [(await seedActivityTemplate()).id] });
    const item = await createItem({ basedOn: [{ id: w.id }] });
    const { etag: _etag, basedOn: _basedOn, ...rest } = item;
    const removed = await call("/WorkItems", { method: "PUT", body: { ...rest, basedOn: [] } });
    expect(removed.status).toBe(400);
    expect(removed.body.errors).toEqual([expect.objectContaining({ field: "body.basedOn", rule: "instantiated" })]);
    const absent = await call("/WorkItems", { method: "PUT", body: { ...rest, displayName: "Renamed" } });
    expect(absent.status).toBe(200);
    expect(absent.body.basedOn).toEqual([{ id: w.id, revision: 1 }]);
  });
});

describe("revisions", () => {
  it("a work item keeps its revisions after the templates are copied to revision 2", async () => {
    const at = await seedActivityTemplate();
    const w = await seedWorkTemplate({ activityTemplateIds: [at.id] });
    const item = await createItem({ basedOn: [{ id: w.id }] });
    await copyActivityTemplateRevision(at.id, { displayName: "Changed", addInput: { format: "boolean" } });
    await copyWorkTemplateRevision(w.id, { addActivityTemplateIds: [at.id] });

    const read = await call(`/WorkItems/${item.id}`);
    expect(read.body.basedOn).toEqual([{ id: w.id, revision: 1 }]);
    const used = await call(`/WorkItems/${item.id}/ActivityTemplates`);
    expect(used.body).toEqual([
      expect.objectContaining({ id: at.id, revision: 1, displayName: at.displayName, isLatest: false, inUse: true }),
    ]);
    expect(used.body[0].inputTemplates).toHaveLength(at.inputs.length);

    // A new work item from the same template takes the new revisions.
    const next = await createItem({ basedOn: [{ id: w.id }] });
    expect(next.basedOn).toEqual([{ id: w.id, revision: 2 }]);
    const activities = await activitiesOf(next.id);
    expect(activities.map((a) => a.basedOn.revision)).toEqual([2, 2]);
    expect(activities[0]!.displayName).toBe("Changed");
    expect(activities[0]!.inputs).toHaveLength(at.inputs.length + 1);
  });
});

function context(): WriteContext {
  return {
    db: env.DB,
    now: new Date().toISOString(),
    actorId: "guard-tester",
    actorName: "Guard Tester",
    requestId: "guard-test",
    uuid: () => crypto.randomUUID(),
    expectedEtag: undefined,
  };
}

const body = (basedOn: { id: string }[]) => ({
  displayName: "Guarded",
  referenceId: null,
  dueDate: null,
  tags: [],
  properties: [],
  designations: [],
  metadata: null,
  basedOn,
});

describe("a template edited between the read and the write", () => {
  it("makes the write read again, so the work item has the edited content", async () => {
    const at = await seedActivityTemplate({ displayName: "Before" });
    const w = await seedWorkTemplate({ activityTemplateIds: [at.id], tags: ["old"] });
    const attempts: number[] = [];
    const created = await createWorkItem(context(), body([{ id: w.id }]), {
      beforeWrite: async (attempt) => {
        attempts.push(attempt);
        if (attempt === 1) {
          await editActivityTemplateInPlace(at.id, 1, "After");
          await editWorkTemplateInPlace(w.id, 1, ["new"]);
        }
      },
    });
    expect(attempts).toEqual([1, 2]);
    expect(created.value.tags).toEqual(["new"]);
    const activities = await activitiesOf(created.value.id);
    expect(activities.map((a) => a.displayName)).toEqual(["After"]);
  });

  it("writes nothing when the first attempt loses the race", async () => {
    const at = await seedActivityTemplate();
    const w = await seedWorkTemplate({ activityTemplateIds: [at.id] });
    const ids: string[] = [];
    const ctx = {
      ...context(),
      uuid: () => {
        const id = crypto.randomUUID();
        ids.push(id);
        return id;
      },
    };
    await expect(
      createWorkItem(ctx, body([{ id: w.id }]), {
        beforeWrite: async () => editActivityTemplateInPlace(at.id, 1, `Edit ${crypto.randomUUID()}`),
      }),
    ).rejects.toMatchObject({ code: "Conflict" });
    const workItemId = ids[0]!;
    const leftovers = await env.DB.batch([
      env.DB.prepare("SELECT count(*) AS n FROM work_items WHERE id = ?1").bind(workItemId),
      env.DB.prepare("SELECT count(*) AS n FROM activities WHERE work_item_id = ?1").bind(workItemId),
      env.DB.prepare("SELECT count(*) AS n FROM work_item_templates WHERE work_item_id = ?1").bind(workItemId),
      env.DB.prepare("SELECT count(*) AS n FROM work_item_activity_templates WHERE work_item_id = ?1").bind(workItemId),
    ]);
    expect(leftovers.map((r) => (r.results[0] as { n: number }).n)).toEqual([0, 0, 0, 0]);
  });

  it("takes the new latest revision when a copy happened meanwhile", async () => {
    const at = await seedActivityTemplate();
    const w = await seedWorkTemplate({ activityTemplateIds: [at.id] });
    const created = await createWorkItem(context(), body([{ id: w.id }]), {
      beforeWrite: async (attempt) => {
        if (attempt === 1) await copyWorkTemplateRevision(w.id);
      },
    });
    expect(created.value.basedOn).toEqual([{ id: w.id, revision: 2 }]);
  });
});
