/**
 * Issue 37: dates in XLSX cells are numbers that only their cell style says are dates; an import reads
 * them as the ISO 8601 text a single request takes (a whole day without a time as a date), in either
 * of Excel's two date systems, and leaves numbers that are not shown as dates alone.
 */
import { strToU8, zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { xlsxRows, type SheetRow } from "../../src/imports/read";
import { customFormatKind, serialToIso } from "../../src/imports/xlsx-dates";

const STYLES =
  '<?xml version="1.0" encoding="UTF-8"?>' +
  '<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">' +
  '<numFmts count="2"><numFmt numFmtId="164" formatCode="yyyy\\-mm\\-dd\\ hh:mm"/>' +
  '<numFmt numFmtId="165" formatCode="&quot;day &quot;0"/></numFmts>' +
  '<cellStyleXfs count="1"><xf numFmtId="0"/></cellStyleXfs>' +
  '<cellXfs count="5"><xf numFmtId="0"/><xf numFmtId="14" applyNumberFormat="1"/><xf numFmtId="164" applyNumberFormat="1"/>' +
  '<xf numFmtId="2"/><xf numFmtId="165"/></cellXfs>' +
  "</styleSheet>";

/** A workbook of one row: each cell a number with the style given (0 General, 1 a date, 2 a date and time, 3 0.00, 4 "day "0). */
function workbook(cells: [number, number][], date1904 = false): Uint8Array {
  const row = cells.map(([value, style], c) => `<c r="${String.fromCharCode(65 + c)}1" s="${style}"><v>${value}</v></c>`).join("");
  return zipSync({
    "[Content_Types].xml": strToU8('<?xml version="1.0"?><Types/>'),
    "xl/workbook.xml": strToU8(
      `<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">` +
        `${date1904 ? '<workbookPr date1904="1"/>' : ""}<sheets><sheet name="Survey" sheetId="1"/></sheets></workbook>`,
    ),
    "xl/styles.xml": strToU8(STYLES),
    "xl/worksheets/sheet1.xml": strToU8(
      '<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">' +
        `<sheetData><row r="1">${row}</row></sheetData></worksheet>`,
    ),
  });
}

async function firstRow(bytes: Uint8Array): Promise<string[]> {
  const rows: SheetRow[] = [];
  const open = async () => new Blob([bytes]).stream();
  for await (const batch of xlsxRows(open, { maxInflatedBytes: 1024 * 1024 })) rows.push(...batch);
  return rows[0]!.cells;
}

describe("XLSX dates", () => {
  it("reads a date-styled number as its date, a date-and-time style as UTC, and other numbers as they are", async () => {
    const cells = await firstRow(
      workbook([
        [45000, 1],
        [46354.4375, 2],
        [45000, 0],
        [12.5, 3],
        [7, 4],
      ]),
    );
    expect(cells).toEqual(["2023-03-15", "2026-11-28T10:30:00Z", "45000", "12.5", "7"]);
  });

  it("counts from 1904 in a workbook that says so", async () => {
    expect(await firstRow(workbook([[43538, 1]], true))).toEqual(["2023-03-15"]);
  });

  it("knows the format codes that show dates and times, not quoted text, colours or plain numbers", () => {
    expect(customFormatKind("dd/mm/yyyy")).toBe("date");
    expect(customFormatKind("mmm yy")).toBe("date");
    expect(customFormatKind("yyyy-mm-dd hh:mm:ss")).toBe("dateTime");
    expect(customFormatKind("h:mm AM/PM")).toBe("dateTime");
    expect(customFormatKind('"day "0')).toBeNull();
    expect(customFormatKind("[Red]#,##0.00")).toBeNull();
    expect(customFormatKind("0.00%")).toBeNull();
  });

  it("snaps a fraction of a day to the second, and refuses what is no date", () => {
    // 10:30 is 0.4375 of a day; a value a millisecond off still reads as 10:30:00.
    expect(serialToIso(45000.4375000001, "dateTime", false)).toBe("2023-03-15T10:30:00Z");
    expect(serialToIso(45000.5, "date", false)).toBe("2023-03-15T12:00:00Z");
    expect(serialToIso(-1, "date", false)).toBeNull();
    expect(serialToIso(Number.NaN, "date", false)).toBeNull();
  });
});
