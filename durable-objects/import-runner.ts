import { DurableObject } from "cloudflare:workers";
import type { Bindings } from "../src/env";
import { taskLogger } from "../src/config";
import { relayOutbox } from "../src/events/outbox";
import { errorFields } from "../src/pkg/logger";
import { nowMs } from "../src/platform/services";
import type { Carry } from "../src/imports/kinds/kind";

/** The imports' runner and store, loaded when first used, not while the Worker starts (src/index.ts). */
const imports = () => Promise.all([import("../src/imports/run"), import("../src/imports/store")]);

/** The step that failed last and how often in a row (kept across alarms, retries and the cron's pokes). */
interface Failures {
  step: string;
  count: number;
}

/**
 * Drives ONE import (`idFromName(importId)`) by its alarm: `run` stores the import id and sets the alarm
 * for now; each alarm runs ONE step (the split, or one chunk of 100 rows, src/imports/run.ts), the step
 * the import's row in D1 says is next, then sets the next alarm (now) while a step remains. A Durable
 * Object runs one alarm at a time, so an import's steps never overlap; a `run` while a step is in flight
 * only moves the next alarm. A step that throws is retried by the runtime's alarm retries (from 2 s,
 * doubling); MAX_STEP_ATTEMPTS failures of the same step in a row (whoever retried it: the runtime or
 * the minute cron's poke) fail the import. D1 holds the import; this object holds only its id, the
 * failure count and a dry run's carry (below), and forgets them all once the import has ended.
 */
export class ImportRunner extends DurableObject<Bindings> {
  /** Starts the import, or pokes it (the minute cron): its next step runs now. */
  async run(importId: string): Promise<void> {
    await this.ctx.storage.put("importId", importId);
    await this.ctx.storage.setAlarm(nowMs());
  }

  override async alarm(): Promise<void> {
    const importId = await this.ctx.storage.get<string>("importId");
    if (!importId) return;
    const log = taskLogger(this.env, { task: "imports", importId });
    const [{ giveUpImport, MAX_STEP_ATTEMPTS, runImportStep, stepOf }, { findImport }] = await imports();
    const row = await findImport(this.env.DB, importId);
    const step = row && stepOf(row);
    if (!row || !step) return this.forget();
    const key = step.step === "split" ? "split" : `chunk ${step.chunk}`;
    let next: unknown;
    try {
      next = await runImportStep(this.env, step, log, (chunk) => this.carry(chunk), row);
    } catch (error) {
      const failures = await this.ctx.storage.get<Failures>("failures");
      const count = failures?.step === key ? failures.count + 1 : 1;
      if (count < MAX_STEP_ATTEMPTS) {
        await this.ctx.storage.put("failures", { step: key, count } satisfies Failures);
        log.warn("import step will be retried", { step: key, attempts: count, ...errorFields(error) });
        // The runtime retries the alarm (exponential backoff from 2 s).
        throw error;
      }
      log.error("import step given up on", { step: key, attempts: count, ...errorFields(error) });
      await giveUpImport(this.env, importId);
      next = null;
    } finally {
      // A step's events (the rows' created events, the import's end) leave now: no request follows them to relay.
      this.ctx.waitUntil(
        relayOutbox(this.env, log).catch((error: unknown) => log.warn("outbox relay after a step failed", errorFields(error))),
      );
    }
    if (!next) return this.forget();
    await this.ctx.storage.delete("failures");
    await this.ctx.storage.setAlarm(nowMs());
  }

  /**
   * What a dry run's chunks before `chunk` kept (src/imports/kinds/kind.ts, Carry), in this object's
   * SQLite: the records their rows would have created, by id and by each of their keys. What an earlier
   * attempt at `chunk` itself kept is dropped first, so a retried chunk finds only its predecessors'.
   */
  private carry(chunk: number): Carry {
    const sql = this.ctx.storage.sql;
    sql.exec("CREATE TABLE IF NOT EXISTS carried (id TEXT PRIMARY KEY, chunk INTEGER NOT NULL, value TEXT NOT NULL)");
    sql.exec("CREATE TABLE IF NOT EXISTS carried_keys (key TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (key, id))");
    sql.exec("DELETE FROM carried_keys WHERE id IN (SELECT id FROM carried WHERE chunk >= ?)", chunk);
    sql.exec("DELETE FROM carried WHERE chunk >= ?", chunk);
    return {
      add: (id, keys, value) => {
        sql.exec("INSERT OR REPLACE INTO carried (id, chunk, value) VALUES (?, ?, ?)", id, chunk, JSON.stringify(value));
        for (const key of keys) sql.exec("INSERT OR IGNORE INTO carried_keys (key, id) VALUES (?, ?)", key, id);
      },
      byId: (id) => {
        const [row] = sql.exec<{ value: string }>("SELECT value FROM carried WHERE id = ?", id).toArray();
        return row ? (JSON.parse(row.value) as unknown) : undefined;
      },
      byKey: (key) =>
        sql
          .exec<{ value: string }>(
            "SELECT c.value FROM carried_keys k JOIN carried c ON c.id = k.id WHERE k.key = ? ORDER BY c.chunk, c.rowid",
            key,
          )
          .toArray()
          .map((row) => JSON.parse(row.value) as unknown),
    };
  }

  /** The import has ended (or is gone): nothing is kept, no alarm is left. */
  private async forget(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
  }
}
