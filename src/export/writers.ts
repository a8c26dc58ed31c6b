/**
 * The two file formats of an export, written by ExcelTS (@cj-tech-master/excelts; docs/decisions.md,
 * "Export: libraries"): CSV by its formatter, one page of rows at a time; XLSX by its streaming
 * workbook writer, whose zip parts leave as each page of rows is committed. Neither holds more than
 * a page of rows: each page goes out as bytes before the next one is read.
 */
import { WorkbookWriter } from "@cj-tech-master/excelts";
import { formatCsv } from "@cj-tech-master/excelts/csv";
import type { Cell } from "./columns";

export const EXPORT_FORMATS = ["csv", "xlsx"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const MEDIA_TYPES: Record<ExportFormat, string> = {
  csv: "text/csv; charset=utf-8",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
};

/**
 * The OWASP rule against formula injection: a text cell that starts with `=`, `+`, `-`, `@`, a tab
 * or a carriage return (or a line feed, or their full-width forms) is written with a leading single
 * quote, so a spreadsheet shows it as text. Numbers are left alone (-5 stays the number -5). The
 * CSV formatter applies the same rule itself (escapeFormulae); this is the XLSX side, so a cell
 * reads the same in both formats and the import strips one quote before those characters in both.
 */
const FORMULA_START = /^[=+\-@\t\r\n\uFF1D\uFF0B\uFF0D\uFF20]/;

export function escapeFormula(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/** Where a writer sends its bytes. */
export interface ByteSink {
  write(chunk: Uint8Array): void;
  close(): void;
}

/** A format's writer: the header row once, then pages of rows, then the end. */
export interface SheetWriter {
  header(headers: readonly string[]): void;
  rows(rows: readonly (readonly Cell[])[]): void;
  /** Writes what is left (the zip's directory for XLSX) and closes the sink. */
  end(): Promise<void>;
}

/** RFC 4180 lines (CRLF), formula escaping, no header detection: every CSV the API writes. */
export const CSV_OPTIONS = { escapeFormulae: true, lineEnding: "\r\n", trailingNewline: true, headers: false } as const;

function csvWriter(sink: ByteSink): SheetWriter {
  const encoder = new TextEncoder();
  return {
    header(headers) {
      // A byte order mark, so a spreadsheet opens the UTF-8 file as UTF-8 (the import skips it).
      sink.write(encoder.encode(`\uFEFF${formatCsv([[...headers]], CSV_OPTIONS)}`));
    },
    rows(rows) {
      if (rows.length === 0) return;
      sink.write(
        encoder.encode(
          formatCsv(
            rows.map((row) => row.map((cell) => cell ?? "")),
            CSV_OPTIONS,
          ),
        ),
      );
    },
    async end() {
      sink.close();
    },
  };
}

type Listener = (...args: unknown[]) => void;

/**
 * The output of ExcelTS's workbook writer: it takes a Node-like writable (write, end and events);
 * this one hands each chunk of the zip to the sink as it is made.
 */
class SinkStream {
  private readonly listeners = new Map<string | symbol, Listener[]>();
  constructor(private readonly sink: ByteSink) {}
  write(chunk: Uint8Array | string): boolean {
    this.sink.write(typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk);
    return true;
  }
  end(): void {
    this.sink.close();
    this.emit("finish");
    this.emit("close");
  }
  on(event: string | symbol, listener: Listener): this {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
    return this;
  }
  once(event: string | symbol, listener: Listener): this {
    const wrapped: Listener = (...args) => {
      this.removeListener(event, wrapped);
      listener(...args);
    };
    return this.on(event, wrapped);
  }
  removeListener(event: string | symbol, listener: Listener): this {
    this.listeners.set(
      event,
      (this.listeners.get(event) ?? []).filter((l) => l !== listener),
    );
    return this;
  }
  emit(event: string | symbol, ...args: unknown[]): boolean {
    const listeners = this.listeners.get(event) ?? [];
    for (const listener of listeners) listener(...args);
    return listeners.length > 0;
  }
}

const xlsxCell = (cell: Cell) => (typeof cell === "string" ? escapeFormula(cell) : cell);

function xlsxWriter(sink: ByteSink, sheetName: string, now: Date): SheetWriter {
  // Inline strings, no styles: a shared-strings table would grow with every distinct text of the export.
  const workbook = new WorkbookWriter({
    stream: new SinkStream(sink) as never,
    useSharedStrings: false,
    useStyles: false,
    created: now,
    modified: now,
  });
  const sheet = workbook.addWorksheet(sheetName);
  return {
    header(headers) {
      sheet.addRow([...headers]).commit();
    },
    rows(rows) {
      for (const row of rows) sheet.addRow(row.map(xlsxCell)).commit();
    },
    async end() {
      // The workbook commits the sheet itself and waits until its zip entry is written ("zipped"):
      // a sheet committed here first would let the zip end while its deflate is still running.
      await workbook.commit();
    },
  };
}

export function sheetWriter(format: ExportFormat, sink: ByteSink, sheetName: string, now: Date): SheetWriter {
  return format === "csv" ? csvWriter(sink) : xlsxWriter(sink, sheetName, now);
}
