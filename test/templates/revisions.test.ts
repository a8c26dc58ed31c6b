/**
 * The revision rules of spec section 3, as the issue reads them: per revision, in place while not in
 * use, copy as revision + 1 (every dependent once, ids kept) once in use; one guarded batch per write;
 * one writer per template; only the latest revision can be deleted, and only when not in use.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { assertStatement, isAssertionFailure } from "../../src/pkg/db";
import { revisionWriteStatements, WORK_TEMPLATE_KIND, type SqlValue } from "../../src/templates/revisions";
import { call } from "../support/http";
import {
  activityTemplateRows,
  baseActivityOn,
  baseWorkItemOn,
  createActivityTemplate,
  createWorkTemplate,
  putBody,
  useActivityTemplateInWorkItem,
  workTemplateRows,
} from "./factories";

const put = (body: unknown, headers?: Record<string, string>) =>
  call("/WorkTemplates", { method: "PUT", body, ...(headers ? { headers } : {}) });

describe("a revision no work item is based on is changed in place", () => {
  it("keeps revision 1 through PUT and every dependent route, with a new ETag each time", async () => {
    const wt = await createWorkTemplate();
    const extra = await createActivityTemplate();
    const etags = new Set([wt.etag]);
    const steps: [string, string, unknown][] = [
      ["PUT", "/WorkTemplates", putBody(wt, { displayName: "Renamed" })],
      ["POST", `/WorkTemplates/${wt.id}/ActivityTemplates`, { activityTemplateId: extra.id }],
      ["POST", `/WorkTemplates/${wt.id}/SectionTemplates`, { displayName: "Extra section" }],
      ["DELETE", `/WorkTemplates/${wt.id}/SectionTemplates/${wt.sectionTemplates[1].id}`, undefined],
      ["PUT", `/WorkTemplates/${wt.id}/SectionTemplates`, [{ displayName: "Only section" }]],
      ["PUT", `/WorkTemplates/${wt.id}/ActivityTemplates`, [{ activityTemplateId: extra.id }]],
    ];
    for (const [method, path, body] of steps) {
      const res = await call(path, { method, ...(body === undefined ? {} : { body }) });
      expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
      expect(res.body.revision).toBe(1);
      etags.add(res.headers.get("etag")!);
    }
    expect(etags.size).toBe(steps.length + 1);
    const rows = await workTemplateRows(wt.id);
    expect(rows.revisions).toHaveLength(1);
    expect(rows.sections.map((s) => s.display_name)).toEqual(["Only section"]);
    expect(rows.links.map((l) => l.activity_template_id)).toEqual([extra.id]);
  });
});

describe("once a work item is based on the latest revision", () => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- loose test bodies
  type Step = { name: string; request: (wt: Record<string, any>, extraId: string) => [string, string, unknown] };
  const steps: Step[] = [
    { name: "PUT /WorkTemplates", request: (wt) => ["PUT", "/WorkTemplates", putBody(wt, { displayName: "Changed" })] },
    {
      name: "PUT …/ActivityTemplates",
      request: (wt, extra) => [
        "PUT",
        `/WorkTemplates/${wt.id}/ActivityTemplates`,
        [...wt.activityTemplates, { activityTemplateId: extra }],
      ],
    },
    {
      name: "POST …/ActivityTemplates",
      request: (wt, extra) => ["POST", `/WorkTemplates/${wt.id}/ActivityTemplates`, { activityTemplateId: extra }],
    },
    {
      name: "PUT …/SectionTemplates",
      request: (wt) => ["PUT", `/WorkTemplates/${wt.id}/SectionTemplates`, [...wt.sectionTemplates, { displayName: "New" }]],
    },
    { name: "POST …/SectionTemplates", request: (wt) => ["POST", `/WorkTemplates/${wt.id}/SectionTemplates`, { displayName: "New" }] },
    {
      name: "DELETE …/SectionTemplates/{id}",
      request: (wt) => ["DELETE", `/WorkTemplates/${wt.id}/SectionTemplates/${wt.sectionTemplates[0].id}`, undefined],
    },
  ];

  it.each(steps)("$name copies the revision with its dependents as revision 2 and leaves revision 1 as it was", async ({ request }) => {
    const wt = await createWorkTemplate();
    const extra = await createActivityTemplate();
    await baseWorkItemOn(wt.id, 1);
    const before = await workTemplateRows(wt.id);
    const [method, path, body] = request(wt, extra.id);
    const res = await call(path, { method, ...(body === undefined ? {} : { body }) });
    expect(res.status, res.text).toBeLessThan(300);
    expect(res.body).toMatchObject({ id: wt.id, revision: 2, inUse: false });

    const after = await workTemplateRows(wt.id);
    expect(after.revisions.map((r) => [r.revision, r.is_latest])).toEqual([
      [1, 0],
      [2, 1],
    ]);
    // Revision 1 and its dependents are untouched but for is_latest.
    expect({ ...after.revisions[0], is_latest: 1 }).toEqual(before.revisions[0]);
    expect(after.sectionsOf(1)).toEqual(before.sectionsOf(1));
    expect(after.linksOf(1)).toEqual(before.linksOf(1));
    // The copy keeps the dependents' ids (apart from the change).
    const keptSections = before
      .sectionsOf(1)
      .map((s) => s.id)
      .filter((id) => method !== "DELETE" || id !== wt.sectionTemplates[0].id);
    expect(after.sectionsOf(2).map((s) => s.id)).toEqual(expect.arrayContaining(keptSections));
    expect(after.linksOf(2).map((l) => l.id)).toEqual(expect.arrayContaining(before.linksOf(1).map((l) => l.id)));

    const latest = await call(`/WorkTemplates/${wt.id}`);
    expect(latest.body.revision).toBe(2);
    const first = await call(`/WorkTemplates/${wt.id}?revision=1`);
    expect(first.body).toMatchObject({
      revision: 1,
      inUse: true,
      displayName: wt.displayName,
      sectionTemplates: wt.sectionTemplates,
      activityTemplates: wt.activityTemplates,
    });
  });

  it("20 concurrent PUTs create exactly one new revision, each dependent copied once, revision 1 untouched", async () => {
    const wt = await createWorkTemplate();
    await baseWorkItemOn(wt.id, 1);
    const before = await workTemplateRows(wt.id);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => put(putBody(wt, { displayName: `Edit ${i}` }))));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(results.map((r) => r.body.revision))).toEqual(new Set([2]));

    const after = await workTemplateRows(wt.id);
    expect(after.revisions.map((r) => r.revision)).toEqual([1, 2]);
    expect({ ...after.revisions[0], is_latest: 1 }).toEqual(before.revisions[0]);
    expect(after.sectionsOf(1)).toEqual(before.sectionsOf(1));
    expect(after.linksOf(1)).toEqual(before.linksOf(1));
    // Each dependent exactly once in the copy, with its id.
    expect(
      after
        .sectionsOf(2)
        .map((s) => s.id)
        .sort(),
    ).toEqual(
      before
        .sectionsOf(1)
        .map((s) => s.id)
        .sort(),
    );
    expect(
      after
        .linksOf(2)
        .map((l) => l.id)
        .sort(),
    ).toEqual(
      before
        .linksOf(1)
        .map((l) => l.id)
        .sort(),
    );
  });

  it("20 concurrent PUTs with one shared If-Match: exactly one succeeds, the others get 412", async () => {
    const wt = await createWorkTemplate();
    await baseWorkItemOn(wt.id, 1);
    const read = await call(`/WorkTemplates/${wt.id}`);
    const etag = read.headers.get("etag")!;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => put(putBody(wt, { displayName: `Edit ${i}` }), { "if-match": etag })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 412)).toHaveLength(19);
    expect(results.find((r) => r.status === 412)?.body.code).toBe("PreconditionFailed");
    const after = await workTemplateRows(wt.id);
    expect(after.revisions.map((r) => r.revision)).toEqual([1, 2]);
  });

  it("the same 20 PUTs with If-Match on a template not in use: one changes it in place, 19 get 412", async () => {
    const wt = await createWorkTemplate();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => put(putBody(wt, { displayName: `Edit ${i}` }), { "if-match": wt.etag })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 412)).toHaveLength(19);
    expect((await workTemplateRows(wt.id)).revisions).toHaveLength(1);
  });

  it("changes the copy in place until a work item is based on it too", async () => {
    const wt = await createWorkTemplate();
    await baseWorkItemOn(wt.id, 1);
    const second = await put(putBody(wt, { displayName: "v2" }));
    const again = await put(putBody(second.body, { displayName: "v2 again" }));
    expect(again.body.revision).toBe(2);
    await baseWorkItemOn(wt.id, 2);
    const third = await put(putBody(again.body, { displayName: "v3" }));
    expect(third.body.revision).toBe(3);
    expect((await workTemplateRows(wt.id)).revisions.map((r) => r.display_name)).toEqual([wt.displayName, "v2 again", "v3"]);
  });

  it("changes the ETag when the revision becomes in use, so a stale If-Match gets 412", async () => {
    const wt = await createWorkTemplate();
    await baseWorkItemOn(wt.id, 1);
    const read = await call(`/WorkTemplates/${wt.id}`);
    expect(read.body.inUse).toBe(true);
    expect(read.headers.get("etag")).not.toBe(wt.etag);
    expect((await put(putBody(wt), { "if-match": wt.etag })).status).toBe(412);
  });
});

describe("activity templates", () => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- loose test bodies
  type Step = { name: string; request: (at: Record<string, any>) => [string, string, unknown] };
  const steps: Step[] = [
    { name: "PUT /ActivityTemplates", request: (at) => ["PUT", "/ActivityTemplates", putBody(at, { displayName: "Changed" })] },
    {
      name: "PUT …/InputTemplates",
      request: (at) => ["PUT", `/ActivityTemplates/${at.id}/InputTemplates`, [...at.inputTemplates, { name: "extra", format: "integer" }]],
    },
    {
      name: "POST …/InputTemplates",
      request: (at) => ["POST", `/ActivityTemplates/${at.id}/InputTemplates`, { name: "extra", format: "boolean" }],
    },
    {
      name: "DELETE …/InputTemplates/{id}",
      request: (at) => ["DELETE", `/ActivityTemplates/${at.id}/InputTemplates/${at.inputTemplates[0].id}`, undefined],
    },
  ];

  it.each(steps)("$name changes revision 1 in place while no activity is based on it", async ({ request }) => {
    const at = await createActivityTemplate();
    const [method, path, body] = request(at);
    const res = await call(path, { method, ...(body === undefined ? {} : { body }) });
    expect(res.status, res.text).toBeLessThan(300);
    expect(res.body.revision).toBe(1);
    expect((await activityTemplateRows(at.id)).revisions).toHaveLength(1);
  });

  it.each(steps)("$name copies once an activity is based on the revision", async ({ request }) => {
    const at = await createActivityTemplate();
    await baseActivityOn(at.id, 1);
    const before = await activityTemplateRows(at.id);
    const [method, path, body] = request(at);
    const res = await call(path, { method, ...(body === undefined ? {} : { body }) });
    expect(res.status, res.text).toBeLessThan(300);
    expect(res.body.revision).toBe(2);
    const after = await activityTemplateRows(at.id);
    expect({ ...after.revisions[0], is_latest: 1 }).toEqual(before.revisions[0]);
    expect(after.inputsOf(1)).toEqual(before.inputsOf(1));
  });

  it("copies when a work item used the revision (work_item_activity_templates)", async () => {
    const at = await createActivityTemplate();
    await useActivityTemplateInWorkItem(at.id, 1);
    const res = await call("/ActivityTemplates", { method: "PUT", body: putBody(at, { displayName: "Changed" }) });
    expect(res.body.revision).toBe(2);
  });

  it("20 concurrent PUTs of an activity template in use create exactly one revision", async () => {
    const at = await createActivityTemplate();
    await baseActivityOn(at.id, 1);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call("/ActivityTemplates", { method: "PUT", body: putBody(at, { displayName: `Edit ${i}` }) })),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    const after = await activityTemplateRows(at.id);
    expect(after.revisions.map((r) => r.revision)).toEqual([1, 2]);
    expect(
      after
        .inputsOf(2)
        .map((i) => i.id)
        .sort(),
    ).toEqual(
      after
        .inputsOf(1)
        .map((i) => i.id)
        .sort(),
    );
  });
});

describe("DELETE deletes only the latest revision, and only when nothing was created from it", () => {
  it("refuses to delete a latest revision a work item is based on (409 InUse naming why)", async () => {
    const wt = await createWorkTemplate();
    await baseWorkItemOn(wt.id, 1);
    const res = await call(`/WorkTemplates/${wt.id}`, { method: "DELETE" });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("InUse");
    expect(res.body.detail).toMatch(/Revision 1 .* base of 1 work item/);
  });

  it("deletes revision 2 only; revision 1 (in use, never deletable) becomes the latest again, untouched", async () => {
    const wt = await createWorkTemplate();
    await baseWorkItemOn(wt.id, 1);
    await put(putBody(wt, { displayName: "v2", tags: ["v2-only"] }));
    const before = await workTemplateRows(wt.id);
    expect((await call(`/WorkTemplates/${wt.id}`, { method: "DELETE" })).status).toBe(204);
    const after = await workTemplateRows(wt.id);
    expect(after.revisions).toEqual([{ ...before.revisions[0], is_latest: 1 }]);
    expect(after.sections).toEqual(before.sectionsOf(1));
    const latest = await call(`/WorkTemplates/${wt.id}`);
    expect(latest.body).toMatchObject({ revision: 1, displayName: wt.displayName, tags: ["pump", "annual"] });
    // The older revision is in use, so the next DELETE is refused: there is no way to delete it.
    const again = await call(`/WorkTemplates/${wt.id}`, { method: "DELETE" });
    expect(again.status).toBe(409);
    expect((await call("/Tags?searchText=v2-only")).body).toEqual([]);
  });

  it("removes a template with no revision left (404 afterwards)", async () => {
    const wt = await createWorkTemplate();
    expect((await call(`/WorkTemplates/${wt.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/WorkTemplates/${wt.id}`)).status).toBe(404);
    expect((await workTemplateRows(wt.id)).sections).toEqual([]);
  });

  it("refuses to delete an activity template revision an activity is based on", async () => {
    const at = await createActivityTemplate();
    await baseActivityOn(at.id, 1);
    const res = await call(`/ActivityTemplates/${at.id}`, { method: "DELETE" });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("InUse");
  });

  it("refuses to delete the last revision of an activity template a work template lists", async () => {
    const wt = await createWorkTemplate();
    const res = await call(`/ActivityTemplates/${wt.activityTemplates[0].activityTemplateId}`, { method: "DELETE" });
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/listed by 1 work template/);
  });
});

describe("one batch per write", () => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- loose test bodies
  async function copyWrite(wt: Record<string, any>, extra: D1PreparedStatement[]) {
    const row = (await env.DB.prepare("SELECT * FROM work_templates WHERE id = ?1 AND is_latest = 1")
      .bind(wt.id)
      .first<Record<string, SqlValue>>())!;
    const read = { id: wt.id as string, revision: row.revision as number, etag: row.etag as string, inUse: true };
    return revisionWriteStatements(env.DB, WORK_TEMPLATE_KIND, read, {
      header: Object.fromEntries(
        WORK_TEMPLATE_KIND.columns.map((c) => [c, c === "display_name" ? "half-way" : c === "etag" ? "new-etag" : row[c]!]),
      ),
      dependentChanges: () => [],
      sideEffects: () => extra,
    });
  }

  it("a copy whose last statement fails leaves nothing of the copy", async () => {
    const wt = await createWorkTemplate();
    await baseWorkItemOn(wt.id, 1);
    const before = await workTemplateRows(wt.id);
    const statements = await copyWrite(wt, [assertStatement(env.DB, "0 = 1")]);
    expect(statements.length).toBeGreaterThan(4);
    const failure = await env.DB.batch(statements).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isAssertionFailure(failure)).toBe(true);
    expect(await workTemplateRows(wt.id)).toMatchObject({ revisions: before.revisions, sections: before.sections, links: before.links });
    expect((await call(`/WorkTemplates/${wt.id}`)).body.revision).toBe(1);
  });

  it("a second copy of the same revision is refused by the batch guard (revision + 1 exists)", async () => {
    const wt = await createWorkTemplate();
    await baseWorkItemOn(wt.id, 1);
    const first = await copyWrite(wt, []);
    const second = await copyWrite(wt, []);
    await env.DB.batch(first);
    const failure = await env.DB.batch(second).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isAssertionFailure(failure)).toBe(true);
    const rows = await workTemplateRows(wt.id);
    expect(rows.revisions).toHaveLength(2);
    expect(rows.sectionsOf(2)).toHaveLength(2);
  });

  it("an in-place write prepared before a work item was based on the revision fails as a whole", async () => {
    const wt = await createWorkTemplate();
    const row = (await env.DB.prepare("SELECT * FROM work_templates WHERE id = ?1").bind(wt.id).first<Record<string, SqlValue>>())!;
    const statements = revisionWriteStatements(
      env.DB,
      WORK_TEMPLATE_KIND,
      { id: wt.id, revision: 1, etag: row.etag as string, inUse: false },
      {
        header: Object.fromEntries(WORK_TEMPLATE_KIND.columns.map((c) => [c, c === "display_name" ? "raced" : row[c]!])),
        dependentChanges: () => [],
        sideEffects: () => [],
      },
    );
    await baseWorkItemOn(wt.id, 1);
    const failure = await env.DB.batch(statements).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isAssertionFailure(failure)).toBe(true);
    expect((await workTemplateRows(wt.id)).revisions[0]?.display_name).toBe(wt.displayName);
  });
});
