/**
 * Issue 37, "Import", kind `propertyValues`: each row sets properties of one existing deviation (by id
 * or referenceId) as PUT /Deviations with those properties would, typed by the definitions' formats
 * (classifications by element name) and checked by the property dry run's rules; nothing else changes.
 */
import Papa from "papaparse";
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { createClassification, createPropertyDefinition } from "../support/factories/properties";
import { createDeviation, createDeviationType, unique } from "../support/factories/work";
import { commitCsv, importCsv } from "./support";

const kind = { kind: "propertyValues" };

/** A deviation type with an integer, a classification (Low, High) and a text property, and two deviations of it. */
async function setUp() {
  const classification = await createClassification([{ name: "Low" }, { name: "High" }]);
  const severity = await createPropertyDefinition({ format: "integer" });
  const grade = await createPropertyDefinition({ format: "classification", classification: { id: classification.id } });
  const note = await createPropertyDefinition();
  const type = await createDeviationType({ propertyDefinitions: [{ id: severity.id }, { id: grade.id }, { id: note.id }] });
  const make = (ref: string) =>
    createDeviation({
      referenceId: ref,
      typeId: type.id,
      properties: [
        { name: severity.name, value: 1 },
        { name: grade.name, value: "Low" },
        { name: note.name, value: "kept" },
      ],
    });
  const ref = unique("PV");
  const first = await make(`${ref}-1`);
  const second = await make(`${ref}-2`);
  return { ref, severity, grade, note, type, first, second };
}

const read = async (id: string) => (await call(`/Deviations/${id}`)).body;

describe("propertyValues", () => {
  it("dry run: each row's problems by row, column, field and rule; nothing written", async () => {
    const { ref, severity, grade, first, second } = await setUp();
    const before = [await read(first.id), await read(second.id)];
    const csv =
      `id,referenceId,${severity.name},${grade.name}\r\n` +
      `${first.id},,5,High\r\n` +
      `,${ref}-2,lots,High\r\n` +
      `,${ref}-2,3,Medium\r\n` +
      `,${ref}-none,3,High\r\n` +
      `${crypto.randomUUID()},,3,High\r\n` +
      `,,3,High\r\n`;
    const res = await importCsv(csv, { ...kind, dryRun: true });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      kind: "propertyValues",
      proposedMapping: { id: "id", referenceId: "referenceId", [severity.name]: `property:${severity.name}` },
      total: 6,
      valid: 1,
      invalid: 5,
    });
    expect(res.body.problems).toEqual([
      expect.objectContaining({ row: 3, column: severity.name, rule: "type" }),
      expect.objectContaining({ row: 4, column: grade.name, rule: "classificationElement" }),
      expect.objectContaining({ row: 5, column: "referenceId", field: "body.referenceId", rule: "exists" }),
      expect.objectContaining({ row: 6, column: "id", field: "body.id", rule: "exists" }),
      expect.objectContaining({ row: 7, column: "id", field: "body.id", rule: "required" }),
    ]);
    expect([await read(first.id), await read(second.id)]).toEqual(before);
  });

  it("commit: sets the given properties (classifications by element name), keeps the rest, once when committed twice", async () => {
    const { ref, severity, grade, note, first, second } = await setUp();
    const before = await read(second.id);
    const csv = `referenceId,${severity.name},${grade.name}\r\n${ref}-1,7,High\r\n${ref}-2,,\r\n`;
    const done = await commitCsv(csv, kind);
    expect(done).toMatchObject({ kind: "propertyValues", status: "completed", total: 2, created: 2, failed: 0 });
    expect((await read(first.id)).properties).toEqual([
      { name: severity.name, value: 7 },
      { name: grade.name, value: "High" },
      { name: note.name, value: "kept" },
    ]);
    // Empty cells clear those properties, as PUT /Deviations with null values does.
    const cleared = await read(second.id);
    expect(cleared).toEqual({
      ...before,
      properties: [
        { name: severity.name, value: null },
        { name: grade.name, value: null },
        { name: note.name, value: "kept" },
      ],
      updatedAt: expect.any(String),
    });
    const rows = (await call(`/Imports/${done.id}/Rows`)).body as { entityId: string }[];
    expect(rows.map((r) => r.entityId)).toEqual([first.id, second.id]);

    const written = await read(first.id);
    const again = await commitCsv(csv, kind);
    expect(again).toMatchObject({ status: "completed", created: 0, skipped: 2 });
    expect(await read(first.id)).toEqual(written);
  });

  it("a caller without work_write may not import property values (403)", async () => {
    const { first, severity } = await setUp();
    const csv = `id,${severity.name}\r\n${first.id},9\r\n`;
    const res = await importCsv(csv, kind, { permissions: ["work_read", "assets_read", "assets_write"] });
    expect(res.status, res.text).toBe(403);
    expect((await read(first.id)).properties[0]).toEqual({ name: severity.name, value: 1 });
  });

  it("round trip: an exported deviation list, one property changed and imported back: only that property changes", async () => {
    const { ref, severity, grade, note, first, second } = await setUp();
    const list = async () => (await call(`/Deviations?searchText=${ref}&order=referenceId`)).body as { id: string }[];
    const before = await list();
    expect(before.map((d) => d.id)).toEqual([first.id, second.id]);
    const exported = await call(`/Deviations?searchText=${ref}&order=referenceId&format=csv`);
    expect(exported.status, exported.text).toBe(200);
    const rows = Papa.parse<string[]>(exported.text.replace(/^\uFEFF/, ""), { skipEmptyLines: true }).data;
    const at = rows[0]!.indexOf(note.name);
    expect(at).toBeGreaterThan(-1);
    expect(rows[1]![at]).toBe("kept");
    rows[1]![at] = "edited";
    const edited = Papa.unparse(rows, { newline: "\r\n" });

    const done = await commitCsv(edited, { ...kind, fileName: "deviations.csv" });
    expect(done, JSON.stringify((await call(`/Imports/${done.id}/Problems`)).body)).toMatchObject({
      status: "completed",
      total: 2,
      created: 1,
      skipped: 1,
      failed: 0,
    });
    expect(done.mapping).toMatchObject({ id: "id", referenceId: "referenceId", description: null, [note.name]: `property:${note.name}` });
    const after = await list();
    expect(after[0]).toEqual({
      ...before[0],
      properties: [
        { name: severity.name, value: 1 },
        { name: grade.name, value: "Low" },
        { name: note.name, value: "edited" },
      ],
      updatedAt: expect.any(String),
    });
    // The row not edited writes nothing: the same deviation, the same version.
    expect(after[1]).toEqual(before[1]);
  });
});
