/**
 * Issue 37, "Import" at size and under bad input: a file through an upload, a 1 MB cell, a million
 * empty rows, a zip bomb disguised as XLSX, restarts and second commits writing nothing twice, the
 * problems as a CSV to fix and send again, progress as server-sent events, the end as an event, and
 * /health answering while a large import runs.
 */
import { env } from "cloudflare:workers";
import { Zip, ZipDeflate, strToU8 } from "fflate";
import { describe, expect, it } from "vitest";
import type { ImportMessage } from "../../src/imports/service";
import { runImportStep } from "../../src/imports/run";
import { createLogger } from "../../src/pkg/logger";
import { call } from "../support/http";
import { outboxActions } from "../support/factories/types";
import { createDataType, rawCall, uploadFile } from "../support/factories/upload";
import { commitCsv, importCsv, waitForImport } from "./support";

const unique = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;

async function uploaded(name: string, content: Uint8Array | string): Promise<string> {
  const dataType = await createDataType();
  const res = await uploadFile(dataType.id, { name, content });
  return res.body.id as string;
}

describe("files through an upload", () => {
  it("a 1 MB cell is a problem of its row, the other rows import", async () => {
    const big = "x".repeat(1024 * 1024);
    const fileId = await uploaded("big.csv", `description,status\r\n"${big}",new\r\nsmall,new\r\n`);
    const res = await call("/Imports", { method: "POST", body: { kind: "deviations", fileId, dryRun: true } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ total: 2, valid: 1, invalid: 1 });
    expect(res.body.problems).toEqual([expect.objectContaining({ row: 2, column: "description", rule: "maxLength" })]);
  });

  it("a million empty rows are not rows: the file has the rows it has", async () => {
    const fileId = await uploaded("sparse.csv", `description\r\nfirst${"\r\n".repeat(1_000_000)},\r\nlast\r\n`);
    const res = await call("/Imports", { method: "POST", body: { kind: "deviations", fileId, dryRun: true } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ total: 2, valid: 2, invalid: 0 });
  });

  it("a zip bomb disguised as XLSX fails as a file, past the inflation bound, and writes nothing", async () => {
    // 48 MiB of spaces inside the worksheet (the tests' bound is 32 MiB; 256 by default): tens of KiB compressed.
    const parts: Uint8Array[] = [];
    const zip = new Zip((error, chunk) => {
      if (error) throw error;
      parts.push(chunk);
    });
    const add = (name: string, text: string) => {
      const file = new ZipDeflate(name, { level: 1 });
      zip.add(file);
      file.push(strToU8(text), true);
    };
    add("xl/workbook.xml", "<workbook/>");
    add("xl/sharedStrings.xml", "<sst/>");
    const sheet = new ZipDeflate("xl/worksheets/sheet1.xml", { level: 1 });
    zip.add(sheet);
    sheet.push(strToU8('<worksheet><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>description</t></is></c></row>'));
    const spaces = new Uint8Array(1024 * 1024).fill(0x20);
    for (let i = 0; i < 48; i++) sheet.push(spaces);
    sheet.push(strToU8("</sheetData></worksheet>"), true);
    zip.end();
    const bomb = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    parts.reduce((at, p) => (bomb.set(p, at), at + p.length), 0);
    expect(bomb.length).toBeLessThan(2 * 1024 * 1024);
    const fileId = await uploaded("bomb.xlsx", bomb);
    const res = await call("/Imports", { method: "POST", body: { kind: "deviations", fileId } });
    expect(res.status, res.text).toBe(202);
    const done = await waitForImport(res.body.id);
    expect(done).toMatchObject({ status: "failed", problem: { rule: "size" }, created: 0 });
  });
});

describe("exactly once", () => {
  it("a chunk run again, and a file sent again under the same import key and row key, write nothing twice", async () => {
    const ref = unique("EO");
    const first = `ref,referenceId,description\r\nA,${ref}-a,one\r\nB,${ref}-b,two\r\n`;
    const done = await commitCsv(first, { importKey: ref, rowKey: "ref" });
    expect(done).toMatchObject({ status: "completed", created: 2 });
    // A step runs again (a runner that died after writing, retried): nothing is counted or written twice.
    const log = createLogger("error");
    await runImportStep(env, { importId: done.id, step: "chunk", chunk: 0 } satisfies ImportMessage, log);
    expect((await call(`/Imports/${done.id}`)).body).toMatchObject({ created: 2, processed: 2 });
    // Interrupted and restarted with the rest: the rows already written are skipped.
    const rest = await commitCsv(`${first}C,${ref}-c,three\r\n`, { importKey: ref, rowKey: "ref" });
    expect(rest).toMatchObject({ status: "completed", total: 3, created: 1, skipped: 2 });
    const listed = await call(`/Deviations?searchText=${ref}&take=100`);
    expect(listed.body.map((d: { referenceId: string }) => d.referenceId).sort()).toEqual([`${ref}-a`, `${ref}-b`, `${ref}-c`]);
  });
});

describe("a row key twice in one file, chunks apart", () => {
  /** 250 deviations keyed by `ref`; row 240 (a data row of the third chunk) repeats row 12's key (the first chunk). */
  function twice(ref: string): string {
    const lines = ["ref,referenceId,description"];
    for (let i = 1; i <= 250; i++) lines.push(`${i === 239 ? 11 : i},${ref}-${i},Pitting at ${i}`);
    return `${lines.join("\r\n")}\r\n`;
  }

  it("is the second row's duplicate problem in a commit, as within a chunk, and not a row skipped", async () => {
    const ref = unique("DUP");
    const done = await commitCsv(twice(ref), { rowKey: "ref" });
    expect(done).toMatchObject({ status: "completed", total: 250, created: 249, skipped: 0, failed: 1 });
    const problems = await call<{ row: number; rule: string }[]>(`/Imports/${done.id}/Problems`);
    expect(problems.body.map((p) => [p.row, p.rule])).toEqual([[240, "duplicate"]]);
  });

  it("is the same problem in a queued dry run (over 1,000 rows), which writes nothing", async () => {
    const ref = unique("DRD");
    const lines = ["ref,referenceId,description"];
    for (let i = 1; i <= 1100; i++) lines.push(`${i === 1050 ? 7 : i},${ref}-${i},Pitting at ${i}`);
    const res = await importCsv(`${lines.join("\r\n")}\r\n`, { rowKey: "ref", dryRun: true });
    expect(res.status, res.text).toBe(202);
    const done = await waitForImport(res.body.id as string, 120_000);
    expect(done).toMatchObject({ status: "completed", dryRun: true, total: 1100, created: 1099, failed: 1 });
    const problems = await call<{ row: number; rule: string }[]>(`/Imports/${done.id}/Problems`);
    expect(problems.body.map((p) => [p.row, p.rule])).toEqual([[1051, "duplicate"]]);
    const listed = await call(`/Deviations?searchText=${ref}&take=1`);
    expect(listed.body).toEqual([]);
  });
});

describe("problems to fix and send again", () => {
  it("downloads the problem rows as CSV with the file's columns, which import once fixed", async () => {
    const ref = unique("FX");
    const done = await commitCsv(`referenceId,description,status\r\n${ref}-1,ok,new\r\n${ref}-2,=2+2,bogus\r\n`);
    expect(done).toMatchObject({ status: "completed", created: 1, failed: 1 });
    const csv = await rawCall(`/Imports/${done.id}/Problems?format=csv`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toContain("text/csv");
    const text = new TextDecoder().decode(csv.bytes);
    const [header, row] = text.split("\r\n");
    expect(header).toBe("referenceId,description,status,import:row,import:problems");
    // The formula cell comes back escaped ('=), so opening the file runs nothing.
    expect(row).toContain(`${ref}-2,"'=2+2",bogus,3,`);
    const fixed = text.replace(`"'=2+2"`, "two plus two").replace(",bogus,", ",new,");
    const again = await commitCsv(fixed);
    expect(again).toMatchObject({ status: "completed", created: 1, failed: 0 });
  });
});

describe("watching an import", () => {
  it("streams progress as server-sent events, ends with the import, and its end is an outbox event", async () => {
    const rows = Array.from({ length: 30 }, (_, i) => `${unique("SSE")}-${i},row ${i}`).join("\r\n");
    const res = await importCsv(`referenceId,description\r\n${rows}\r\n`);
    expect(res.status, res.text).toBe(202);
    const stream = await rawCall(`/Imports/${res.body.id}/Events`);
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    const text = new TextDecoder().decode(stream.bytes);
    expect(text).toContain("event: progress");
    const end = /event: end\ndata: (.*)\n/.exec(text);
    expect(JSON.parse(end![1]!)).toMatchObject({ id: res.body.id, status: "completed", created: 30 });
    expect(await outboxActions("import", res.body.id)).toEqual(["created", "updated"]);
  });

  it("health answers while a large import runs", async () => {
    const rows = Array.from({ length: 400 }, (_, i) => `${i},row ${i}`).join("\r\n");
    const fileId = await uploaded("large.csv", `n,description\r\n${rows}\r\n`);
    const res = await call("/Imports", { method: "POST", body: { kind: "deviations", fileId, rowKey: "n" } });
    expect(res.status, res.text).toBe(202);
    let answered = 0;
    for (;;) {
      const state = (await call(`/Imports/${res.body.id}`)).body;
      if (state.status === "completed") break;
      const started = Date.now();
      const health = await call("/health", { anonymous: true });
      expect(health.status).toBe(200);
      // A step is one chunk (100 rows); under the test pool a request waits at most for the step in progress.
      expect(Date.now() - started).toBeLessThan(10_000);
      if (state.status === "running") answered++;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(answered).toBeGreaterThan(0);
    expect((await call(`/Imports/${res.body.id}`)).body).toMatchObject({ total: 400, created: 400 });
  }, 300_000);
});
