/**
 * Issue 37, export: every list that filters answers `format=csv|xlsx` with every match of the same
 * filter, in the same order, as the rows of its JSON answer (one column per field, nested names with
 * dots, property columns by definition name); cells that could start a formula are escaped; the file
 * streams page by page; bad input is a problem before any byte of a file.
 */
import { env, exports } from "cloudflare:workers";
import { Workbook } from "@cj-tech-master/excelts";
import { parseCsv } from "@cj-tech-master/excelts/csv";
import { describe, expect, it } from "vitest";
import { createPropertyDefinition } from "../support/factories/properties";
import { seedActivityTemplate } from "../support/factories/templates-sql";
import { createAsset, createDeviation, createDeviationType, createPlantTree, insertWorkItem, unique } from "../support/factories/work";
import { call, tokenFor } from "../support/http";
import { pagesOf } from "../../src/export";
import { listWorkItems } from "../../src/work-items/list";
import { deleteWorkItemStatements, insertWorkItemStatement } from "../../src/work-items/store";
import { createChannel } from "../measurements/support";
import { alarmsOf, pumpInAlarm } from "../monitors/alarm-support";

const GENERAL_TYPE = "00000000-0000-4000-8000-000000000001";
const XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

async function download(path: string, user?: { permissions: string[] }): Promise<Response> {
  const token = await tokenFor(user);
  return exports.default.fetch(new Request(`https://api.test${path}`, { headers: { authorization: `Bearer ${token}` } }));
}

/** The rows of a CSV export (the header first); the byte order mark is checked and dropped. */
async function csvRows(path: string): Promise<string[][]> {
  const response = await download(path);
  const bytes = new Uint8Array(await response.arrayBuffer());
  const text = new TextDecoder("utf-8", { ignoreBOM: true, fatal: false }).decode(bytes);
  expect(response.status, text).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/csv; charset=utf-8");
  expect(response.headers.get("content-disposition")).toMatch(/^attachment; filename="[a-z-]+-\d{4}-\d{2}-\d{2}\.csv"$/);
  expect(text.startsWith("\uFEFF")).toBe(true);
  return parseCsv(text.slice(1)) as string[][];
}

/** The rows of an XLSX export's one sheet, as typed cells (numbers stay numbers). */
async function xlsxRows(path: string): Promise<unknown[][]> {
  const response = await download(path);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe(XLSX);
  expect(response.headers.get("content-disposition")).toMatch(/\.xlsx"$/);
  const workbook = new Workbook();
  await workbook.xlsx.load(new Uint8Array(await response.arrayBuffer()));
  const rows: unknown[][] = [];
  workbook.worksheets[0]!.eachRow({ includeEmpty: true }, (row) => {
    const values = (row.values as unknown[]).slice(1);
    rows.push(values.map((v) => v ?? null));
  });
  return rows;
}

const column = (rows: readonly (readonly unknown[])[], header: string) => {
  const index = rows[0]!.indexOf(header);
  expect(index, `column ${header} in ${rows[0]!.join(",")}`).toBeGreaterThanOrEqual(0);
  return rows.slice(1).map((row) => row[index] ?? null);
};

/**
 * The list's JSON answer (`items` of the alarm board) holds the expected entities (the filter
 * works), and both files hold the same ids in the JSON answer's order.
 */
async function exportsMatch(path: string, expectedIds: readonly string[]) {
  const res = await call(path);
  expect(res.status, res.text).toBe(200);
  const answer = res.body as { id: string }[] | { items: { id: string }[] };
  const json = Array.isArray(answer) ? answer : answer.items;
  const ids = json.map((item) => item.id);
  expect([...ids].sort()).toEqual([...expectedIds].sort());
  const join = path.includes("?") ? "&" : "?";
  const csv = await csvRows(`${path}${join}format=csv`);
  const xlsx = await xlsxRows(`${path}${join}format=xlsx`);
  expect(column(csv, "id")).toEqual(ids);
  expect(column(xlsx, "id")).toEqual(ids);
  expect(xlsx[0]).toEqual(csv[0]);
  return { json, csv, xlsx };
}

describe("export: each list, the same rows as its JSON answer under a filter", () => {
  it("deviations: a property filter; fields flattened with dots, property columns by definition name", async () => {
    const severity = await createPropertyDefinition({ applicationRule: "Deviation", format: "integer" });
    // A definition named like a field is headed property:<name>.
    const status = await createPropertyDefinition({ applicationRule: "Deviation", name: "status" });
    const type = await createDeviationType({ propertyDefinitions: [{ id: severity.id }, { id: status.id }] });
    const tree = await createPlantTree();
    const deviation = (value: number, description: string) =>
      createDeviation({
        referenceId: unique("REF"),
        typeId: type.id,
        description,
        objectOwner: { id: "owner-9", name: "Otto" },
        assetReference: { equipment: { id: tree.equipment.id }, mainSystem: { id: tree.mainSystem.id } },
        properties: [
          { name: severity.name, value },
          { name: status.name, value: "-from the field" },
        ],
      });
    const worst = await deviation(5, '=HYPERLINK("http://x")');
    await deviation(1, "minor");
    const bad = await deviation(-4, "@SUM(A1)");
    // Of this test's type: `ne` also matches deviations without the property, which other test files sharing the runtime create.
    const query = new URLSearchParams({ typeIds: type.id, properties: `${severity.name} ne 1`, order: `properties.${severity.name} desc` });
    const filter = `/Deviations?${query.toString()}`;
    const { json, csv, xlsx } = await exportsMatch(filter, [worst.id, bad.id]);

    expect(csv[0]).toEqual(expect.arrayContaining(["referenceId", "objectOwner.id", "objectOwner.name", "assetReference.plant.id"]));
    expect(csv[0]).toEqual(expect.arrayContaining(["type.name", "relationships.id", "workItemIds", "metadata", "createdAt"]));
    expect(csv[0]).toContain(severity.name);
    expect(csv[0]).toContain("property:status");
    expect(csv[0]).toContain("status");
    expect(column(csv, "assetReference.plant.id")).toEqual([tree.plant.id, tree.plant.id]);
    expect(column(csv, "objectOwner.name")).toEqual(["Otto", "Otto"]);
    expect(column(csv, "createdAt")).toEqual(json.map((d) => (d as unknown as { createdAt: string }).createdAt));
    expect(column(csv, "createdAt")[0]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    // Property values: numbers stay numbers (-4 is not escaped); text that starts a formula is.
    expect(column(csv, severity.name)).toEqual(["5", "-4"]);
    expect(column(xlsx, severity.name)).toEqual([5, -4]);
    expect(column(csv, "property:status")).toEqual(["'-from the field", "'-from the field"]);
    // CSV injection: both formats escape the text cells, with one leading quote.
    expect(column(csv, "description")).toEqual(['\'=HYPERLINK("http://x")', "'@SUM(A1)"]);
    expect(column(xlsx, "description")).toEqual(['\'=HYPERLINK("http://x")', "'@SUM(A1)"]);
  });

  it("work items, activities and assets", async () => {
    const [a, b, c] = [
      await insertWorkItem({ status: "new" }),
      await insertWorkItem({ status: "new" }),
      await insertWorkItem({ status: "active" }),
    ];
    const items = await exportsMatch(`/WorkItems?ids=${a.id},${b.id},${c.id}&statuses=new&order=referenceId`, [a.id, b.id]);
    expect(items.json).toHaveLength(2);
    expect(column(items.csv, "id")).not.toContain(c.id);

    const template = await seedActivityTemplate();
    const first = (await call("/Activities", { method: "POST", body: { basedOn: { id: template.id }, workItemId: a.id } })).body;
    const second = (await call("/Activities", { method: "POST", body: { basedOn: { id: template.id }, workItemId: a.id } })).body;
    await call("/Activities", { method: "POST", body: { basedOn: { id: template.id }, workItemId: b.id } });
    const activities = await exportsMatch(`/Activities?workItemIds=${a.id}&order=createdAt`, [first.id, second.id]);
    expect(column(activities.csv, "basedOn.id")).toEqual([template.id, template.id]);
    expect(column(activities.xlsx, "basedOn.revision")).toEqual([first.basedOn.revision, second.basedOn.revision]);
    expect(column(activities.csv, "inputs.name")).toEqual(["input0; input1", "input0; input1"]);

    const tree = await createPlantTree();
    const extra = await createAsset("equipment", tree.mainSystem.id, { name: unique("+pump") });
    const assets = await exportsMatch(
      `/Assets?parentIds=${tree.mainSystem.id}&kinds=equipment&order=createdAt`,
      [tree.equipment, extra].map((x) => x.id),
    );
    expect(column(assets.csv, "name")).toEqual([tree.equipment.name, `'${extra.name}`]);
    expect(column(assets.csv, "parent.id")).toEqual([tree.mainSystem.id, tree.mainSystem.id]);
  });

  it("channels, alarms and the audit trail", async () => {
    const asset = (await createPlantTree()).equipment;
    const a = await createChannel({ assetId: asset.id, name: unique("=cmd|' /C calc'!A0"), nominalThickness: 12.5 });
    const b = await createChannel({ assetId: asset.id });
    await createChannel();
    const channels = await exportsMatch(`/Channels?assetIds=${asset.id}`, [a.id, b.id]);
    expect(column(channels.csv, "name")[0]).toBe(`'${a.name}`);
    expect(column(channels.xlsx, "nominalThickness")[0]).toBe(12.5);
    expect(column(channels.csv, "asset.id")).toEqual([asset.id, asset.id]);

    const { monitor, alarm } = await pumpInAlarm({});
    const alarms = await exportsMatch(`/Alarms?monitorIds=${monitor.id}`, [alarm.id]);
    expect(column(alarms.csv, "status")).toEqual([(await alarmsOf(monitor.id)).items[0]!.status]);

    const deviation = await createDeviation({ description: "-12 mm" });
    const read = (await call(`/Deviations/${deviation.id}`)).body;
    expect((await call("/Deviations", { method: "PUT", body: { ...read, description: "edited" } })).status).toBe(200);
    const trail = (await call(`/AuditTrail?entityIds=${deviation.id}`)).body as { sequence: string; action: string }[];
    expect(trail.map((entry) => entry.action)).toEqual(["updated", "created"]);
    const csv = await csvRows(`/AuditTrail?entityIds=${deviation.id}&format=csv`);
    expect(column(csv, "sequence")).toEqual(trail.map((entry) => entry.sequence));
    expect(column(csv, "actor.id")).toHaveLength(2);
    expect(csv[0]).toEqual(expect.arrayContaining(["changes.path", "changes.before", "changes.after", "before", "after"]));
    const xlsx = await xlsxRows(`/AuditTrail?entityIds=${deviation.id}&format=xlsx`);
    expect(column(xlsx, "sequence")).toEqual(trail.map((entry) => entry.sequence));
  });
});

describe("export: streaming and bad input", () => {
  it("streams a list of several pages page by page, every row once, in the JSON answer's order", async () => {
    const tag = unique("bulk");
    const count = 2_345;
    await seedWorkItems(tag, count);
    const path = `/WorkItems?searchText=${encodeURIComponent(tag)}&order=displayName`;
    const json: string[] = [];
    for (let skip = 0; skip < count; skip += 1000) {
      json.push(...(await call(`${path}&skip=${skip}&take=1000`)).body.map((w: { id: string }) => w.id));
    }
    expect(json).toHaveLength(count);

    const response = await download(`${path}&format=csv`);
    expect(response.status).toBe(200);
    // The answer is a stream: it is read in chunks, one or more per page of 1,000 rows.
    const reader = response.body!.getReader();
    const chunks: Uint8Array[] = [];
    for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    const rows = parseCsv((await new Blob(chunks).text()).replace(/^\uFEFF/, "")) as string[][];
    expect(column(rows, "id")).toEqual(json);

    const xlsx = await xlsxRows(`${path}&format=xlsx`);
    expect(column(xlsx, "id")).toEqual(json);
  });

  /** `count` work items named `{tag} {from + i}` (five digits), inserted in SQL; their ids in name order. */
  async function seedWorkItems(tag: string, count: number, from = 0) {
    const now = new Date().toISOString();
    const rows = Array.from({ length: count }, (_, i) => {
      const id = crypto.randomUUID();
      const fields = {
        id,
        display_name: `${tag} ${String(from + i).padStart(5, "0")}`,
        reference_id: `WI-${id.slice(0, 6)}`,
        status: "new",
      };
      const rest = { due_date: null, type_id: GENERAL_TYPE, owner_id: "owner-1", owner_name: "Olga", tags: "[]", metadata: null };
      return {
        id,
        statement: insertWorkItemStatement(env.DB, { ...fields, ...rest, etag: "seed", created_at: now, updated_at: now }, null),
      };
    });
    for (let i = 0; i < rows.length; i += 500) await env.DB.batch(rows.slice(i, i + 500).map((r) => r.statement));
    return rows.map((r) => r.id);
  }
  // The exporter reads a list by keyset (pagesOf): each page starts after the last row of the one
  // before. With an offset, a row added before it between two pages repeats a row, and a row deleted
  // before it skips one. pagesOf is driven here page by page, so the writes land between two pages.
  const exportPages = (tag: string, order: string) =>
    pagesOf({ searchText: tag, order }, (paged) => listWorkItems(env.DB, paged, new Date()));
  const idsOf = (page: readonly unknown[]) => page.map((w) => (w as { id: string }).id);

  it("reads by keyset: rows added before the last row read are not read, and none is read twice", async () => {
    const tag = unique("added");
    const ids = await seedWorkItems(tag, 2_500, 100); // names 00100 to 02599, in displayName order
    const pages = exportPages(tag, "displayName");
    const read = idsOf((await pages.next()).value ?? []);
    expect(read).toEqual(ids.slice(0, 1000));
    // 40 rows that sort before every row, and a row of a later page deleted.
    await seedWorkItems(tag, 40);
    await env.DB.batch(deleteWorkItemStatements(env.DB, ids[1500]!));
    for await (const page of pages) read.push(...idsOf(page));
    expect(read).toEqual(ids.filter((_, i) => i !== 1500));
  });

  it("reads by keyset: rows deleted before the last row read skip nothing after it", async () => {
    const tag = unique("gone");
    const ids = (await seedWorkItems(tag, 2_100)).reverse(); // displayName desc
    const pages = exportPages(tag, "displayName desc");
    const read = idsOf((await pages.next()).value ?? []);
    expect(read).toEqual(ids.slice(0, 1000));
    await env.DB.batch(ids.slice(0, 25).flatMap((id) => deleteWorkItemStatements(env.DB, id)));
    for await (const page of pages) read.push(...idsOf(page));
    expect(read).toEqual(ids);
  });

  it("answers a problem naming the parameter, and the permission, before any byte of a file", async () => {
    const format = await call("/Deviations?format=pdf");
    expect(format.status).toBe(400);
    expect(format.body.errors[0]).toMatchObject({ field: "query.format" });
    const filter = await call("/Deviations?format=csv&properties=" + encodeURIComponent("Nothing eq 1"));
    expect(filter.status).toBe(400);
    expect(filter.headers.get("content-type")).toContain("application/problem+json");
    expect(filter.body.errors[0]).toMatchObject({ field: "query.properties" });
    const forbidden = await download("/Deviations?format=csv", { permissions: [] });
    expect(forbidden.status).toBe(403);
  });
});
