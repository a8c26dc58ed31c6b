/**
 * Reading a spreadsheet in bounded memory (issue 37, "Libraries"; docs/decisions.md, "Reading
 * spreadsheets"). Both readers take the file as a stream (R2's body) and yield its rows in small
 * batches, so a 100,000-row file is never held whole:
 *   - CSV: papaparse, fed the decoded text chunk by chunk through its streaming input (a readable it
 *     listens to); it keeps only the partial record at a chunk's end.
 *   - XLSX: fflate's streaming unzip (only the entries needed are inflated, the rest skipped) and
 *     saxes, a streaming XML parser, over the shared strings and then the first worksheet. The shared
 *     strings (cell text Excel stores once) are the one part held, bounded by MAX_SHARED_STRING_CHARS.
 * A zip entry inflates at most IMPORT_MAX_INFLATED_MIB (src/config.ts) (a zip bomb disguised as XLSX stops there), fed to
 * the inflater in small slices so one slice never inflates into much memory.
 */
import Papa from "papaparse";
import { Unzip, UnzipInflate, type UnzipFile } from "fflate";
import { SaxesParser, type SaxesTagPlain } from "saxes";
import { builtInFormatKind, customFormatKind, serialToIso, type DateFormat } from "./xlsx-dates";

/** One row as read: its number in the file (the header is row 1 in a typical sheet) and its cells. */
export interface SheetRow {
  number: number;
  cells: string[];
  /** Indexes of cells that held a formula (XLSX `<f>`). */
  formulas: number[];
  /** What the reader could not make of the row (CSV: an unclosed quote). */
  error?: string;
}

export type SheetFormat = "csv" | "xlsx";

/** A problem of the file as a whole: it is refused before any row is read (or the import fails). */
export class FileProblem extends Error {
  constructor(
    readonly rule: string,
    message: string,
  ) {
    super(message);
    this.name = "FileProblem";
  }
}

/** What a workbook may inflate to: bytes of one zip entry (a zip bomb disguised as XLSX stops there). */
export interface ReadLimits {
  maxInflatedBytes: number;
}
/** Characters of shared strings held while a workbook is read. */
const MAX_SHARED_STRING_CHARS = 32 * 1024 * 1024;
/** Compressed bytes handed to the inflater at once: one slice inflates to at most ~1,000 times this. */
const INFLATE_SLICE = 8 * 1024;

const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];

/** The format a file name says (.csv or .xlsx), or a FileProblem. */
export function formatOfName(name: string): SheetFormat {
  const lower = name.toLowerCase();
  if (lower.endsWith(".csv")) return "csv";
  if (lower.endsWith(".xlsx")) return "xlsx";
  throw new FileProblem("format", `${name} is neither a .csv nor an .xlsx file (an .xls workbook: save it as .xlsx).`);
}

/**
 * Checks that the first bytes of a file are what its format says: an XLSX is a zip archive; a CSV is
 * UTF-8 text (no zip signature, no NUL bytes, valid UTF-8 in what was read).
 */
export function checkSignature(format: SheetFormat, head: Uint8Array, name: string): void {
  const isZip = ZIP_MAGIC.every((byte, i) => head[i] === byte);
  if (format === "xlsx" && !isZip) throw new FileProblem("format", `${name} is not an XLSX workbook: it is not a zip archive.`);
  if (format === "csv") {
    if (isZip) throw new FileProblem("format", `${name} is not CSV text: it is a zip archive (an XLSX workbook? name it .xlsx).`);
    if (head.includes(0)) throw new FileProblem("format", `${name} is not CSV text: it holds NUL bytes (a binary file).`);
    try {
      // The head may end inside a character: decode it as a stream does, without the last partial one.
      new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(head, { stream: true });
    } catch {
      throw new FileProblem("encoding", `${name} is not UTF-8 text: save the CSV as UTF-8.`);
    }
  }
}

/**
 * Papaparse's streaming input is a readable it listens to (`on('data' | 'end' | 'error')`); this one
 * is fed by hand, so each chunk is parsed (and its rows handed to `step`) before the next is read.
 */
class TextFeed {
  readonly readable = true;
  private readonly listeners = new Map<string, ((arg?: unknown) => void)[]>();
  read(): null {
    return null;
  }
  on(event: string, listener: (arg?: unknown) => void): this {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
    return this;
  }
  removeListener(event: string, listener: (arg?: unknown) => void): this {
    this.listeners.set(
      event,
      (this.listeners.get(event) ?? []).filter((l) => l !== listener),
    );
    return this;
  }
  pause(): void {}
  resume(): void {}
  emit(event: string, arg?: unknown): void {
    for (const listener of this.listeners.get(event) ?? []) listener(arg);
  }
}

const isEmpty = (cells: readonly string[]) => cells.every((cell) => cell.trim() === "");

/** The rows of a CSV stream, in batches as the text arrives; empty rows are left out. */
export async function* csvRows(body: ReadableStream<Uint8Array>): AsyncGenerator<SheetRow[]> {
  const feed = new TextFeed();
  let batch: SheetRow[] = [];
  let number = 0;
  let failure: unknown = null;
  Papa.parse<string[]>(feed as unknown as File, {
    header: false,
    skipEmptyLines: false,
    step: (result) => {
      number++;
      const cells = result.data.map(String);
      const error = result.errors.find((e) => e.type === "Quotes")?.message;
      if (isEmpty(cells) && !error) return;
      batch.push({ number, cells, formulas: [], ...(error ? { error } : {}) });
    },
    error: (error: unknown) => {
      failure = error;
    },
  });
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      let text: string;
      try {
        text = done ? decoder.decode() : decoder.decode(value, { stream: true });
      } catch {
        throw new FileProblem("encoding", "The file is not UTF-8 text: save the CSV as UTF-8.");
      }
      if (text) feed.emit("data", text);
      if (done) feed.emit("end");
      if (failure) throw new FileProblem("format", `The CSV could not be read: ${String(failure)}`);
      if (batch.length > 0) {
        yield batch;
        batch = [];
      }
      if (done) return;
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => undefined);
  }
}

/** Column index of a cell reference (`B7` -> 1). */
function columnOf(reference: string): number {
  let index = 0;
  for (const ch of reference) {
    const code = ch.charCodeAt(0);
    if (code < 65 || code > 90) break;
    index = index * 26 + (code - 64);
  }
  return index - 1;
}

const local = (name: string) => name.slice(name.indexOf(":") + 1);

/**
 * Feeds a zip stream to fflate's Unzip in small slices, inflating only the entries `wanted` accepts
 * (each into its `sink`, counting what it inflates). Yields after each slice of the input, so the
 * caller can take what the sinks produced.
 */
async function* unzipEntries(
  body: ReadableStream<Uint8Array>,
  limits: ReadLimits,
  wanted: (name: string) => ((text: string, final: boolean) => void) | null,
): AsyncGenerator<void> {
  const unzip = new Unzip();
  unzip.register(UnzipInflate);
  let failure: unknown = null;
  unzip.onfile = (file: UnzipFile) => {
    const sink = wanted(file.name);
    if (!sink) return;
    const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: false });
    let inflated = 0;
    file.ondata = (error, chunk, final) => {
      if (failure) return;
      if (error) {
        failure = new FileProblem("format", `The workbook's ${file.name} could not be inflated: ${error.message}.`);
        return;
      }
      inflated += chunk.length;
      if (inflated > limits.maxInflatedBytes) {
        failure = new FileProblem(
          "size",
          `The workbook's ${file.name} inflates past ${limits.maxInflatedBytes / 1024 / 1024} MiB (a zip bomb?); it is not read.`,
        );
        file.terminate();
        return;
      }
      try {
        sink(decoder.decode(chunk, { stream: !final }), final);
      } catch (cause) {
        failure =
          cause instanceof FileProblem
            ? cause
            : new FileProblem(
                "format",
                `The workbook's ${file.name} is not well-formed XML: ${cause instanceof Error ? cause.message : String(cause)}`,
              );
      }
    };
    file.start();
  };
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        unzip.push(new Uint8Array(0), true);
        if (failure) throw failure;
        yield;
        return;
      }
      for (let at = 0; at < value.length; at += INFLATE_SLICE) {
        try {
          unzip.push(value.subarray(at, at + INFLATE_SLICE), false);
        } catch (error) {
          throw failure ?? new FileProblem("format", `The workbook is not a valid zip archive: ${String(error)}.`);
        }
        if (failure) throw failure;
        yield;
      }
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => undefined);
  }
}

const SHEET = /^xl\/worksheets\/sheet(\d+)\.xml$/;

/** What pass 1 learns of a workbook: its shared strings, the worksheet to read, and how dates are shown. */
interface WorkbookIndex {
  strings: string[];
  sheet: string;
  /** Cell styles (indexes into cellXfs) whose number format shows a date, and what it shows. */
  dateStyles: Map<number, DateFormat>;
  /** The workbook counts days from 1904 (workbookPr date1904). */
  date1904: boolean;
}

/** A parser fed an entry's text as it inflates. */
const feeding = (parser: SaxesParser) => (text: string, final: boolean) => {
  parser.write(text);
  if (final) parser.close();
};

const attributeOf = (tag: SaxesTagPlain, key: string): string | undefined => {
  const value = tag.attributes[key];
  return typeof value === "string" ? value : undefined;
};

/** styles.xml: the cell styles whose number format is a date or a time. */
function stylesParser(dateStyles: Map<number, DateFormat>): SaxesParser {
  const custom = new Map<number, string>();
  let inCellXfs = false;
  let xf = 0;
  const parser = new SaxesParser();
  parser.on("opentag", (tag) => {
    const name = local(tag.name);
    if (name === "numFmt") custom.set(Number(attributeOf(tag, "numFmtId")), attributeOf(tag, "formatCode") ?? "");
    else if (name === "cellXfs") inCellXfs = true;
    else if (name === "xf" && inCellXfs) {
      const id = Number(attributeOf(tag, "numFmtId") ?? 0);
      const code = custom.get(id);
      const kind = code !== undefined ? customFormatKind(code) : builtInFormatKind(id);
      if (kind) dateStyles.set(xf, kind);
      xf++;
    }
  });
  parser.on("closetag", (tag) => {
    if (local(tag.name) === "cellXfs") inCellXfs = false;
  });
  return parser;
}

/** Pass 1 over a workbook: its shared strings, its date styles, and which worksheet to read (sheet1, else the lowest numbered). */
async function workbookIndex(body: ReadableStream<Uint8Array>, limits: ReadLimits): Promise<WorkbookIndex> {
  const strings: string[] = [];
  const dateStyles = new Map<number, DateFormat>();
  let date1904 = false;
  let chars = 0;
  const sheets: string[] = [];
  let current: string | null = null;
  let inText = false;
  const parser = new SaxesParser();
  parser.on("opentag", (tag) => {
    const name = local(tag.name);
    if (name === "si") current = "";
    else if (name === "t" && current !== null) inText = true;
  });
  parser.on("text", (text) => {
    if (inText && current !== null) current += text;
  });
  parser.on("closetag", (tag) => {
    const name = local(tag.name);
    if (name === "t") inText = false;
    else if (name === "si" && current !== null) {
      chars += current.length;
      if (chars > MAX_SHARED_STRING_CHARS)
        throw new FileProblem("size", `The workbook's shared strings pass ${MAX_SHARED_STRING_CHARS / 1024 / 1024} M characters.`);
      strings.push(current);
      current = null;
    }
  });
  const workbook = new SaxesParser();
  workbook.on("opentag", (tag) => {
    if (local(tag.name) === "workbookPr") date1904 = ["1", "true"].includes(attributeOf(tag, "date1904") ?? "");
  });
  for await (const _ of unzipEntries(body, limits, (name) => {
    if (SHEET.test(name)) sheets.push(name);
    if (name === "xl/sharedStrings.xml") return feeding(parser);
    if (name === "xl/styles.xml") return feeding(stylesParser(dateStyles));
    if (name === "xl/workbook.xml") return feeding(workbook);
    return null;
  }));
  if (sheets.length === 0) throw new FileProblem("format", "The file is a zip archive but not an XLSX workbook: it has no worksheet.");
  const sheet = sheets.includes("xl/worksheets/sheet1.xml")
    ? "xl/worksheets/sheet1.xml"
    : sheets.sort((a, b) => Number(SHEET.exec(a)![1]) - Number(SHEET.exec(b)![1]))[0]!;
  return { strings, sheet, dateStyles, date1904 };
}

/**
 * The rows of the first worksheet of an XLSX workbook, in batches. `open` gives the file's stream
 * (called twice: the shared strings come after the sheet in Excel's files). Empty rows are left out;
 * a formula cell keeps its cached value and is listed in `formulas`; a number shown as a date is read as
 * its ISO 8601 text (./xlsx-dates.ts).
 */
export async function* xlsxRows(open: () => Promise<ReadableStream<Uint8Array>>, limits: ReadLimits): AsyncGenerator<SheetRow[]> {
  const { strings, sheet, dateStyles, date1904 } = await workbookIndex(await open(), limits);
  let batch: SheetRow[] = [];
  let row: SheetRow | null = null;
  let cell: { index: number; type: string; style: number; value: string; formula: boolean; inValue: boolean } | null = null;
  let nextRow = 1;
  let nextColumn = 0;
  const parser = new SaxesParser();
  parser.on("opentag", (tag) => {
    const name = local(tag.name);
    const attribute = (key: string) => {
      const value = tag.attributes[key];
      return typeof value === "string" ? value : undefined;
    };
    if (name === "row") {
      const r = Number(attribute("r"));
      row = { number: Number.isInteger(r) && r > 0 ? r : nextRow, cells: [], formulas: [] };
      nextRow = row.number + 1;
      nextColumn = 0;
    } else if (name === "c" && row) {
      const reference = attribute("r");
      const index = reference ? columnOf(reference) : nextColumn;
      nextColumn = index + 1;
      cell = { index, type: attribute("t") ?? "n", style: Number(attribute("s") ?? 0), value: "", formula: false, inValue: false };
    } else if (cell && name === "f") cell.formula = true;
    else if (cell && (name === "v" || name === "t")) cell.inValue = true;
  });
  parser.on("text", (text) => {
    if (cell?.inValue) cell.value += text;
  });
  parser.on("closetag", (tag) => {
    const name = local(tag.name);
    if (cell && (name === "v" || name === "t")) cell.inValue = false;
    else if (name === "c" && cell && row) {
      let value = cell.value;
      if (cell.type === "s") value = strings[Number(value)] ?? "";
      else if (cell.type === "b") value = value === "1" ? "TRUE" : "FALSE";
      else if (cell.type === "n" && value !== "") {
        const shown = dateStyles.get(cell.style);
        if (shown) value = serialToIso(Number(value), shown, date1904) ?? value;
      }
      while (row.cells.length < cell.index) row.cells.push("");
      row.cells[cell.index] = value;
      if (cell.formula) row.formulas.push(cell.index);
      cell = null;
    } else if (name === "row" && row) {
      if (!isEmpty(row.cells) || row.formulas.length > 0) batch.push(row);
      row = null;
    }
  });
  let found = false;
  for await (const _ of unzipEntries(await open(), limits, (name) => {
    if (name !== sheet) return null;
    found = true;
    return (text, final) => {
      parser.write(text);
      if (final) parser.close();
    };
  })) {
    if (batch.length > 0) {
      yield batch;
      batch = [];
    }
  }
  if (!found) throw new FileProblem("format", "The workbook's worksheet could not be read.");
  if (batch.length > 0) yield batch;
}

/** The rows of a file of either format, in batches. */
export function sheetRows(
  format: SheetFormat,
  open: () => Promise<ReadableStream<Uint8Array>>,
  limits: ReadLimits,
): AsyncGenerator<SheetRow[]> {
  if (format === "xlsx") return xlsxRows(open, limits);
  return (async function* () {
    yield* csvRows(await open());
  })();
}
