/**
 * Keeping the measure of the resource contract (docs/decisions.md, "One resource contract"), so a new
 * route or store cannot quietly leave it:
 *
 * - every PUT and DELETE of the OpenAPI document declares 412 (it honours If-Match), or is named below
 *   with the reason it has no version to race with;
 * - every function in src that writes a resource's row (a table with an ETag) also writes the change's
 *   outbox event, or is named below with the reason.
 *
 * The event check reads the source, function by function (top-level `function` declarations; a write
 * in an arrow function or a class method is not seen), and looks for the event in the same function:
 * outboxStatements, guardedOutboxStatements, outboxManyStatements or an `INSERT INTO outbox`. It does not
 * prove the event is in the same batch, nor that every path through the function writes it; the
 * resource kit (src/pkg/resource.ts) and each area's event tests do that. What it does catch is the
 * usual slip: a new store function, or a new write in an old one, without any event.
 *
 * A statement builder (a function named `...Statement` or `...Statements`, the owner's typed statements
 * of src/db/statements.ts among them) returns statements for its caller's batch and runs nothing: the
 * caller, which runs the batch, writes the event (docs/decisions.md, "The data layer").
 */
import { describe, expect, it } from "vitest";
import { is } from "drizzle-orm";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import * as schema from "../../src/db/schema";
import schemaText from "../../src/db/schema.ts?raw";
import { call } from "../support/http";
import { BUILDER, functionWrites, schemaTables } from "./support/writes";

const NO_VERSION = "a link or a part, which has no ETag of its own";

/** PUT and DELETE routes without a 412, and why. */
const WITHOUT_IF_MATCH: Record<string, string> = {
  "DELETE /Files/Uploads/{uploadId}": "aborts an upload in progress, which has no ETag (the file appears, with one, at completion)",
  "PUT /Files/Uploads/{uploadId}/Parts/{partNumber}": "the bytes of one part of an upload in progress; a part sent again replaces itself",
  "DELETE /Deviations/{id}/WorkItems/{workItemId}": NO_VERSION,
  "DELETE /WorkItems/{id}/Deviations/{deviationId}": NO_VERSION,
  "DELETE /WorkTemplates/{id}/FileReferences": NO_VERSION,
  "DELETE /WorkTemplates/{id}/FileReferences/{fileReferenceId}": NO_VERSION,
  "DELETE /WorkItems/{id}/FileReferences": NO_VERSION,
  "DELETE /WorkItems/{id}/FileReferences/{fileReferenceId}": NO_VERSION,
  "DELETE /Activities/{id}/MediaReferences/{mediaReferenceId}": NO_VERSION,
  "DELETE /JobOutputs/{id}": "a job output is written once and never changed, so there is no other version to refuse",
  "PUT /MonitorJobs/{id}/{status}": "a status report of an external model; statuses only move forward (a step back is a 409)",
  "PUT /Indices/{index}/Resynchronization": "an action (start a synchronisation), not a change of the index's fields",
};

/** Functions (`file#function`) that write a resource's row without an event, and why. */
const WITHOUT_EVENT: Record<string, string> = {
  "src/measurements/channels/alarms.ts#evaluateChannels":
    "a channel's alarm state follows its alarms: the alarm's own entered and left events (written by the loop) tell the change",
  "src/audit/archive.ts#archiveOneSegment":
    "moves sealed audit records to the R2 archive (their `etag` column is the audited entity's, not a version of their own)",
  "src/search/store.ts#markSyncStarted":
    "synchronisation bookkeeping of an index (status, times), written by the index's own object, not a change a client made",
  "src/search/store.ts#finishSync": "synchronisation bookkeeping of an index (status, counts, times)",
  "src/work-items/instantiate.ts#prepareInstantiation":
    "prepares an instantiation's guards and writes for its caller's batch (a work item's create or update), which writes the " +
    "activities' events",
  "src/templates/activity/write.ts#planFor":
    "plans an edit's statements for the template edit loop (src/templates/edit.ts), which writes the event in the same batch",
  "src/templates/work/write.ts#planFor":
    "plans an edit's statements for the template edit loop (src/templates/edit.ts), which writes the event in the same batch",
  "src/templates/work/write.ts#planUpdate":
    "plans an edit's statements for the template edit loop (src/templates/edit.ts), which writes the event in the same batch",
  "src/upload/cleanup.ts#removeExpiredUploads":
    "removes uploads that never completed; their files were never visible and had no created event",
  "src/upload/uploads/store.ts#insertUpload":
    "an upload in progress: its file is not visible until completion, which writes the created event",
  "src/upload/uploads/store.ts#recordPart": "a part of an upload in progress",
  "src/upload/uploads/store.ts#removeUpload": "aborting an upload in progress, whose file was never visible",
  "src/dataprocessing/jobs.ts#recordOutputRejection":
    "keeps the last rejected outputs on the job for diagnosis; not a change of the job's state",
  "src/imports/store.ts#markSplit":
    "an import's progress (its file split into chunks); its `updated` event is written once, when it ends (src/imports/store.ts)",
  "src/imports/store.ts#recordChunk":
    "an import's progress (one chunk's counts); its `updated` event is written once, when it ends, not per chunk of 100 rows",
  "src/subscriptions/sender.ts#attemptDelivery":
    "delivery bookkeeping of a subscription (failures, last delivery), not a change its owner made",
};

const sources = import.meta.glob(["../../src/**/*.ts", "../../durable-objects/*.ts"], {
  query: "?raw",
  import: "default",
  eager: true,
}) as Record<string, string>;

/** Tables whose rows are resources: they carry an ETag. */
function resourceTables(): Set<string> {
  const tables = new Set<string>();
  for (const value of Object.values(schema)) {
    if (!is(value, SQLiteTable)) continue;
    const config = getTableConfig(value);
    if (config.columns.some((column) => column.name === "etag")) tables.add(config.name);
  }
  return tables;
}

/** `file#function` → the resource tables it writes, for every function that writes one and no event. */
function writesWithoutEvents(): Map<string, string[]> {
  const tables = resourceTables();
  const found = new Map<string, string[]>();
  const files = Object.fromEntries(Object.entries(sources).map(([path, text]) => [path.replace(/^(\.\.\/)+/, ""), text]));
  for (const f of functionWrites(files, schemaTables(schemaText))) {
    if (BUILDER.test(f.name)) continue;
    const written = [...f.tables].filter((table) => tables.has(table));
    if (written.length > 0 && !f.tables.has("outbox")) found.set(`${f.file}#${f.name}`, written);
  }
  return found;
}

describe("PUT and DELETE honour If-Match", async () => {
  const doc = (await call("/openapi.json", { anonymous: true })).body as {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  };
  const routes = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([method]) => method === "put" || method === "delete")
      .map(([method, operation]) => ({ route: `${method.toUpperCase()} ${path}`, declares412: "412" in operation.responses })),
  );

  it("covers the document's writes", () => {
    expect(routes.length).toBeGreaterThan(60);
  });

  it("every PUT and DELETE declares 412, or is named with its reason", () => {
    const missing = routes.filter((r) => !r.declares412 && !(r.route in WITHOUT_IF_MATCH)).map((r) => r.route);
    expect(
      missing,
      "declare 412 (errors: [412]) and check If-Match with assertVersion, or name the route in WITHOUT_IF_MATCH with a reason",
    ).toEqual([]);
  });

  it("names no route that declares 412 now, or is gone", () => {
    const byRoute = new Map(routes.map((r) => [r.route, r.declares412]));
    const stale = Object.keys(WITHOUT_IF_MATCH).filter((route) => byRoute.get(route) !== false);
    expect(stale).toEqual([]);
  });
});

describe("writes of a resource emit an event", () => {
  const found = writesWithoutEvents();

  it("reads the source", () => {
    expect(Object.keys(sources).length).toBeGreaterThan(100);
    expect(resourceTables().size).toBeGreaterThan(20);
  });

  it("every function writing a resource's row writes an event, or is named with its reason", () => {
    const missing = [...found].filter(([key]) => !(key in WITHOUT_EVENT)).map(([key, tables]) => `${key} (${tables.join(", ")})`);
    expect(
      missing,
      "write the change's event in the same batch (outboxStatements / guardedOutboxStatements), or name the function in " +
        "WITHOUT_EVENT with a reason",
    ).toEqual([]);
  });

  it("names no function that writes its event now (or no resource row)", () => {
    const files = new Set(Object.keys(sources).map((path) => path.replace(/^(\.\.\/)+/, "")));
    // A function of a file not in this tree (work in progress elsewhere) is not held against the list.
    const stale = Object.keys(WITHOUT_EVENT).filter((key) => files.has(key.split("#")[0]!) && !found.has(key));
    expect(stale).toEqual([]);
  });

  it("would see a write without an event, through the kit and a builder too", () => {
    const written = functionWrites(
      {
        "a.ts": [
          "const categoryTable = tableStatements(categories);",
          "export function renameStatement(db) {\n  return categoryTable.update(db, { name: 'x' }, { id: 'a' });\n}",
          'export async function forget(ctx) {\n  await ctx.db.prepare("UPDATE categories SET name = ?1 WHERE id = ?2").run();\n}',
          "export async function rename(ctx) {\n  await ctx.db.batch([renameStatement(ctx.db)]);\n}",
          "export async function renameWithEvent(ctx) {\n" +
            "  await ctx.db.batch([renameStatement(ctx.db), outboxStatements(ctx.db, ctx, {})]);\n}",
        ].join("\n"),
      },
      new Map([["categories", "categories"]]),
    );
    const byName = new Map(written.map((f) => [f.name, [...f.tables].sort()]));
    expect(byName.get("forget")).toEqual(["categories"]);
    expect(byName.get("rename")).toEqual(["categories"]);
    expect(byName.get("renameWithEvent")).toEqual(["categories", "outbox"]);
  });
});
