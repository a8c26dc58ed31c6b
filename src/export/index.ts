/**
 * One exporter for every list that filters: `GET <list>?format=csv|xlsx` with the list's own query
 * answers every match of the same filter, in the same order, as a CSV or XLSX file, streamed.
 *
 * A list plugs in with {@link exportable} (adds `format` to its query and the two media types to its
 * 200 answer) and, in its handler, {@link exportList} with a function that reads one page of the same
 * JSON items its answer holds. The exporter pages through the list with the shared query engine
 * (src/pkg/query) by keyset: pages of {@link EXPORT_PAGE} rows in the list's order, ties broken by
 * id, each starting after the last row of the one before, so a row that is there and unchanged for
 * the whole export is written exactly once whatever is written meanwhile (an offset would shift by
 * every row deleted or inserted before it). It writes each page to the response's stream before it
 * reads the next one, so a 100,000-row export holds one page of rows, never the whole list. The
 * first page is read before the answer starts: a filter the engine refuses is still a 400 problem,
 * not a broken file.
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { errorFields } from "../pkg/logger";
import type { Keyset, ListPage, SqlScalar } from "../pkg/query";
import { cellsOf, listColumns, propertiesOf, propertyColumns, type Column } from "./columns";
import { EXPORT_FORMATS, MEDIA_TYPES, sheetWriter, type ByteSink, type ExportFormat } from "./writers";

/** Rows read per page: the engine's largest take. */
export const EXPORT_PAGE = 1000;

export const ExportFormatParam = z
  .enum(EXPORT_FORMATS)
  .optional()
  .openapi({
    description:
      "csv or xlsx: every match of the filter (skip and take do not apply), in the list's order (at most 32 terms), as a file " +
      "streamed page by page, each page after the last row of the one before; one column per field of the JSON items " +
      "(nested names with dots, arrays joined with '; ') and one per property definition, headed by its name. Absent: the JSON page.",
    example: "csv",
  });

/**
 * A list's query with `format`: spread into the route's request.
 *
 * @example
 * request: { query: exportQuery(ChannelListQuery) }, responses: { 200: exportable(withTotalCount(json(...))) }
 */
export function exportQuery<S extends z.ZodRawShape>(query: z.ZodObject<S>) {
  return query.extend({ format: ExportFormatParam });
}

/** A list's 200 answer that also documents the CSV and XLSX files of `format`. */
export function exportable<R extends { description: string; content: object }>(response: R) {
  return {
    ...response,
    description: `${response.description} With format=csv or format=xlsx: every match, as a file.`,
    content: {
      ...response.content,
      "text/csv": { schema: z.string() },
      [MEDIA_TYPES.xlsx]: { schema: z.string().openapi({ format: "binary" }) },
    },
  };
}

export interface ExportSource<T> {
  /** The file's name without extension, and the XLSX sheet's name, e.g. `deviations`. */
  name: string;
  /** The schema of one JSON item of the list: its fields are the columns. */
  item: z.ZodType;
  /** The list's JSON items, page after page, in the list's order (see {@link pagesOf}). */
  pages: AsyncIterator<readonly T[]>;
  /** For a list whose items carry properties: the names of the definitions that become columns, in column order. */
  propertyNames?: () => Promise<readonly string[]>;
}

/** A page of a list read by keyset: a list function's page without its total (where the next page starts: `next`). */
type KeysetPage<T> = Pick<ListPage<T>, "items" | "next">;

/**
 * The pages of a list read the way its JSON answer reads one: `read` is the list's own function
 * (the shared query engine: filter, conditions, order with id last), given the route's query with
 * `keyset` and take set, which it hands to compileListQuery as it is; page after page until a page
 * has no `next`.
 */
export async function* pagesOf<Q extends object, T>(
  query: Q,
  read: (query: Q & { keyset: Keyset; skip: undefined; take: number; includeTotal: undefined }) => Promise<KeysetPage<T>>,
): AsyncGenerator<readonly T[]> {
  for (let after: readonly SqlScalar[] | undefined; ;) {
    const { items, next } = await read({ ...query, keyset: { after }, skip: undefined, take: EXPORT_PAGE, includeTotal: undefined });
    if (items.length > 0) yield items;
    if (!next) return;
    after = next;
  }
}

/** Rows that arrive one by one (a keyset read such as the audit trail's), in pages of {@link EXPORT_PAGE}. */
export async function* inPages<T>(rows: AsyncIterable<T>): AsyncGenerator<readonly T[]> {
  let page: T[] = [];
  for await (const row of rows) {
    page.push(row);
    if (page.length === EXPORT_PAGE) {
      yield page;
      page = [];
    }
  }
  if (page.length > 0) yield page;
}

/** The export answer: reads the first page now (so a bad filter is a 400), then streams the rest. */
export async function exportList<T>(c: Context<AppEnv>, format: ExportFormat, source: ExportSource<T>): Promise<Response> {
  const { fields, hasProperties } = listColumns(source.item);
  const names = hasProperties && source.propertyNames ? await source.propertyNames() : [];
  const columns: Column[] = [...fields, ...propertyColumns(names, fields)];
  const first = await source.pages.next();
  const now = c.get("clock").now();
  const log = c.get("log");

  let more = first.done !== true;
  let written = 0;
  let chunks = 0;
  let writer: ReturnType<typeof sheetWriter> | undefined;
  let ending: Promise<void> | undefined;
  const write = (items: readonly T[]) => {
    writer?.rows(items.map((item) => cellsOf(item, columns, propertiesOf(item))));
    written += items.length;
  };

  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const sink: ByteSink = {
          write: (chunk) => {
            chunks += 1;
            controller.enqueue(chunk);
          },
          close: () => controller.close(),
        };
        writer = sheetWriter(format, sink, source.name, now);
        writer.header(columns.map((column) => column.header));
        if (first.done !== true) write(first.value);
      },
      async pull(controller) {
        // A pull ends only once it has queued a chunk or closed the stream. The XLSX writer buffers up
        // to 64 KiB of a sheet before its zip says anything, so a page can make no chunk; a pull that
        // ended then would never be called again (the client's read came before it, and a stream
        // pulls again only for a read or a chunk that arrives while it pulls), and the download hung.
        const before = chunks;
        try {
          while (more && chunks === before) {
            const next = await source.pages.next();
            if (next.done === true) more = false;
            else write(next.value);
          }
          if (more) return;
          // The end closes the stream (the sink) once the last bytes are out; a pull meanwhile waits for it.
          ending ??= writer?.end();
          await ending;
        } catch (error) {
          log.error("export failed mid-stream", { ...errorFields(error), list: source.name, rowsWritten: written });
          controller.error(error);
        }
      },
    },
    // One chunk queued at most: the next page is read once the client has taken what the last one made.
    { highWaterMark: 1 },
  );

  const date = now.toISOString().slice(0, 10);
  return new Response(body, {
    status: 200,
    headers: {
      "content-type": MEDIA_TYPES[format],
      "content-disposition": `attachment; filename="${source.name}-${date}.${format}"`,
      "cache-control": "no-store",
    },
  });
}
