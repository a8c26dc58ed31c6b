/**
 * The whole revision story through the API only: templates, a work item instantiated from them, the
 * copies the next edits make, and what the work item keeps (spec section 3, rules 1–6).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { createActivityTemplate, inputTemplates, putBody, unique } from "../templates/factories";

async function created(path: string, body: unknown) {
  const res = await call(path, { method: "POST", body });
  expect(res.status, `POST ${path}: ${res.text}`).toBe(201);
  return res.body;
}

async function read(path: string) {
  const res = await call(path);
  expect(res.status, `GET ${path}: ${res.text}`).toBe(200);
  return { ...res.body, etag: res.headers.get("etag") };
}

describe("a work template's life through work items", () => {
  it("instantiates, freezes, copies and keeps the revisions each work item used", async () => {
    const activityTemplate = await createActivityTemplate({
      inputTemplates: [
        { name: "wall_thickness", displayName: "Wall thickness", format: "decimal", required: true },
        { name: "remarks", displayName: "Remarks", format: "text", required: false },
      ],
    });
    const template = await created("/WorkTemplates", {
      displayName: unique("Tank inspection"),
      tags: [unique("tank")],
      activityTemplates: [{ activityTemplateId: activityTemplate.id }],
    });
    expect(template.revision).toBe(1);

    // Rule 1: while nothing is based on it, a PUT changes revision 1 in place.
    const renamed = await call("/WorkTemplates", {
      method: "PUT",
      body: putBody(await read(`/WorkTemplates/${template.id}`), { displayName: "Tank inspection (v1)" }),
    });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.revision).toBe(1);

    // Rule 6: a work item based on the template gets its activities and inputs, and its tags.
    const workItem = await created("/WorkItems", { displayName: unique("Tank T-101 2026"), basedOn: [{ id: template.id }] });
    expect(workItem.basedOn).toEqual([{ id: template.id, revision: 1 }]);
    expect(workItem.tags).toEqual(template.tags);
    const activities = await call(`/Activities?basedOnIds=${activityTemplate.id}&take=1000`);
    const ofItem = activities.body.filter((a: { workItemId: string }) => a.workItemId === workItem.id);
    expect(ofItem).toHaveLength(1);
    expect(ofItem[0].basedOn).toEqual({ id: activityTemplate.id, revision: 1 });
    expect(ofItem[0].inputs.map((i: { name: string }) => i.name)).toEqual(["wall_thickness", "remarks"]);

    // Rule 2: the next PUT copies revision 1 to revision 2; revision 1 is untouched.
    const copied = await call("/WorkTemplates", {
      method: "PUT",
      body: putBody(await read(`/WorkTemplates/${template.id}`), { displayName: "Tank inspection (v2)" }),
    });
    expect(copied.status, copied.text).toBe(200);
    expect(copied.body.revision).toBe(2);
    expect((await read(`/WorkTemplates/${template.id}`)).displayName).toBe("Tank inspection (v2)");
    expect((await read(`/WorkTemplates/${template.id}?revision=1`)).displayName).toBe("Tank inspection (v1)");

    // Rule 3: the activity template is in use by the activity, so its next PUT copies it too.
    const atCopy = await call("/ActivityTemplates", {
      method: "PUT",
      body: putBody(await read(`/ActivityTemplates/${activityTemplate.id}`), { displayName: "Check shell v2" }),
    });
    expect(atCopy.status, atCopy.text).toBe(200);
    expect(atCopy.body.revision).toBe(2);

    // Rule 5: the work item keeps the revisions it used.
    const kept = await read(`/WorkItems/${workItem.id}`);
    expect(kept.basedOn).toEqual([{ id: template.id, revision: 1 }]);
    const used = await call(`/WorkItems/${workItem.id}/ActivityTemplates`);
    expect(used.status).toBe(200);
    expect(used.body.map((t: { id: string; revision: number }) => [t.id, t.revision])).toEqual([[activityTemplate.id, 1]]);
    // In the shape of GET /ActivityTemplates/{id}?revision=1, and no longer the latest.
    const { isLatest, ...usedRevision } = used.body[0];
    expect(isLatest).toBe(false);
    const { etag: _etag, ...revisionOne } = await read(`/ActivityTemplates/${activityTemplate.id}?revision=1`);
    expect(usedRevision).toEqual(revisionOne);

    // Activities join the work item only from the revision it used first.
    const fromLatest = await call("/Activities", {
      method: "POST",
      body: { displayName: "Extra check", basedOn: { id: activityTemplate.id, revision: 2 }, workItemId: workItem.id },
    });
    expect(fromLatest.status, fromLatest.text).toBe(400);
    const fromUsed = await created("/Activities", {
      displayName: "Extra check",
      basedOn: { id: activityTemplate.id },
      workItemId: workItem.id,
    });
    expect(fromUsed.basedOn).toEqual({ id: activityTemplate.id, revision: 1 });

    // A new work item is based on the latest revisions.
    const second = await created("/WorkItems", { displayName: unique("Tank T-102 2026"), basedOn: [{ id: template.id }] });
    expect(second.basedOn).toEqual([{ id: template.id, revision: 2 }]);

    // Rule 4: only the latest revision can be deleted, and only while nothing is based on it.
    const refused = await call(`/WorkTemplates/${template.id}`, { method: "DELETE" });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("InUse");
    expect(await call(`/WorkItems/${second.id}`, { method: "DELETE" })).toMatchObject({ status: 204 });
    expect(await call(`/WorkTemplates/${template.id}`, { method: "DELETE" })).toMatchObject({ status: 204 });
    // Revision 1 is the latest again, still in use by the first work item.
    expect((await read(`/WorkTemplates/${template.id}`)).revision).toBe(1);
    expect((await call(`/WorkTemplates/${template.id}`, { method: "DELETE" })).status).toBe(409);

    // Tags of work items and templates are listed together.
    const tags = await call("/Tags");
    expect(tags.status).toBe(200);
    expect(tags.body).toEqual(expect.arrayContaining(template.tags));
  });
});

describe("a large template", () => {
  it("instantiates 50 activity templates with 500 input templates in one write, and copies them on the next edit", async () => {
    const activityTemplates = [];
    for (let i = 0; i < 50; i++) activityTemplates.push(await createActivityTemplate({ inputTemplates: inputTemplates(10) }));
    const template = await created("/WorkTemplates", {
      displayName: unique("Refinery turnaround"),
      activityTemplates: activityTemplates.map((at) => ({ activityTemplateId: at.id })),
    });
    const workItem = await created("/WorkItems", { displayName: unique("Turnaround 2027"), basedOn: [{ id: template.id }] });
    const counts = await env.DB.prepare(
      `SELECT count(DISTINCT a.id) AS activities, count(i.input_template_id) AS inputs
         FROM activities a LEFT JOIN activity_inputs i ON i.activity_id = a.id WHERE a.work_item_id = ?1`,
    )
      .bind(workItem.id)
      .first<{ activities: number; inputs: number }>();
    expect(counts).toEqual({ activities: 50, inputs: 500 });

    const copied = await call("/WorkTemplates", {
      method: "PUT",
      body: putBody(await read(`/WorkTemplates/${template.id}`), { displayName: "Refinery turnaround v2" }),
    });
    expect(copied.status, copied.text).toBe(200);
    expect(copied.body.revision).toBe(2);
    expect(copied.body.activityTemplates).toHaveLength(50);
    expect((await read(`/WorkTemplates/${template.id}?revision=1`)).activityTemplates).toHaveLength(50);
  });
});
