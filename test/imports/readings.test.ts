/**
 * Issue 37, "Import", kind `readings`: a contractor's thickness survey imported row by row with the
 * rules of POST /signals (the channel by number or id, the timestamp, the value, the unit), each reading
 * written once per channel and timestamp, per-row problems naming row, column, field and rule.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { rowContext, type Column } from "../../src/imports/kinds/kind";
import { readings } from "../../src/imports/kinds/readings";
import { importRowStatement, writtenRows } from "../../src/imports/store";
import type { WriteContext } from "../../src/pkg/db";
import { ApiError } from "../../src/pkg/errors";
import { call } from "../support/http";
import { at, BUILT_IN, createChannel } from "../measurements/support";
import { base64, importCsv, waitForImport, xlsx } from "./support";

const importReadings = (content: string, extra: Record<string, unknown> = {}, user?: { permissions: string[] }) =>
  importCsv(content, { kind: "readings", fileName: "survey.csv", ...extra }, user);

async function commitReadings(content: string, extra: Record<string, unknown> = {}) {
  const res = await importReadings(content, extra);
  expect(res.status, res.text).toBe(202);
  return waitForImport(res.body.id);
}

async function readingsOf(channelId: string): Promise<{ timestamp: number; value: number }[]> {
  const res = await call(`/Channels/${channelId}/Readings`);
  expect(res.status, res.text).toBe(200);
  return res.body.readings.map((r: { timestamp: number; value: number }) => ({ timestamp: r.timestamp, value: r.value }));
}

describe("readings: dry run", () => {
  it("checks every row as POST /signals would, naming each bad cell's row, column, field and rule; writes nothing", async () => {
    const ch = await createChannel();
    const csv =
      "channelNumber,timestamp,value,Inspector\r\n" +
      `${ch.channelNumber},2025-03-01T10:00:00Z,12.5,Ann\r\n` +
      `${ch.channelNumber},2025-03-02T10:00:00Z,thin,Ann\r\n` +
      `${ch.channelNumber},last tuesday,12.4,Ann\r\n` +
      `2000000000,2025-03-03T10:00:00Z,12.3,Ann\r\n` +
      `${ch.channelNumber},2025-03-04T10:00:00Z,12.2,\r\n` +
      `${ch.channelNumber},2025-03-05T10:00:00Z,12.1,\r\n` +
      `${ch.channelNumber},2025-03-06T10:00:00Z,12.0,\r\n`;
    const res = await importReadings(csv, { dryRun: true });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      dryRun: true,
      kind: "readings",
      proposedMapping: { channelNumber: "channelNumber", timestamp: "timestamp", value: "value", Inspector: null },
      total: 7,
      valid: 4,
      invalid: 3,
    });
    expect(res.body.problems).toEqual([
      expect.objectContaining({ row: 3, column: "value", field: "body.value", rule: "type" }),
      expect.objectContaining({ row: 4, column: "timestamp", field: "body.timestamp", rule: "format" }),
      expect.objectContaining({ row: 5, column: "channelNumber", field: "body.channelNumber", rule: "exists" }),
    ]);
    expect(await readingsOf(ch.id)).toEqual([]);
    expect((await call(`/Channels/${ch.id}`)).body).toMatchObject({ readingCount: 0 });
  });

  it("finds another value stored at a row's timestamp (the commit's conflict), another unit, a closed channel", async () => {
    const ch = await createChannel();
    const closed = await createChannel({ availabilityId: BUILT_IN.outOfService });
    const stored = await call("/signals", { method: "POST", body: { channelId: ch.id, timestamp: at("2025-01-01T00:00:00Z"), value: 10 } });
    expect(stored.status, stored.text).toBe(201);
    const csv =
      "channelId,timestamp,value,unit\r\n" +
      `${ch.id},2025-01-01T00:00:00Z,10,mm\r\n` +
      `${ch.id},2025-01-01T00:00:00Z,11,mm\r\n` +
      `${ch.id},2025-01-02T00:00:00Z,11,bar\r\n` +
      `${closed.id},2025-01-02T00:00:00Z,11,mm\r\n`;
    const res = await importReadings(csv, { dryRun: true });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ total: 4, valid: 1, invalid: 3 });
    expect(res.body.problems).toEqual([
      expect.objectContaining({ row: 3, column: "timestamp", field: "body.timestamp", rule: "conflict" }),
      expect.objectContaining({ row: 4, column: "unit", field: "body.unit", rule: "unit" }),
      expect.objectContaining({ row: 5, column: "channelId", field: "body.channelId", rule: "notWritable" }),
    ]);
    expect(await readingsOf(ch.id)).toEqual([{ timestamp: at("2025-01-01T00:00:00Z"), value: 10 }]);
  });
});

describe("readings: commit", () => {
  it("writes the rows step by step (its runner's alarms); the channel's readings read back equal the file", async () => {
    const a = await createChannel();
    const b = await createChannel();
    const rows = [
      [a.channelNumber, "", "2025-04-01T08:00:00Z", 14.2],
      [a.channelNumber, "", "2025-05-01T08:00:00.000Z", 14.1],
      ["", b.id, "2025-04-01T09:00:00+01:00", 9.75],
      [a.channelNumber, "", String(at("2025-06-01T08:00:00Z")), 14.05],
      ["", b.id, "2025-05-01T08:00:00Z", 9.7],
    ];
    const csv = "channelNumber,channelId,timestamp,value\r\n" + rows.map((r) => r.join(",")).join("\r\n") + "\r\n";
    const done = await commitReadings(csv);
    expect(done).toMatchObject({ status: "completed", kind: "readings", total: 5, processed: 5, created: 5, skipped: 0, failed: 0 });
    expect(await readingsOf(a.id)).toEqual([
      { timestamp: at("2025-04-01T08:00:00Z"), value: 14.2 },
      { timestamp: at("2025-05-01T08:00:00Z"), value: 14.1 },
      { timestamp: at("2025-06-01T08:00:00Z"), value: 14.05 },
    ]);
    expect(await readingsOf(b.id)).toEqual([
      { timestamp: at("2025-04-01T08:00:00Z"), value: 9.75 },
      { timestamp: at("2025-05-01T08:00:00Z"), value: 9.7 },
    ]);
    expect((await call(`/Channels/${a.id}`)).body).toMatchObject({ readingCount: 3, lastValue: 14.05 });
  });

  it("takes an XLSX whose timestamps are date cells (serial numbers, read as UTC)", async () => {
    const ch = await createChannel();
    const workbook = xlsx([
      ["channelNumber", "timestamp", "value"],
      [ch.channelNumber, 45000.5, 8.5],
      [ch.channelNumber, 45001, 8.25],
      [ch.channelNumber, 60, 8],
    ]);
    const res = await call("/Imports", {
      method: "POST",
      body: { kind: "readings", fileName: "survey.xlsx", contentBase64: base64(workbook) },
    });
    expect(res.status, res.text).toBe(202);
    const done = await waitForImport(res.body.id);
    expect(done).toMatchObject({ status: "completed", format: "xlsx", total: 3, created: 2, failed: 1 });
    const problems = await call(`/Imports/${done.id}/Problems`);
    expect(problems.body).toEqual([expect.objectContaining({ row: 4, column: "timestamp", field: "body.timestamp", rule: "format" })]);
    expect(await readingsOf(ch.id)).toEqual([
      { timestamp: at("2023-03-15T12:00:00Z"), value: 8.5 },
      { timestamp: at("2023-03-16T00:00:00Z"), value: 8.25 },
    ]);
  });

  it("writes each reading once: committed twice, or already stored, it is not doubled; another value there is a conflict", async () => {
    const ch = await createChannel();
    const before = await call("/signals", {
      method: "POST",
      body: { channelNumber: ch.channelNumber, timestamp: at("2025-02-01T00:00:00Z"), value: 7 },
    });
    expect(before.status, before.text).toBe(201);
    const csv =
      "channelNumber,timestamp,value\r\n" +
      `${ch.channelNumber},2025-02-01T00:00:00Z,7\r\n` +
      `${ch.channelNumber},2025-02-02T00:00:00Z,6.9\r\n` +
      `${ch.channelNumber},2025-02-01T00:00:00Z,7.5\r\n`;
    const done = await commitReadings(csv);
    expect(done).toMatchObject({ status: "completed", total: 3, created: 2, skipped: 0, failed: 1 });
    const problems = await call(`/Imports/${done.id}/Problems`);
    expect(problems.body).toEqual([expect.objectContaining({ row: 4, column: "timestamp", field: "body.timestamp", rule: "conflict" })]);
    const again = await commitReadings(csv);
    expect(again).toMatchObject({ status: "completed", total: 3, created: 0, skipped: 2, failed: 1 });
    // The same file under another import key: its readings are duplicates of the stored ones, never second copies.
    const other = await commitReadings(csv, { importKey: `survey-${ch.id}` });
    expect(other).toMatchObject({ status: "completed", created: 2, skipped: 0, failed: 1 });
    expect(await readingsOf(ch.id)).toEqual([
      { timestamp: at("2025-02-01T00:00:00Z"), value: 7 },
      { timestamp: at("2025-02-02T00:00:00Z"), value: 6.9 },
    ]);
    expect((await call(`/Channels/${ch.id}`)).body).toMatchObject({ readingCount: 2 });
  });

  it("a caller without readings_write may not import readings, not even a dry run (403), and nothing is read or written", async () => {
    const ch = await createChannel();
    const csv = `channelNumber,timestamp,value\r\n${ch.channelNumber},2025-01-01T00:00:00Z,5\r\n`;
    for (const dryRun of [false, true]) {
      const res = await importReadings(csv, { dryRun }, { permissions: ["measurements_read", "work_write", "work_read"] });
      expect(res.status, res.text).toBe(403);
    }
    expect(await readingsOf(ch.id)).toEqual([]);
  });
});

describe("readings: a chunk's rows written together (writeMany)", () => {
  const columns: Column[] = ["channelNumber", "timestamp", "value"].map((field, index) => ({ index, header: field, target: { field } }));
  const writeContext = (): WriteContext => ({
    db: env.DB,
    now: new Date().toISOString(),
    actorId: null,
    actorName: null,
    actorType: "user",
    cause: "import test",
    requestId: null,
    uuid: () => crypto.randomUUID(),
    expectedEtag: undefined,
  });

  it("writes 100 rows of one channel as one write (one readings event), each row as its own write would", async () => {
    const a = await createChannel();
    const b = await createChannel();
    const stored = await call("/signals", { method: "POST", body: { channelId: a.id, timestamp: at("2024-01-01T00:00:00Z"), value: 20 } });
    expect(stored.status, stored.text).toBe(201);
    const importKey = `write-many-${a.id}`;
    const hour = (h: number) => new Date(at("2024-02-01T00:00:00Z") + h * 3_600_000).toISOString();
    const cells: string[][] = Array.from({ length: 100 }, (_, h) => [String(a.channelNumber), hour(h), String(19 - h / 100)]);
    cells.push([String(b.channelNumber), hour(0), "5"]); // 100: another channel, in the same write
    cells.push([String(a.channelNumber), hour(1), String(19 - 1 / 100)]); // 101: row 1's reading again: the same reading
    cells.push([String(a.channelNumber), "2024-01-01T00:00:00Z", "21"]); // 102: another value at a stored reading: a conflict
    cells.push([String(a.channelNumber), hour(2), "1"]); // 103: another value than row 2 at its timestamp: a conflict
    cells.push([String(a.channelNumber), hour(200), "18"]); // 104: its entry was written by another run: a conflict
    const taken = importRowStatement(env.DB, {
      importKey,
      rowKey: "row:104",
      entityId: crypto.randomUUID(),
      importId: "x",
      rowNumber: 104,
    });
    await env.DB.batch([taken]);
    const ctx = rowContext(env.DB);
    const rows = await Promise.all(
      cells.map(async (row, i) => {
        const planned = await readings.plan(ctx, columns, row);
        expect(planned.problems).toEqual([]);
        const entry = { importKey, rowKey: `row:${i}`, entityId: crypto.randomUUID(), importId: "x", rowNumber: i };
        return { plan: planned.plan!, id: entry.entityId, extra: [importRowStatement(env.DB, entry)] };
      }),
    );
    const answers = await readings.writeMany!(writeContext(), rows);
    const refused = answers.flatMap((answer, i) => (answer instanceof Error ? [i] : []));
    expect(refused).toEqual([102, 103, 104]);
    for (const i of [102, 103]) {
      const error = answers[i] as ApiError;
      expect(error).toBeInstanceOf(ApiError);
      expect(error.errors).toEqual([expect.objectContaining({ field: "body.timestamp", rule: "conflict" })]);
    }
    expect((answers[104] as ApiError).code).toBe("Conflict");
    const written = await writtenRows(
      env.DB,
      importKey,
      cells.map((_, i) => `row:${i}`),
    );
    expect([...written.keys()].sort()).toEqual(
      cells
        .map((_, i) => `row:${i}`)
        .filter((k) => k !== "row:102" && k !== "row:103")
        .sort(),
    );
    // The stored reading, the hundred of the file each once, and row 104's (written by the run that wrote its entry, as by this one).
    const back = await readingsOf(a.id);
    expect(back).toEqual([
      { timestamp: at("2024-01-01T00:00:00Z"), value: 20 },
      ...cells.slice(0, 100).map(([, ts, value]) => ({ timestamp: Date.parse(ts!), value: Number(value) })),
      { timestamp: at(hour(200)), value: 18 },
    ]);
    expect(await readingsOf(b.id)).toEqual([{ timestamp: at(hour(0)), value: 5 }]);
    const { results } = await env.DB.prepare("SELECT payload FROM outbox WHERE entity_kind = 'readings' AND payload LIKE ?1")
      .bind(`%${a.id}%`)
      .all<{ payload: string }>();
    expect(results.map((r) => JSON.parse(r.payload).source)).toEqual(["signals", "import"]);
  });
});
