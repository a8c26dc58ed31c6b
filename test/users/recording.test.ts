/**
 * Issue 21 §4: recording who calls costs no D1 write on the request path of every request. The D1
 * binding is wrapped to count every statement that is not a read, run or batched, during and after
 * each response.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { RECORD_INTERVAL_MS } from "../../src/users/recorder";
import { tokenFor } from "../support/http";
import { appWith, newPerson, settledCall } from "./support";

const READ = /^\s*(SELECT|WITH|PRAGMA|EXPLAIN)\b/i;

/** env.DB, counting the write statements it runs (alone or in a batch). */
function countingDb(db: D1Database): { db: D1Database; writes: string[] } {
  const writes: string[] = [];
  const sqlOf = new WeakMap<object, string>();
  const targetOf = new WeakMap<object, D1PreparedStatement>();
  const wrap = (statement: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const proxy = new Proxy(statement, {
      get(target, property) {
        if (property === "bind") return (...values: unknown[]) => wrap(target.bind(...values), sql);
        if (property === "run" || property === "all" || property === "first" || property === "raw") {
          return (...args: unknown[]) => {
            if (!READ.test(sql)) writes.push(sql);
            return (target[property] as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        const value = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    sqlOf.set(proxy, sql);
    targetOf.set(proxy, statement);
    return proxy;
  };
  const proxy = new Proxy(db, {
    get(target, property) {
      if (property === "prepare") return (sql: string) => wrap(target.prepare(sql), sql);
      if (property === "batch") {
        return (statements: D1PreparedStatement[]) => {
          for (const s of statements) if (!READ.test(sqlOf.get(s) ?? "")) writes.push(sqlOf.get(s) ?? "?");
          return target.batch(statements.map((s) => targetOf.get(s) ?? s));
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { db: proxy, writes };
}

describe("recording callers", () => {
  it("writes a principal once for 20 requests (one upsert, after the response), and again only after the interval", async () => {
    let now = Date.parse("2026-11-22T10:00:00.000Z");
    const app = appWith({ clock: { now: () => new Date(now) } });
    const { db, writes } = countingDb(env.DB);
    const counted = { ...env, DB: db };
    const user = newPerson("Busy Phone");
    for (let i = 0; i < 20; i++) {
      expect((await settledCall("/Categories", { user, app, env: counted })).status).toBe(200);
      now += 1000;
    }
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatch(/^INSERT INTO users/);
    const row = await env.DB.prepare("SELECT first_seen_at, last_seen_at FROM users WHERE id = ?1").bind(user.id).first();
    expect(row).toEqual({ first_seen_at: "2026-11-22T10:00:00.000Z", last_seen_at: "2026-11-22T10:00:00.000Z" });

    // Five minutes after the first sighting the next request records the principal again.
    now = Date.parse("2026-11-22T10:00:00.000Z") + RECORD_INTERVAL_MS;
    await settledCall("/Categories", { user, app, env: counted });
    await settledCall("/Categories", { user, app, env: counted });
    expect(writes).toHaveLength(2);
    const later = await env.DB.prepare("SELECT first_seen_at, last_seen_at FROM users WHERE id = ?1").bind(user.id).first();
    expect(later).toEqual({ first_seen_at: "2026-11-22T10:00:00.000Z", last_seen_at: "2026-11-22T10:05:00.000Z" });
  });

  it("writes no row when another isolate recorded the principal within the interval", async () => {
    const now = Date.parse("2026-11-22T11:00:00.000Z");
    const user = newPerson("Two Isolates");
    // Another isolate's record, a minute old.
    await env.DB.prepare(
      "INSERT INTO users (id, name, kind, client_id, first_seen_at, last_seen_at) VALUES (?1, ?2, 'person', NULL, ?3, ?3)",
    )
      .bind(user.id, user.name, new Date(now - 60_000).toISOString())
      .run();
    const app = appWith({ clock: { now: () => new Date(now) } });
    await settledCall("/Categories", { user, app });
    const row = await env.DB.prepare("SELECT last_seen_at FROM users WHERE id = ?1").bind(user.id).first<{ last_seen_at: string }>();
    expect(row!.last_seen_at).toBe(new Date(now - 60_000).toISOString());
  });

  it("answers while the record is still being written: the request never waits for it", async () => {
    const user = newPerson("Impatient");
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // A D1 whose writes hang until released: the answer must come first.
    const slow = new Proxy(env.DB, {
      get(target, property) {
        if (property === "prepare") {
          return (sql: string) => {
            const statement = target.prepare(sql);
            if (!sql.startsWith("INSERT INTO users")) return statement;
            return new Proxy(statement, {
              get(t, p) {
                if (p === "bind") return (...v: unknown[]) => ({ run: async () => (await gate, t.bind(...v).run()) });
                const value = Reflect.get(t, p, t);
                return typeof value === "function" ? value.bind(t) : value;
              },
            });
          };
        }
        const value = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const app = appWith({});
    const ctx = createExecutionContext();
    const res = await app.fetch(
      new Request("https://api.test/Categories", { headers: { authorization: `Bearer ${await tokenFor(user)}` } }),
      { ...env, DB: slow },
      ctx,
    );
    expect(res.status).toBe(200);
    expect(await env.DB.prepare("SELECT id FROM users WHERE id = ?1").bind(user.id).first()).toBeNull();
    release();
    await waitOnExecutionContext(ctx);
    expect(await env.DB.prepare("SELECT id FROM users WHERE id = ?1").bind(user.id).first()).toEqual({ id: user.id });
  });
});
