/**
 * The export's stream on its own (src/export, exportList): a page whose rows the writer buffers (the
 * XLSX writer says nothing until it holds 64 KiB of a sheet) must not stall the download. Before, a
 * pull that queued no chunk was never called again, and an XLSX export of certain sizes hung for
 * ever after its last full page (about half the filters of the export bench).
 */
import { z } from "@hono/zod-openapi";
import { Workbook } from "@cj-tech-master/excelts";
import type { Context } from "hono";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../../src/env";
import { exportList } from "../../src/export";
import { createLogger } from "../../src/pkg/logger";

const context = {
  get: (key: string) => (key === "clock" ? { now: () => new Date() } : createLogger("error")),
} as unknown as Context<AppEnv>;
const Item = z.object({ id: z.string(), n: z.number() });

/** `pages` pages of `size` small rows, made without waiting (as fast as a page can come). */
async function* smallPages(pages: number, size: number) {
  for (let p = 0; p < pages; p++) yield Array.from({ length: size }, (_, i) => ({ id: `r${p}-${i}`, n: p * size + i }));
}

/** The body read to its end, or a failure when it stalls. */
async function readAll(response: Response, ms = 10_000): Promise<Uint8Array> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the download stalled for ${ms} ms`)), ms);
  });
  try {
    return new Uint8Array(await Promise.race([response.arrayBuffer(), stalled]));
  } finally {
    clearTimeout(timer);
  }
}

describe("export stream", () => {
  it.each([
    [3, 5],
    [12, 40],
    [2, 1000],
  ])("an XLSX of %i pages of %i small rows (each less than the writer's buffer) streams to its end", async (pages, size) => {
    const response = await exportList(context, "xlsx", { name: "things", item: Item, pages: smallPages(pages, size) });
    const workbook = new Workbook();
    await workbook.xlsx.load(await readAll(response));
    const rows: unknown[][] = [];
    workbook.worksheets[0]!.eachRow((row) => rows.push((row.values as unknown[]).slice(1)));
    expect(rows[0]).toEqual(["id", "n"]);
    expect(rows.slice(1).map((row) => row[1])).toEqual(Array.from({ length: pages * size }, (_, i) => i));
  });

  it("a CSV of small pages streams to its end too", async () => {
    const response = await exportList(context, "csv", { name: "things", item: Item, pages: smallPages(4, 3) });
    const text = new TextDecoder().decode(await readAll(response));
    expect(text.trim().split("\r\n")).toHaveLength(13);
  });
});
