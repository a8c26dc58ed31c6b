/**
 * Issue 37, "Import": POST /Imports dry-runs and commits a spreadsheet of deviations, row by row with
 * the rules of POST /Deviations, writes each row once, and reports per-row problems.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { createPropertyDefinition } from "../support/factories/properties";
import { createDeviationType } from "../support/factories/work";
import { base64, commitCsv, importCsv, waitForImport, xlsx } from "./support";

const unique = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;

describe("dry run", () => {
  it("proposes the mapping from the headers and lists every row's problems, writing nothing", async () => {
    const ref = unique("DR");
    const csv = `referenceId,description,status,Colour\r\n${ref}-1,Leak at flange,new,x\r\n${ref}-2,Corrosion,bogus,y\r\n`;
    const res = await importCsv(csv, { dryRun: true });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      dryRun: true,
      format: "csv",
      headers: ["referenceId", "description", "status", "Colour"],
      proposedMapping: { referenceId: "referenceId", description: "description", status: "status", Colour: null },
      total: 2,
      valid: 1,
      invalid: 1,
    });
    expect(res.body.problems).toEqual([expect.objectContaining({ row: 3, column: "status", field: "body.status", rule: "exists" })]);
    const listed = await call(`/Deviations?searchText=${ref}`);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body).toEqual([]);
  });
});

describe("commit", () => {
  it("writes the rows step by step (its runner's alarms), counts them, and writes each row once when committed twice", async () => {
    const ref = unique("CM");
    const csv = `referenceId,description\r\n${ref}-1,One\r\n${ref}-2,Two\r\n`;
    const done = await commitCsv(csv);
    expect(done).toMatchObject({ status: "completed", total: 2, processed: 2, created: 2, skipped: 0, failed: 0 });
    const again = await commitCsv(csv);
    expect(again).toMatchObject({ status: "completed", total: 2, created: 0, skipped: 2 });
    const rows = await call(`/Imports/${done.id}/Rows`);
    expect(rows.body.map((r: { row: number }) => r.row)).toEqual([2, 3]);
    const first = await call(`/Deviations/${rows.body[0].entityId}`);
    expect(first.body).toMatchObject({ referenceId: `${ref}-1`, description: "One" });
  });

  it("writes a chunk's rows together, and when one of them cannot be written the others still land, each with its own answer", async () => {
    const ref = unique("GR");
    const taken = await call("/Deviations", { method: "POST", body: { referenceId: `${ref}-taken`, description: "Already there" } });
    expect(taken.status, taken.text).toBe(201);
    // 60 rows: rows 11 and 41 name referenceIds that are taken (one before the import, one by row 31), so their batches fail.
    const lines = ["referenceId,description"];
    for (let i = 1; i <= 60; i++) {
      const referenceId = i === 11 ? `${ref}-taken` : i === 41 ? `${ref}-31` : `${ref}-${i}`;
      lines.push(`${referenceId},Wall loss ${i}`);
    }
    const done = await commitCsv(`${lines.join("\r\n")}\r\n`);
    expect(done).toMatchObject({ status: "completed", total: 60, created: 58, failed: 2 });
    const problems = await call(`/Imports/${done.id}/Problems`);
    expect(problems.body).toEqual([
      expect.objectContaining({ row: 12, column: "referenceId", field: "body.referenceId", rule: "unique" }),
      expect.objectContaining({ row: 42, column: "referenceId", field: "body.referenceId", rule: "unique" }),
    ]);
    const rows = (await call(`/Imports/${done.id}/Rows?take=100`)).body as { row: number; entityId: string }[];
    expect(rows).toHaveLength(58);
    const written = await call(`/Deviations?searchText=${ref}&take=100`);
    expect(written.body).toHaveLength(59);
    const thirty = await call(`/Deviations/${rows.find((r) => r.row === 31)!.entityId}`);
    expect(thirty.body).toMatchObject({ referenceId: `${ref}-30`, description: "Wall loss 30" });
    // Each row's event and its entry: one event per written deviation.
    const events = await env.DB.prepare(
      "SELECT count(*) AS n FROM outbox WHERE entity_kind = 'deviation' AND action = 'created' AND entity_id IN " +
        "(SELECT entity_id FROM import_rows WHERE import_id = ?1)",
    )
      .bind(done.id)
      .first<{ n: number }>();
    expect(events?.n).toBe(58);
  });

  it("relays the events of the rows it wrote without waiting for another write or the minute cron", async () => {
    const ref = unique("RL");
    const done = await commitCsv(`referenceId,description\r\n${ref}-1,One\r\n`);
    const [row] = (await call(`/Imports/${done.id}/Rows`)).body as { entityId: string }[];
    // Only reads from here on: the consumer that wrote the deviation relays its event itself.
    let dispatched: string | null = null;
    for (let i = 0; i < 100 && dispatched === null; i++) {
      const event = await env.DB.prepare("SELECT dispatched_at FROM outbox WHERE entity_kind = 'deviation' AND entity_id = ?1")
        .bind(row!.entityId)
        .first<{ dispatched_at: string | null }>();
      dispatched = event?.dispatched_at ?? null;
      if (dispatched === null) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(dispatched).not.toBeNull();
  });
});

describe("columns", () => {
  it("takes properties by definition name, owners by user name, and an id column as a replacement keeping the rest", async () => {
    const severity = await createPropertyDefinition({ applicationRule: "Deviation", format: "integer" });
    const note = await createPropertyDefinition({ applicationRule: "Deviation" });
    const type = await createDeviationType({ propertyDefinitions: [{ id: severity.id }, { id: note.id }] });
    const owner = { id: unique("olga"), name: unique("Olga Owner") };
    expect((await call("/Users/me", { user: owner })).status).toBe(200);
    const ref = unique("PR");
    const csv =
      `referenceId,typeId,objectOwner,${severity.name},property:${note.name},risk.id\r\n` +
      `${ref},${type.id},${owner.name},3,first note,R-1\r\n` +
      `${ref}-bad,${type.id},Nobody At All,three,x,\r\n`;
    const done = await commitCsv(csv);
    expect(done).toMatchObject({ status: "completed", created: 1, failed: 1 });
    expect(done.mapping).toMatchObject({ [severity.name]: `property:${severity.name}`, objectOwner: "objectOwner" });
    const problems = await call(`/Imports/${done.id}/Problems`);
    expect(problems.body).toEqual(
      expect.arrayContaining([expect.objectContaining({ row: 3, column: "objectOwner", field: "body.objectOwner", rule: "exists" })]),
    );
    const [written] = (await call(`/Imports/${done.id}/Rows`)).body;
    const created = (await call(`/Deviations/${written.entityId}`)).body;
    expect(created).toMatchObject({
      referenceId: ref,
      type: { id: type.id },
      objectOwner: owner,
      risk: { id: "R-1" },
      properties: [
        { name: severity.name, value: 3 },
        { name: note.name, value: "first note" },
      ],
    });

    // An exported row sent back with one column changed: that column changes, nothing else.
    const again = await commitCsv(`id,description,${severity.name}\r\n${created.id},Now described,5\r\n`);
    expect(again).toMatchObject({ status: "completed", created: 1, failed: 0 });
    const updated = (await call(`/Deviations/${created.id}`)).body;
    expect(updated).toMatchObject({
      ...created,
      description: "Now described",
      properties: [
        { name: severity.name, value: 5 },
        { name: note.name, value: "first note" },
      ],
      updatedAt: expect.any(String),
    });
  });

  it("a bad property value is a problem of its column, with the rule of the property dry run", async () => {
    const severity = await createPropertyDefinition({ applicationRule: "Deviation", format: "integer" });
    const type = await createDeviationType({ propertyDefinitions: [{ id: severity.id }] });
    const res = await importCsv(`typeId,${severity.name}\r\n${type.id},lots\r\n`, { dryRun: true });
    expect(res.status, res.text).toBe(200);
    expect(res.body.problems).toEqual([expect.objectContaining({ row: 2, column: severity.name, rule: "type" })]);
  });
});

describe("bad input", () => {
  it("a mapping naming a column the file lacks, or a target that is no field, is refused naming it; nothing is queued", async () => {
    const missing = await importCsv("description\r\nx\r\n", { mapping: { Title: "description" } });
    expect(missing.status, missing.text).toBe(400);
    expect(missing.body.errors).toEqual([expect.objectContaining({ field: "body.mapping.Title", rule: "exists" })]);
    const target = await importCsv("Notes\r\nx\r\n", { mapping: { Notes: "remarks" } });
    expect(target.status).toBe(400);
    expect(target.body.errors).toEqual([expect.objectContaining({ field: "body.mapping.Notes", rule: "enum" })]);
    const rowKey = await importCsv("description\r\nx\r\n", { rowKey: "Ref" });
    expect(rowKey.body.errors).toEqual([expect.objectContaining({ field: "body.rowKey", rule: "exists" })]);
  });

  it("a file that is not what its name says is refused", async () => {
    const zipNamedCsv = await call("/Imports", {
      method: "POST",
      body: { kind: "deviations", fileName: "register.csv", contentBase64: base64(xlsx([["description"], ["x"]])) },
    });
    expect(zipNamedCsv.status, zipNamedCsv.text).toBe(400);
    expect(zipNamedCsv.body.errors[0]).toMatchObject({ field: "body.fileName", rule: "format" });
    const csvNamedXlsx = await call("/Imports", {
      method: "POST",
      body: { kind: "deviations", fileName: "register.xlsx", content: "a,b\r\n1,2\r\n" },
    });
    expect(csvNamedXlsx.status).toBe(400);
    expect(csvNamedXlsx.body.errors[0]).toMatchObject({ field: "body.fileName", rule: "format" });
    const binary = await call("/Imports", {
      method: "POST",
      body: { kind: "deviations", fileName: "register.csv", contentBase64: base64(new Uint8Array([0x41, 0, 0xff, 0xfe])) },
    });
    expect(binary.status).toBe(400);
    const xls = await importCsv("a\r\n1\r\n", { fileName: "register.xls" });
    expect(xls.status).toBe(400);
  });

  it("formulas are problems of their rows (CSV text starting with =, an XLSX formula cell); an escaped '= is text", async () => {
    const csv = await importCsv(`description\r\n=cmd|' /C calc'!A0\r\n'=not a formula\r\n`, { dryRun: true });
    expect(csv.status, csv.text).toBe(200);
    expect(csv.body).toMatchObject({ total: 2, valid: 1, invalid: 1 });
    expect(csv.body.problems).toEqual([expect.objectContaining({ row: 2, column: "description", rule: "formula" })]);
    const workbook = xlsx([
      ["description", "status"],
      [{ formula: 'HYPERLINK("http://x")', value: "x" }, "new"],
      ["plain", "new"],
    ]);
    const res = await call("/Imports", {
      method: "POST",
      body: { kind: "deviations", fileName: "register.xlsx", contentBase64: base64(workbook), dryRun: true },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ format: "xlsx", total: 2, valid: 1 });
    expect(res.body.problems).toEqual([expect.objectContaining({ row: 2, column: "description", rule: "formula" })]);
  });

  it("a caller without the kind's write permission may not import", async () => {
    const res = await importCsv("description\r\nx\r\n", {}, { permissions: ["work_read"] });
    expect(res.status).toBe(403);
  });
});

describe("XLSX", () => {
  it("reads shared and inline strings and numbers of the first sheet, and commits like a CSV", async () => {
    const ref = unique("XL");
    for (const inline of [false, true]) {
      const workbook = xlsx(
        [
          ["referenceId", "description", "risk.id"],
          [`${ref}-${inline}-1`, "Shared & <escaped>", 42],
        ],
        { inline },
      );
      const res = await call("/Imports", {
        method: "POST",
        body: { kind: "deviations", fileName: "register.xlsx", contentBase64: base64(workbook) },
      });
      expect(res.status, res.text).toBe(202);
      const done = await waitForImport(res.body.id);
      expect(done).toMatchObject({ status: "completed", format: "xlsx", total: 1, created: 1 });
      const [row] = (await call(`/Imports/${done.id}/Rows`)).body;
      expect((await call(`/Deviations/${row.entityId}`)).body).toMatchObject({ description: "Shared & <escaped>", risk: { id: "42" } });
    }
  });
});
