/**
 * Issue 37, export: every list that filters answers `format=csv|xlsx` with every match of the same
 * filter, in the same order, as the rows of its JSON answer; cells that could start a formula are
 * escaped; the file streams page by page.
 */
import { describe, expect, it } from "vitest";
import { parseCsv } from "@cj-tech-master/excelts/csv";
import { Workbook } from "@cj-tech-master/excelts";
import { call, tokenFor } from "../support/http";
import { exports } from "cloudflare:workers";
import { createPlantTree, unique } from "../support/factories/work";
import { createChannel } from "../measurements/support";

async function download(path: string): Promise<Response> {
  return exports.default.fetch(new Request(`https://api.test${path}`, { headers: { authorization: `Bearer ${await tokenFor()}` } }));
}

async function csvRows(path: string): Promise<string[][]> {
  const response = await download(path);
  expect(response.status, await response.clone().text()).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/csv; charset=utf-8");
  return parseCsv((await response.text()).replace(/^\uFEFF/, "")) as string[][];
}

async function xlsxRows(path: string): Promise<unknown[][]> {
  const response = await download(path);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet");
  const workbook = new Workbook();
  await workbook.xlsx.load(new Uint8Array(await response.arrayBuffer()));
  const rows: unknown[][] = [];
  workbook.worksheets[0]!.eachRow({ includeEmpty: true }, (row) => rows.push((row.values as unknown[]).slice(1)));
  return rows;
}

describe("channels export", () => {
  it("exports the filtered channels as CSV and XLSX, the same rows as the JSON answer", async () => {
    const asset = (await createPlantTree()).equipment;
    const a = await createChannel({ assetId: asset.id, name: unique("=cmd|' /C calc'!A0") });
    const b = await createChannel({ assetId: asset.id, nominalThickness: 12.5 });
    await createChannel();
    const filter = `/Channels?assetIds=${asset.id}`;
    const json = (await call(filter)).body as { id: string; name: string }[];
    expect(json.map((c) => c.id)).toEqual([a.id, b.id]);

    const csv = await csvRows(`${filter}&format=csv`);
    const header = csv[0]!;
    const id = header.indexOf("id");
    expect(csv.slice(1).map((row) => row[id])).toEqual([a.id, b.id]);
    expect(header).toContain("asset.id");
    expect(csv[1]![header.indexOf("name")]).toBe(`'${a.name}`);

    const xlsx = await xlsxRows(`${filter}&format=xlsx`);
    expect(xlsx[0]).toEqual(header);
    expect(xlsx.slice(1).map((row) => row[id])).toEqual([a.id, b.id]);
    expect(xlsx[1]![header.indexOf("name")]).toBe(`'${a.name}`);
    expect(xlsx[2]![header.indexOf("nominalThickness")]).toBe(12.5);
  });
});
