import { nowMs, platform } from "../src/platform/services";
import { DurableObject } from "cloudflare:workers";
import type { Bindings } from "../src/env";
import { errorFields } from "../src/pkg/logger";
import { taskLogger } from "../src/config";
import { SerialQueue } from "../src/pkg/serial";
import { searchableText, type Mapping } from "../src/search/mapping";
import type { PlannedSearch, Searcher, SearchResult } from "../src/search/query";
import { generationTables } from "../src/search/generations";
import { standardIndex, type SearchDocument } from "../src/search/standard";
import type { SyncOutcome } from "../src/search/store";
import { documentPermission, mayReadDocument, userMark } from "../src/search/access";
import { PERMISSIONS } from "../src/pkg/permissions";

/*
 * The search area's heavier modules (the query compiler, the sync store, the library runner and its
 * sandbox) are loaded when the object first uses them: imported here, their schemas would be built
 * while the Worker starts, which the platform limits (src/index.ts).
 */
const store = () => import("../src/search/store");
const query = () => import("../src/search/query");
const library = () => import("../src/search/library");

/** Documents written per SQLite transaction. */
const WRITE_BATCH = 500;
/** Documents read from D1 per page of a standard index's full synchronisation. */
const PAGE = 500;
/** Wall time one alarm spends on a full synchronisation before it re-arms (the rest runs in the next alarm). */
const STEP_MS = 10_000;

interface Build {
  syncId: string;
  generation: number;
  cursor: string;
  documents: number;
  startedAt: string;
  reason: string;
}

/**
 * The documents of ONE search index (`idFromName(indexId)`), in this object's own SQLite: a `docs`
 * table and an FTS5 table over their words, so every index has its own database (up to a Durable
 * Object's 10 GB) and indices scale out across objects instead of sharing D1.
 *
 * Documents belong to a generation, each with its own pair of tables (`docs_N`, `fts_N`). Queries read
 * the current one; a full synchronisation writes the next one beside it and switches over only when it
 * completed (then drops the old tables), so a failed synchronisation leaves the previous documents in
 * place. Event refreshes write to every live generation.
 */
export class SearchIndex extends DurableObject<Bindings> {
  private readonly sql: SqlStorage;
  /** Keys refreshed by events while a build runs, with the time: a build page read earlier must not overwrite them. */
  private readonly refreshedAt = new Map<string, number>();
  private readonly queue = new SerialQueue();

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.createTables();
  }

  private createTables(): void {
    this.sql.exec("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)");
    this.createGeneration(this.generation);
  }

  private createGeneration(gen: number): void {
    const { docs, fts } = generationTables(gen);
    this.sql.exec(`
      CREATE TABLE IF NOT EXISTS ${docs} (rowid INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, fields TEXT NOT NULL, permission TEXT);
      CREATE VIRTUAL TABLE IF NOT EXISTS ${fts} USING fts5(body, tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3 4');
    `);
  }

  private meta<T>(key: string): T | undefined {
    const row = this.sql.exec<{ v: string }>("SELECT v FROM meta WHERE k = ?", key).toArray()[0];
    return row ? (JSON.parse(row.v) as T) : undefined;
  }

  private setMeta(key: string, value: unknown): void {
    if (value === undefined) this.sql.exec("DELETE FROM meta WHERE k = ?", key);
    else this.sql.exec("INSERT INTO meta (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v", key, JSON.stringify(value));
  }

  /**
   * The distinct `permission` values of a generation's documents (null left out), kept in meta as
   * documents are written so a search knows at once whether its caller misses any; a generation from
   * before they were kept is counted once.
   */
  private permissionValues(gen: number): string[] {
    const known = this.meta<string[]>(`permissions:${gen}`);
    if (known) return known;
    const values = this.sql
      .exec<{ permission: string }>(`SELECT DISTINCT permission FROM ${generationTables(gen).docs} WHERE permission IS NOT NULL`)
      .toArray()
      .map((r) => r.permission);
    this.setMeta(`permissions:${gen}`, values);
    return values;
  }

  /**
   * Documents a library wrote before they carried their clients' permissions have none (null), and so
   * were shown to every reader of the index. Once, before anything else, such documents of a
   * library-fed index are given every read permission the library was granted (its owner's when it
   * was uploaded): the most they can hold. The next synchronisation writes the exact ones.
   */
  private async adoptDocumentPermissions(): Promise<void> {
    if (this.meta<number>("documentPermissions") === 1) return;
    const indexId = this.meta<string>("indexId");
    const generations = this.liveGenerations();
    if (indexId && !standardIndex(indexId)?.source) {
      const unmarked = generations.filter(
        (gen) => this.sql.exec(`SELECT 1 FROM ${generationTables(gen).docs} WHERE permission IS NULL LIMIT 1`).toArray().length > 0,
      );
      if (unmarked.length > 0) {
        const row = await (await store()).readIndexRow(this.env.DB, indexId);
        const grant = JSON.parse(row?.grant_permissions ?? "[]") as string[];
        // The files client read as the owner: what it returned is the owner's to see.
        const permission = documentPermission(row && grant.includes(PERMISSIONS.filesRead) ? [...grant, userMark(row.owner_id)] : grant);
        if (permission !== null)
          for (const gen of unmarked)
            this.sql.exec(`UPDATE ${generationTables(gen).docs} SET permission = ? WHERE permission IS NULL`, permission);
      }
    }
    for (const gen of generations) this.setMeta(`permissions:${gen}`, undefined);
    this.setMeta("documentPermissions", 1);
  }

  private get generation(): number {
    return this.meta<number>("generation") ?? 1;
  }

  private liveGenerations(): number[] {
    const build = this.meta<Build>("build");
    return build ? [this.generation, build.generation] : [this.generation];
  }

  /** Serialises synchronisation steps (refreshes and searches run freely between them). */
  private serialised<T>(work: () => Promise<T>): Promise<T> {
    return this.queue.run(work);
  }

  /** Writes documents into the given generations (replacing those with the same keys). */
  private write(generations: readonly number[], docs: readonly SearchDocument[], mapping: Mapping): void {
    for (let i = 0; i < docs.length; i += WRITE_BATCH) {
      const batch = docs.slice(i, i + WRITE_BATCH);
      this.ctx.storage.transactionSync(() => {
        for (const gen of generations) {
          const t = generationTables(gen);
          const values = this.permissionValues(gen);
          const added = [...new Set(batch.map((d) => d.permission).filter((p): p is string => p !== null && !values.includes(p)))];
          if (added.length > 0) this.setMeta(`permissions:${gen}`, [...values, ...added]);
          for (const doc of batch) {
            const old = this.sql.exec<{ rowid: number }>(`SELECT rowid FROM ${t.docs} WHERE key = ?`, doc.key).toArray()[0];
            if (old) {
              this.sql.exec(
                `UPDATE ${t.docs} SET fields = ?, permission = ? WHERE rowid = ?`,
                JSON.stringify(doc.fields),
                doc.permission,
                old.rowid,
              );
              this.sql.exec(`DELETE FROM ${t.fts} WHERE rowid = ?`, old.rowid);
              this.sql.exec(`INSERT INTO ${t.fts} (rowid, body) VALUES (?, ?)`, old.rowid, searchableText(mapping, doc.fields));
            } else {
              const { rowid } = this.sql
                .exec<{ rowid: number }>(
                  `INSERT INTO ${t.docs} (key, fields, permission) VALUES (?, ?, ?) RETURNING rowid`,
                  doc.key,
                  JSON.stringify(doc.fields),
                  doc.permission,
                )
                .one();
              this.sql.exec(`INSERT INTO ${t.fts} (rowid, body) VALUES (?, ?)`, rowid, searchableText(mapping, doc.fields));
            }
          }
        }
      });
    }
  }

  private remove(generations: readonly number[], keys: readonly string[]): void {
    this.ctx.storage.transactionSync(() => {
      for (const gen of generations) {
        const t = generationTables(gen);
        for (const key of keys) {
          // A key ending in ':' stands for every document whose key starts with it (an activity's inputs).
          const rows = key.endsWith(":")
            ? this.sql
                .exec<{ rowid: number }>(`SELECT rowid FROM ${t.docs} WHERE key >= ? AND key < ?`, key, `${key.slice(0, -1)};`)
                .toArray()
            : this.sql.exec<{ rowid: number }>(`SELECT rowid FROM ${t.docs} WHERE key = ?`, key).toArray();
          for (const { rowid } of rows) {
            this.sql.exec(`DELETE FROM ${t.fts} WHERE rowid = ?`, rowid);
            this.sql.exec(`DELETE FROM ${t.docs} WHERE rowid = ?`, rowid);
          }
        }
      }
    });
  }

  private dropGeneration(gen: number): void {
    const t = generationTables(gen);
    this.sql.exec(`DROP TABLE IF EXISTS ${t.fts}`);
    this.sql.exec(`DROP TABLE IF EXISTS ${t.docs}`);
    this.setMeta(`permissions:${gen}`, undefined);
  }

  private countDocuments(gen: number): number {
    return this.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${generationTables(gen).docs}`).one().n;
  }

  /**
   * Re-reads the documents of these keys of a standard index from D1 (an event changed them): a key
   * whose entity is gone is removed.
   */
  async refresh(indexId: string, keys: string[]): Promise<{ written: number; removed: number }> {
    const index = standardIndex(indexId);
    if (!index?.source) return { written: 0, removed: 0 };
    this.setMeta("indexId", indexId);
    await this.adoptDocumentPermissions();
    const docs = await index.source.byKeys(this.env.DB, keys);
    const found = new Set(docs.map((d) => d.key));
    const gone = keys.filter((k) => (k.endsWith(":") ? true : !found.has(k)));
    const generations = this.liveGenerations();
    if (this.meta<Build>("build")) for (const key of keys) this.refreshedAt.set(key, nowMs());
    this.remove(generations, gone);
    this.write(generations, docs, index.mapping);
    return { written: docs.length, removed: gone.length };
  }

  /** Starts a full synchronisation unless one runs; it continues in alarms. */
  async synchronize(indexId: string, syncId: string, reason: string): Promise<{ started: boolean; syncId: string }> {
    this.setMeta("indexId", indexId);
    await this.adoptDocumentPermissions();
    const running = this.meta<Build>("build");
    if (running) return { started: false, syncId: running.syncId };
    const build: Build = {
      syncId,
      generation: this.generation + 1,
      cursor: "",
      documents: 0,
      startedAt: platform().clock.now().toISOString(),
      reason,
    };
    this.dropGeneration(build.generation);
    this.createGeneration(build.generation);
    this.setMeta("build", build);
    this.refreshedAt.clear();
    await (await store()).markSyncStarted(this.env.DB, indexId, syncId, reason);
    await this.ctx.storage.setAlarm(nowMs());
    return { started: true, syncId };
  }

  override async alarm(): Promise<void> {
    await this.serialised(() => this.step());
  }

  private async step(): Promise<void> {
    const build = this.meta<Build>("build");
    const indexId = this.meta<string>("indexId");
    if (!build || !indexId) return;
    const log = taskLogger(this.env, { task: "search-sync", indexId, syncId: build.syncId });
    try {
      const standard = standardIndex(indexId);
      if (standard?.source) {
        const started = performance.now();
        for (;;) {
          const readAt = nowMs();
          const page = await standard.source.page(this.env.DB, build.cursor, PAGE);
          const fresh = page.filter((d) => (this.refreshedAt.get(d.key) ?? 0) < readAt);
          this.write([build.generation], fresh, standard.mapping);
          build.documents += page.length;
          if (page.length > 0) build.cursor = page[page.length - 1]!.key;
          this.setMeta("build", build);
          if (page.length < PAGE)
            return await this.commit(indexId, build, {
              status: "Succeeded",
              message: `${build.documents} documents from the platform's data.`,
            });
          if (performance.now() - started > STEP_MS) return void (await this.ctx.storage.setAlarm(nowMs()));
        }
      }
      const row = await (await store()).readIndexRow(this.env.DB, indexId);
      if (!row) return this.abandon();
      let mapping: Mapping | null = null;
      const { runLibrary, MAX_LOG_LINES, MAX_LOG_BYTES } = await library();
      const outcome = await runLibrary(this.env, row, {
        reset: () => {
          this.dropGeneration(build.generation);
          this.createGeneration(build.generation);
        },
        begin: (m) => void (mapping = m),
        write: (docs) => this.write([build.generation], docs, mapping!),
      });
      if (outcome.logs.length > 0) await (await store()).writeLogs(this.env.DB, indexId, build.syncId, outcome.logs);
      const truncated = outcome.logTruncated ? ` Its log was truncated at ${MAX_LOG_LINES} lines or ${MAX_LOG_BYTES / 1024} KiB.` : "";
      if (!outcome.ok) return await this.fail(indexId, build, outcome.message + truncated);
      build.documents = outcome.documents;
      await this.commit(
        indexId,
        build,
        { status: "Succeeded", message: `${build.documents} documents from the library.${truncated}` },
        outcome.mapping,
      );
    } catch (error) {
      log.error("search synchronisation failed", errorFields(error));
      await this.fail(indexId, build, `The synchronisation stopped: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private async commit(
    indexId: string,
    build: Build,
    outcome: Omit<SyncOutcome, "documents" | "startedAt" | "endedAt" | "syncId" | "reason">,
    mapping?: Mapping,
  ): Promise<void> {
    const previous = this.generation;
    this.ctx.storage.transactionSync(() => {
      this.setMeta("generation", build.generation);
      this.setMeta("build", undefined);
    });
    this.dropGeneration(previous);
    this.refreshedAt.clear();
    const documents = this.countDocuments(build.generation);
    await (
      await store()
    ).finishSync(
      this.env.DB,
      indexId,
      {
        ...outcome,
        documents,
        syncId: build.syncId,
        reason: build.reason,
        startedAt: build.startedAt,
        endedAt: platform().clock.now().toISOString(),
      },
      mapping,
    );
  }

  /** A failed synchronisation: the next generation is dropped, the current one stays. */
  private async fail(indexId: string, build: Build, message: string): Promise<void> {
    this.dropGeneration(build.generation);
    this.setMeta("build", undefined);
    this.refreshedAt.clear();
    await (await store()).writeLog(this.env.DB, indexId, build.syncId, "error", message);
    const documents = this.countDocuments(this.generation);
    await (
      await store()
    ).finishSync(this.env.DB, indexId, {
      status: "Failed",
      message,
      documents,
      syncId: build.syncId,
      reason: build.reason,
      startedAt: build.startedAt,
      endedAt: platform().clock.now().toISOString(),
    });
  }

  private abandon(): void {
    this.setMeta("build", undefined);
  }

  /**
   * Runs a planned search (the Worker checked it against the mapping) for one caller, over the
   * documents whose permissions the caller holds every one of (src/search/access.ts).
   */
  async search(plan: PlannedSearch, mapping: Mapping, searcher: Searcher): Promise<Omit<SearchResult, "index">> {
    const { compileSearch, highlight } = await query();
    await this.adoptDocumentPermissions();
    const gen = this.generation;
    const held = new Set(searcher.permissions);
    const values = this.permissionValues(gen);
    const visible = values.every((p) => mayReadDocument(p, held)) ? undefined : values.filter((p) => mayReadDocument(p, held));
    const compiled = compileSearch(plan, mapping, searcher, gen, visible);
    const ranked = this.sql.exec<{ rid: number; score: number | null }>(compiled.page.sql, ...compiled.page.params).toArray();
    const total =
      plan.skip === 0 && ranked.length < plan.take
        ? ranked.length
        : this.sql.exec<{ n: number }>(compiled.count.sql, ...compiled.count.params).one().n;
    const { docs } = generationTables(gen);
    const rows = new Map(
      ranked.length === 0
        ? []
        : this.sql
            .exec<{ rowid: number; key: string; fields: string }>(
              `SELECT rowid, key, fields FROM ${docs} WHERE rowid IN (SELECT value FROM json_each(?))`,
              JSON.stringify(ranked.map((r) => r.rid)),
            )
            .toArray()
            .map((r) => [r.rowid, r]),
    );
    const results = ranked.flatMap(({ rid, score }) => {
      const row = rows.get(rid);
      if (!row) return [];
      const all = JSON.parse(row.fields) as Record<string, unknown>;
      const fields = Object.fromEntries(plan.fields.filter((f) => Object.hasOwn(all, f)).map((f) => [f, all[f]]));
      const result: SearchResult["results"][number] = { id: row.key, score: score === null ? null : Math.round(score * 1e6) / 1e6, fields };
      if (plan.highlight && plan.terms.length > 0) {
        const marks: Record<string, string> = {};
        for (const f of plan.fields) {
          const type = mapping[f]?.type;
          const value = all[f];
          if ((type !== "text" && type !== "keyword") || value === undefined) continue;
          const text = Array.isArray(value)
            ? value.filter((v) => typeof v === "string").join(", ")
            : typeof value === "string"
              ? value
              : "";
          const marked = highlight(text, plan.terms);
          if (marked) marks[f] = marked;
        }
        if (Object.keys(marks).length > 0) result.highlights = marks;
      }
      return [result];
    });
    const out: Omit<SearchResult, "index"> = { total, skip: plan.skip, take: plan.take, results };
    if (compiled.facets.length > 0) {
      out.facets = Object.fromEntries(
        compiled.facets.map((f) => [
          f.field,
          this.sql
            .exec<{ value: SqlStorageValue; n: number }>(f.sql, ...f.params)
            .toArray()
            .map((r) => ({ value: mapping[f.field]?.type === "boolean" ? r.value === 1 : r.value, count: r.n })),
        ]),
      );
    }
    return out;
  }

  /** Documents in the current generation, and whether a synchronisation runs. */
  async stats(): Promise<{ documents: number; synchronizing: boolean }> {
    const documents = this.countDocuments(this.generation);
    return { documents, synchronizing: Boolean(this.meta<Build>("build")) };
  }

  /** Removes every document (the index was deleted). */
  async destroy(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.createTables();
  }
}
