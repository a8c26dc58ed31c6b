/**
 * Starting an import (POST /Imports): the file is found (an uploaded file, or the body's small
 * content, stored in R2 beside the uploads), checked to be what its name says, and its header row
 * read; the mapping is the proposed one with the caller's columns over it. A dry run of a small file
 * is answered at once; anything else becomes a queued import (./run.ts) and the answer is 202.
 */
import type { Bindings } from "../env";
import type { WriteContext } from "../pkg/db";
import { ApiError, type FieldProblem } from "../pkg/errors";
import type { Principal } from "../pkg/auth";
import { hex } from "../upload/storage";
import { viewerOf } from "../upload/files/access";
import { getVisibleFile } from "../upload/files/store";
import { importKind } from "./kinds";
import type { Column, ImportKind } from "./kinds/kind";
import { isTarget, parseTarget, PROPERTY_PREFIX, proposeMapping } from "./kinds/mapping";
import { checkSignature, FileProblem, formatOfName, sheetRows, type ReadLimits, type SheetFormat, type SheetRow } from "./read";
import { configOf } from "../config";
import { processRows, type RowsJob } from "./rows";
import { INLINE_DRY_RUN_ROWS, type CreateImport, type DryRunAnswer, type ImportResource } from "./schema";
import { insertImport } from "./store";
import type { Versioned } from "../pkg/resource";

/** One step of one import: what its runner (durable-objects/import-runner.ts) runs in one alarm. */
export type ImportMessage = { importId: string; step: "split" } | { importId: string; step: "chunk"; chunk: number };

/**
 * Asks the import's runner (its own Durable Object) to run its next step now: when the import starts,
 * and when the minute cron finds it stalled.
 */
export async function driveImport(env: Bindings, importId: string): Promise<void> {
  await env.IMPORT_RUNNERS.get(env.IMPORT_RUNNERS.idFromName(importId)).run(importId);
}

/** The bounds of reading a file, from the configuration. */
export const readLimits = (env: Bindings): ReadLimits => ({ maxInflatedBytes: configOf(env).IMPORT_MAX_INFLATED_MIB * 1024 * 1024 });

export const sourceKeyOf = (importId: string) => `imports/${importId}/source`;

/** A problem of the request as a whole (the file, the mapping): a 400 naming the field, nothing written. */
const refused = (field: string, rule: string, message: string) => {
  const errors: FieldProblem[] = [{ field, rule, message }];
  return new ApiError("ValidationFailed", message, { errors });
};

/** Opens the R2 object's body (again for each pass over it). */
export function opener(bucket: R2Bucket, key: string): () => Promise<ReadableStream<Uint8Array>> {
  return async () => {
    const object = await bucket.get(key);
    if (!object) throw new FileProblem("gone", "The import's file is no longer stored.");
    return object.body;
  };
}

/** The file's header row: its first non-empty row, trimmed; refused when empty, or when a header repeats. */
export function headersOf(row: SheetRow | undefined, field: string): string[] {
  if (!row) throw refused(field, "empty", "The file has no rows: its first row names the columns.");
  const headers = row.cells.map((cell) => cell.trim());
  const seen = new Set<string>();
  for (const header of headers) {
    if (header === "") continue;
    if (seen.has(header)) throw refused(field, "duplicateColumn", `The column '${header}' appears twice in the header row.`);
    seen.add(header);
  }
  return headers;
}

/** The mapping rows are read with: the proposed one, the caller's columns over it; a column named that the file lacks is refused. */
export async function resolveMapping(
  env: Bindings,
  kind: ImportKind,
  headers: readonly string[],
  given: Record<string, string | null> | undefined,
  rowKey: string | undefined,
): Promise<{ proposed: Record<string, string | null>; pairs: [string, string | null][]; columns: Column[]; rowKeyIndex: number | null }> {
  const names = await kind.propertyNames(env.DB);
  const proposed = proposeMapping(kind, headers, names);
  const errors: FieldProblem[] = [];
  for (const [header, target] of Object.entries(given ?? {})) {
    if (!headers.includes(header)) {
      errors.push({
        field: `body.mapping.${header}`,
        rule: "exists",
        message: `The file has no column '${header}' (its columns: ${headers.filter(Boolean).join(", ")}).`,
      });
    } else if (target !== null && !isTarget(kind, target)) {
      errors.push({
        field: `body.mapping.${header}`,
        rule: "enum",
        message:
          `'${target}' is not a field of a ${kind.noun}${names.size > 0 ? " nor property:Name" : ""} ` +
          "(see the proposed mapping of a dry run).",
      });
    } else if (target?.startsWith(PROPERTY_PREFIX) && !names.has(target.slice(PROPERTY_PREFIX.length))) {
      errors.push({
        field: `body.mapping.${header}`,
        rule: "exists",
        message:
          names.size > 0
            ? `No ${kind.noun} property is named '${target.slice(PROPERTY_PREFIX.length)}'.`
            : `A ${kind.noun} has no properties.`,
      });
    }
  }
  if (rowKey !== undefined && !headers.includes(rowKey))
    errors.push({ field: "body.rowKey", rule: "exists", message: `The file has no column '${rowKey}'.` });
  const mapping = { ...proposed, ...(given ?? {}) };
  const targets = new Map<string, string>();
  for (const header of headers) {
    const target = mapping[header] ?? null;
    if (target === null || !isTarget(kind, target)) continue;
    const canonical = `${JSON.stringify(parseTarget(kind, target))}`;
    const other = targets.get(canonical);
    if (other !== undefined)
      errors.push({
        field: `body.mapping.${header}`,
        rule: "duplicate",
        message: `The columns '${other}' and '${header}' both map to ${target}.`,
      });
    targets.set(canonical, header);
  }
  if (errors.length > 0) throw new ApiError("ValidationFailed", errors.map((e) => e.message).join(" "), { errors });
  const pairs = headers.filter((h) => h !== "").map((h): [string, string | null] => [h, mapping[h] ?? null]);
  const columns = headers
    .map((header, index) => ({ index, header, target: header === "" ? null : parseTarget(kind, mapping[header] ?? null) }))
    .filter((column) => column.target !== null);
  return { proposed, pairs, columns, rowKeyIndex: rowKey === undefined ? null : headers.indexOf(rowKey) };
}

/** The job of rows from a mapping and the headers (an import's stored pairs, or a request's). */
export function rowsJob(
  id: string,
  kindName: string,
  importKey: string,
  dryRun: boolean,
  headers: readonly string[],
  pairs: [string, string | null][],
  rowKey: string | null,
): RowsJob {
  const kind = importKind(kindName);
  const mapping = new Map(pairs);
  const columns = headers
    .map((header, index) => ({ index, header, target: header === "" ? null : parseTarget(kind, mapping.get(header) ?? null) }))
    .filter((column) => column.target !== null);
  return { id, kind, importKey, dryRun, headers, columns, rowKeyIndex: rowKey === null ? null : headers.indexOf(rowKey) };
}

interface Source {
  name: string;
  fileId: string | null;
  key: string;
  field: string;
  importKey: string;
  /** The first bytes, to check the format. */
  head: Uint8Array;
}

async function sourceOf(env: Bindings, principal: Principal, body: CreateImport, importId: string): Promise<Source> {
  if (body.fileId !== undefined) {
    const file = await getVisibleFile(env.DB, viewerOf(principal), body.fileId);
    const head = await env.UPLOADS.get(file.row.r2_key, { range: { offset: 0, length: 64 * 1024 } });
    if (!head) throw new ApiError("NotFound", `File ${body.fileId} has no content.`);
    return {
      name: file.value.name,
      fileId: file.value.id,
      key: file.row.r2_key,
      field: "body.fileId",
      importKey: `${body.kind}:file:${file.value.id}`,
      head: new Uint8Array(await head.arrayBuffer()),
    };
  }
  const bytes =
    body.content !== undefined
      ? new TextEncoder().encode(body.content)
      : Uint8Array.from(atob(body.contentBase64 ?? ""), (c) => c.charCodeAt(0));
  const key = sourceKeyOf(importId);
  await env.UPLOADS.put(key, bytes);
  const digest = hex(await crypto.subtle.digest("SHA-256", bytes));
  return {
    name: body.fileName ?? "",
    fileId: null,
    key,
    field: body.content !== undefined ? "body.content" : "body.contentBase64",
    importKey: `${body.kind}:sha256:${digest}`,
    head: bytes.subarray(0, 64 * 1024),
  };
}

export type Started = { dryRun: DryRunAnswer } | { queued: Versioned<ImportResource> };

/** POST /Imports: a dry run answered at once, or a queued import. */
export async function startImport(env: Bindings, principal: Principal, write: WriteContext, body: CreateImport): Promise<Started> {
  const id = write.uuid();
  const source = await sourceOf(env, principal, body, id);
  let format: SheetFormat;
  try {
    format = formatOfName(source.name);
    checkSignature(format, source.head, source.name);
  } catch (error) {
    if (error instanceof FileProblem) throw refused(body.fileId !== undefined ? "body.fileId" : "body.fileName", error.rule, error.message);
    throw error;
  }
  const open = opener(env.UPLOADS, source.key);
  const rows: SheetRow[] = [];
  let header: SheetRow | undefined;
  let more = false;
  const wanted = body.dryRun ? INLINE_DRY_RUN_ROWS + 1 : 0;
  try {
    for await (const batch of sheetRows(format, open, readLimits(env))) {
      for (const row of batch) {
        if (!header) header = row;
        else rows.push(row);
      }
      if (header && rows.length >= wanted) {
        more = true;
        break;
      }
    }
  } catch (error) {
    if (error instanceof FileProblem) throw refused(source.field, error.rule, error.message);
    throw error;
  }
  const headers = headersOf(header, source.field);
  const mapping = await resolveMapping(env, importKind(body.kind), headers, body.mapping, body.rowKey);
  const importKey = body.importKey ?? source.importKey;

  if (body.dryRun && !more) {
    const job = rowsJob(id, body.kind, importKey, true, headers, mapping.pairs, body.rowKey ?? null);
    const outcome = await processRows(env.DB, write, job, rows);
    if (source.fileId === null) await env.UPLOADS.delete(source.key);
    return {
      dryRun: {
        dryRun: true,
        kind: body.kind,
        format,
        headers: headers.filter((h) => h !== ""),
        proposedMapping: mapping.proposed,
        mapping: Object.fromEntries(mapping.pairs),
        total: rows.length,
        valid: outcome.counts.created,
        invalid: outcome.counts.failed,
        problems: outcome.problems.flatMap((p) => p.problems.map((problem) => ({ row: p.rowNumber, ...problem }))),
      },
    };
  }
  const created = await insertImport(env.DB, write, {
    id,
    kind: body.kind,
    dryRun: body.dryRun,
    format,
    fileName: source.name,
    fileId: source.fileId,
    sourceKey: source.key,
    importKey,
    rowKeyColumn: body.rowKey ?? null,
    mapping: JSON.stringify(mapping.pairs),
    createdBy: write.actorId,
    createdByName: write.actorName,
  });
  await driveImport(env, id);
  return { queued: created };
}
