/**
 * Issue 37, "Import": POST /Imports dry-runs and commits a spreadsheet of deviations, row by row with
 * the rules of POST /Deviations, writes each row once, and reports per-row problems.
 */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { commitCsv, importCsv } from "./support";

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
  it("writes the rows through the queue, counts them, and writes each row once when committed twice", async () => {
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
});
