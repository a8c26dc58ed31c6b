/** Imports (issue 37): starting one, waiting for it, and the files tests send. */
import { expect } from "vitest";
import { zipSync, strToU8 } from "fflate";
import { call, type TestUser } from "../support/http";

export const DEFAULT_USER_ID = "00000000-0000-4000-8000-00000000aaaa";

/** POSTs /Imports with a CSV in the body. */
export function importCsv(content: string, extra: Record<string, unknown> = {}, user?: Partial<TestUser>) {
  return call("/Imports", {
    method: "POST",
    body: { kind: "deviations", fileName: "register.csv", content, ...extra },
    ...(user ? { user } : {}),
  });
}

/** Waits (polling GET /Imports/{id}) until the import has ended; answers it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read bodies loosely
export async function waitForImport(id: string, timeoutMs = 60_000): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await call(`/Imports/${id}`);
    expect(res.status, res.text).toBe(200);
    if (res.body.status === "completed" || res.body.status === "failed") return res.body;
    if (Date.now() > until) throw new Error(`import ${id} still ${res.body.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Commits a CSV and waits for its end. */
export async function commitCsv(content: string, extra: Record<string, unknown> = {}) {
  const res = await importCsv(content, extra);
  expect(res.status, res.text).toBe(202);
  return waitForImport(res.body.id);
}

const escapeXml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

const columnName = (index: number) => {
  let name = "";
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
};

/**
 * A minimal XLSX workbook (what Excel writes, reduced): `rows` of cells, a string cell as a shared
 * string (or inline with `inline`), a number as a number, `{ formula, value }` as a formula with its
 * cached value. The shared strings come after the sheet, as in Excel's files.
 */
export function xlsx(rows: (string | number | { formula: string; value: string })[][], options: { inline?: boolean } = {}): Uint8Array {
  const strings: string[] = [];
  const index = new Map<string, number>();
  const sheetRows = rows.map((row, r) => {
    const cells = row.map((cell, c) => {
      const ref = `${columnName(c)}${r + 1}`;
      if (typeof cell === "number") return `<c r="${ref}"><v>${cell}</v></c>`;
      if (typeof cell === "object") return `<c r="${ref}" t="str"><f>${escapeXml(cell.formula)}</f><v>${escapeXml(cell.value)}</v></c>`;
      if (options.inline) return `<c r="${ref}" t="inlineStr"><is><t>${escapeXml(cell)}</t></is></c>`;
      if (!index.has(cell)) {
        index.set(cell, strings.length);
        strings.push(cell);
      }
      return `<c r="${ref}" t="s"><v>${index.get(cell)}</v></c>`;
    });
    return `<row r="${r + 1}">${cells.join("")}</row>`;
  });
  const sheet = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${sheetRows.join("")}</sheetData></worksheet>`;
  const shared = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="${strings.length}" uniqueCount="${strings.length}">${strings
    .map((s) => `<si><t xml:space="preserve">${escapeXml(s)}</t></si>`)
    .join("")}</sst>`;
  return zipSync({
    "[Content_Types].xml": strToU8('<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'),
    "xl/workbook.xml": strToU8(
      '<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">' +
        '<sheets><sheet name="Register" sheetId="1"/></sheets></workbook>',
    ),
    "xl/worksheets/sheet1.xml": strToU8(sheet),
    "xl/sharedStrings.xml": strToU8(shared),
  });
}

export const base64 = (bytes: Uint8Array) => {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
};
