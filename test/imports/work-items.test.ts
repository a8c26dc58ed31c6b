/**
 * Issue 37, "Import" of work items: each row is the single request that creates a work item from its
 * work templates (POST /WorkItems, a template by id or by its name), or with an `id` replaces one
 * (PUT /WorkItems, the file's columns over the current work item); problems name the row, the column,
 * the field and the rule; the export of GET /WorkItems imports back.
 */
import Papa from "papaparse";
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { createPropertyDefinition } from "../support/factories/properties";
import { createEntityType } from "../support/factories/types";
import { createAsset } from "../support/factories/work";
import { createActivityTemplate } from "../templates/factories";
import { importCsv, waitForImport } from "./support";

const unique = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
const KIND = { kind: "workItems" };

/** A work template (through the API) with `activities` activity templates. */
async function workTemplate(activities = 1, tags: string[] = []) {
  const templates = await Promise.all(Array.from({ length: activities }, () => createActivityTemplate()));
  const res = await call("/WorkTemplates", {
    method: "POST",
    body: {
      displayName: unique("Pump service"),
      tags,
      activityTemplates: templates.map((t) => ({ activityTemplateId: t.id })),
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; displayName: string; revision: number };
}

/** Commits a CSV of work items step by step (its runner's alarms) and waits for its end. */
async function commit(csv: string) {
  const res = await importCsv(csv, KIND);
  expect(res.status, res.text).toBe(202);
  return waitForImport(res.body.id);
}

async function rowsOf(importId: string): Promise<{ row: number; entityId: string }[]> {
  const res = await call(`/Imports/${importId}/Rows`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const searched = async (text: string) => {
  const res = await call(`/WorkItems?searchText=${encodeURIComponent(text)}`);
  expect(res.status, res.text).toBe(200);
  return res.body as { id: string; referenceId: string }[];
};

describe("dry run", () => {
  it("checks every row as POST /WorkItems would, lists each row's problems with its column, and writes nothing", async () => {
    const template = await workTemplate();
    const twins = await Promise.all([workTemplate(), workTemplate()]);
    const renamed = await call(`/WorkTemplates/${twins[1].id}`, { method: "GET" });
    const shared = twins[0].displayName;
    const put = await call("/WorkTemplates", { method: "PUT", body: { ...renamed.body, displayName: shared } });
    expect(put.status, put.text).toBe(200);
    const depth = await createPropertyDefinition({ applicationRule: "WorkItem", format: "integer" });
    const type = await createEntityType({ appliesTo: null, propertyDefinitions: [{ id: depth.id }] });
    const ref = unique("WD");
    const csv =
      `referenceId,displayName,basedOn,status,dueDate,objectOwner\r\n` +
      `${ref}-1,Good one,${template.displayName},new,2026-12-01T08:00:00Z,\r\n` +
      `${ref}-2,Bad status,${template.id},bogus,,\r\n` +
      `${ref}-3,No such template,No Such Template At All,new,,\r\n` +
      `${ref}-4,Bad owner,,new,,Nobody At All\r\n` +
      `${ref}-5,Unknown template id,${crypto.randomUUID()},new,,\r\n` +
      `${ref}-6,,,new,,\r\n` +
      `${ref}-7,Bad date,,new,tomorrow-ish,\r\n` +
      `${ref}-8,Twins,${shared.toUpperCase()},new,,\r\n`;
    const res = await importCsv(csv, { ...KIND, dryRun: true });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      kind: "workItems",
      proposedMapping: {
        referenceId: "referenceId",
        displayName: "displayName",
        basedOn: "basedOn",
        status: "status",
        dueDate: "dueDate",
        objectOwner: "objectOwner",
      },
      total: 8,
      valid: 1,
      invalid: 7,
    });
    const byRow = (row: number) => res.body.problems.filter((p: { row: number }) => p.row === row);
    expect(byRow(2)).toEqual([]);
    expect(byRow(3)).toEqual([expect.objectContaining({ column: "status", field: "body.status", rule: "exists" })]);
    expect(byRow(4)).toEqual([expect.objectContaining({ column: "basedOn", field: "body.basedOn.0.id", rule: "exists" })]);
    expect(byRow(5)).toEqual([expect.objectContaining({ column: "objectOwner", field: "body.objectOwner", rule: "exists" })]);
    expect(byRow(6)).toEqual([expect.objectContaining({ column: "basedOn", field: "body.basedOn.0.id", rule: "exists" })]);
    expect(byRow(7)).toEqual([expect.objectContaining({ column: "displayName", field: "body.displayName" })]);
    expect(byRow(8)).toEqual([expect.objectContaining({ column: "dueDate", field: "body.dueDate" })]);
    expect(byRow(9)).toEqual([expect.objectContaining({ column: "basedOn", field: "body.basedOn.0.id", rule: "ambiguous" })]);

    // Properties by definition name and assets by id, checked by the request's own rules, each problem in its column.
    const typed = await importCsv(
      `displayName,typeId,${depth.name},designations\r\n` +
        `${ref}-9,${type.id},lots,\r\n` +
        `${ref}-10,${type.id},4,${crypto.randomUUID()}\r\n` +
        `${ref}-11,${type.id},4,\r\n`,
      { ...KIND, dryRun: true },
    );
    expect(typed.status, typed.text).toBe(200);
    expect(typed.body).toMatchObject({ total: 3, valid: 1, invalid: 2 });
    expect(typed.body.problems).toEqual([
      expect.objectContaining({ row: 2, column: depth.name, field: expect.stringMatching(/^body\.properties/), rule: "type" }),
      expect.objectContaining({ row: 3, column: "designations", field: "body.designations.0.id", rule: "exists" }),
    ]);
    expect(await searched(ref)).toEqual([]);
  });
});

describe("commit", () => {
  it("creates work items from templates (by id or name) by its runner's alarms, once, however often the file is committed", async () => {
    const [first, second] = await Promise.all([workTemplate(2, ["pump"]), workTemplate(1)]);
    const depth = await createPropertyDefinition({ applicationRule: "WorkItem", format: "integer" });
    const type = await createEntityType({ appliesTo: null, propertyDefinitions: [{ id: depth.id }] });
    const owner = { id: unique("oscar"), name: unique("Oscar Owner") };
    expect((await call("/Users/me", { user: owner })).status).toBe(200);
    const plant = await createAsset("plant");
    const ref = unique("WC");
    const csv =
      `referenceId,displayName,basedOn,typeId,objectOwner,designations,tags,${depth.name}\r\n` +
      `${ref}-1,Service P-101,${first.displayName}; ${second.id},${type.id},${owner.name},${plant.id},annual; rotating,7\r\n` +
      `${ref}-2,Service P-102,${second.displayName},,,,,\r\n`;
    const done = await commit(csv);
    expect(done, JSON.stringify((await call(`/Imports/${done.id}/Problems`)).body)).toMatchObject({
      status: "completed",
      kind: "workItems",
      total: 2,
      created: 2,
      skipped: 0,
      failed: 0,
    });
    const rows = await rowsOf(done.id);
    expect(rows.map((r) => r.row)).toEqual([2, 3]);
    const made = (await call(`/WorkItems/${rows[0]!.entityId}`)).body;
    expect(made).toMatchObject({
      referenceId: `${ref}-1`,
      displayName: "Service P-101",
      typeId: type.id,
      objectOwner: owner,
      basedOn: [
        { id: first.id, revision: first.revision },
        { id: second.id, revision: second.revision },
      ],
      designations: [expect.objectContaining({ id: plant.id })],
      tags: ["annual", "rotating", "pump"],
      properties: [{ name: depth.name, value: 7 }],
    });
    // The templates were instantiated as the request does: one activity per activity template.
    const activities = await call(`/WorkItems/${made.id}/Activities`);
    expect(activities.status, activities.text).toBe(200);
    expect(activities.body).toHaveLength(3);
    // The second row defaults its owner to the importer.
    expect((await call(`/WorkItems/${rows[1]!.entityId}`)).body.objectOwner.id).toBe("00000000-0000-4000-8000-00000000aaaa");

    const again = await commit(csv);
    expect(again).toMatchObject({ status: "completed", total: 2, created: 0, skipped: 2, failed: 0 });
    expect(await searched(ref)).toHaveLength(2);
  });
});

describe("replacement by id", () => {
  it("replaces the work item an id names with the file's columns over it; templates new in basedOn are instantiated", async () => {
    const [first, second] = await Promise.all([workTemplate(1), workTemplate(2)]);
    const note = await createPropertyDefinition({ applicationRule: "WorkItem" });
    const type = await createEntityType({ appliesTo: null, propertyDefinitions: [{ id: note.id }] });
    const ref = unique("WR");
    const created = await call("/WorkItems", {
      method: "POST",
      body: {
        displayName: "Before",
        referenceId: ref,
        typeId: type.id,
        tags: ["kept"],
        dueDate: "2026-12-01T08:00:00Z",
        basedOn: [{ id: first.id }],
        properties: [{ name: note.name, value: "kept note" }],
      },
    });
    expect(created.status, created.text).toBe(201);
    const before = created.body;

    const done = await commit(`id,displayName,basedOn\r\n${before.id},After,${first.id}; ${second.displayName}\r\n`);
    expect(done).toMatchObject({ status: "completed", created: 1, failed: 0 });
    const after = (await call(`/WorkItems/${before.id}`)).body;
    expect(after).toEqual({
      ...before,
      displayName: "After",
      basedOn: [
        { id: first.id, revision: first.revision },
        { id: second.id, revision: second.revision },
      ],
      updatedAt: expect.any(String),
    });
    expect((await call(`/WorkItems/${before.id}/Activities`)).body).toHaveLength(3);
    expect(await searched(ref)).toHaveLength(1);

    // The rules of PUT: a template instantiated stays in basedOn; an id that names no work item is a problem of its column.
    const res = await importCsv(`id,basedOn\r\n${before.id},${second.id}\r\n${crypto.randomUUID()},${first.id}\r\nnot-an-id,\r\n`, {
      ...KIND,
      dryRun: true,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ total: 3, valid: 0, invalid: 3 });
    expect(res.body.problems).toEqual([
      expect.objectContaining({ row: 2, column: "basedOn", field: "body.basedOn", rule: "instantiated" }),
      expect.objectContaining({ row: 3, column: "id", field: "body.id", rule: "exists" }),
      expect.objectContaining({ row: 4, column: "id", field: "body.id", rule: "uuid" }),
    ]);
    expect((await call(`/WorkItems/${before.id}`)).body).toEqual(after);
  });
});

describe("permissions", () => {
  it("a caller without work_write may neither dry-run nor commit work items: 403 for the whole import", async () => {
    const reader = { permissions: ["work_read"] };
    for (const dryRun of [true, false]) {
      const res = await importCsv(`displayName\r\n${unique("Refused")}\r\n`, { ...KIND, dryRun }, reader);
      expect(res.status, res.text).toBe(403);
    }
  });
});

describe("round trip", () => {
  it("an export of GET /WorkItems imports back: a changed column lands, nothing else changes", async () => {
    const template = await workTemplate(1, ["pump"]);
    const depth = await createPropertyDefinition({ applicationRule: "WorkItem", format: "integer" });
    const type = await createEntityType({ appliesTo: null, propertyDefinitions: [{ id: depth.id }] });
    const plant = await createAsset("plant");
    const ref = unique("WT");
    const made = await Promise.all(
      [1, 2].map((n) =>
        call("/WorkItems", {
          method: "POST",
          body: {
            displayName: `${ref} item ${n}`,
            referenceId: `${ref}-${n}`,
            typeId: type.id,
            tags: ["exported", "-starts with a dash"],
            dueDate: "2026-12-01T08:00:00Z",
            objectOwner: { id: "owner-1", name: "Owen Owner" },
            basedOn: [{ id: template.id }],
            designations: [{ id: plant.id }],
            metadata: { source: "round trip", n },
            properties: [{ name: depth.name, value: n }],
          },
        }),
      ),
    );
    for (const res of made) expect(res.status, res.text).toBe(201);
    const before = await Promise.all(made.map(async (res) => (await call(`/WorkItems/${res.body.id}`)).body));

    const exported = await call(`/WorkItems?searchText=${ref}&format=csv`);
    expect(exported.status, exported.text).toBe(200);
    const [headers, ...rows] = Papa.parse<string[]>(exported.text.replace(/^\uFEFF/, ""), { skipEmptyLines: true }).data;
    expect(rows).toHaveLength(2);
    const displayName = headers!.indexOf("displayName");
    rows.find((row) => row[headers!.indexOf("id")] === before[0].id)![displayName] = `${ref} item 1, renamed`;
    const csv = Papa.unparse([headers!, ...rows]);

    // Every column of the export is either imported or read-only (proposed as null), and every row is valid as it is.
    const dry = await importCsv(csv, { ...KIND, dryRun: true });
    expect(dry.status, dry.text).toBe(200);
    expect(dry.body).toMatchObject({ total: 2, valid: 2, invalid: 0 });
    const notImported = Object.entries(dry.body.proposedMapping as Record<string, string | null>)
      .filter(([, target]) => target === null)
      .map(([header]) => header)
      .sort();
    expect(notImported).toEqual(
      expect.arrayContaining(["basedOn.revision", "createdAt", "designations.kind", "designations.name", "deviationIds", "updatedAt"]),
    );
    expect(dry.body.proposedMapping).toMatchObject({
      id: "id",
      "objectOwner.id": "objectOwner.id",
      "basedOn.id": "basedOn",
      "designations.id": "designations",
      [depth.name]: `property:${depth.name}`,
    });

    const done = await commit(csv);
    expect(done).toMatchObject({ status: "completed", total: 2, created: 1, skipped: 1, failed: 0 });
    const after = await Promise.all(before.map(async (item) => (await call(`/WorkItems/${item.id}`)).body));
    expect(after[0]).toEqual({ ...before[0], displayName: `${ref} item 1, renamed`, updatedAt: expect.any(String) });
    // The row not edited writes nothing: the same work item, the same version.
    expect(after[1]).toEqual(before[1]);
    for (const item of after) expect((await call(`/WorkItems/${item.id}/Activities`)).body).toHaveLength(1);
  });
});
