/**
 * Issue 37, "Import" of work items: each row is the single request that creates a work item from its
 * work templates (POST /WorkItems, a template by id or by its name), or with an `id` replaces one
 * (PUT /WorkItems, the file's columns over the current work item); problems name the row, the column,
 * the field and the rule; the export of GET /WorkItems imports back.
 */
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

/** Commits a CSV of work items through the queue and waits for its end. */
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
    const ref = unique("WD");
    const csv =
      `referenceId,displayName,basedOn,status,dueDate,objectOwner\r\n` +
      `${ref}-1,Good one,${template.displayName},new,2026-12-01T08:00:00Z,\r\n` +
      `${ref}-2,Bad status,${template.id},bogus,,\r\n` +
      `${ref}-3,No such template,No Such Template At All,new,,\r\n` +
      `${ref}-4,Bad owner,,new,,Nobody At All\r\n` +
      `${ref}-5,Unknown template id,${crypto.randomUUID()},new,,\r\n` +
      `${ref}-6,,,new,,\r\n` +
      `${ref}-7,Bad date,,new,tomorrow-ish,\r\n`;
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
      total: 7,
      valid: 1,
      invalid: 6,
    });
    const byRow = (row: number) => res.body.problems.filter((p: { row: number }) => p.row === row);
    expect(byRow(2)).toEqual([]);
    expect(byRow(3)).toEqual([expect.objectContaining({ column: "status", field: "body.status", rule: "exists" })]);
    expect(byRow(4)).toEqual([expect.objectContaining({ column: "basedOn", field: "body.basedOn.0.id", rule: "exists" })]);
    expect(byRow(5)).toEqual([expect.objectContaining({ column: "objectOwner", field: "body.objectOwner", rule: "exists" })]);
    expect(byRow(6)).toEqual([expect.objectContaining({ column: "basedOn", field: "body.basedOn.0.id", rule: "exists" })]);
    expect(byRow(7)).toEqual([expect.objectContaining({ column: "displayName", field: "body.displayName" })]);
    expect(byRow(8)).toEqual([expect.objectContaining({ column: "dueDate", field: "body.dueDate" })]);
    expect(await searched(ref)).toEqual([]);
  });
});

describe("commit", () => {
  it("creates work items from templates (by id or name) through the queue, once, however often the file is committed", async () => {
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
