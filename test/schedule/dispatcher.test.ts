import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/pkg/logger";
import {
  dispatchDueRuns,
  MAX_ATTEMPTS,
  nextRunAfter,
  readSchedule,
  runKeyOf,
  scheduleRuleProblem,
  scheduleStatement,
  type DueRun,
  type ScheduleKind,
  type ScheduleRule,
} from "../../src/pkg/schedule";

const log = createLogger("error");

/** A kind that records what it was asked to start; `fail` names owners whose start fails. */
function recordingKind(kind: string, options: { fail?: Set<string>; throws?: boolean } = {}) {
  const started: DueRun[] = [];
  const registration: ScheduleKind = {
    kind,
    async start(_env, runs) {
      if (options.throws) throw new Error("host down");
      started.push(...runs.filter((r) => !options.fail?.has(r.ownerId)));
      return runs.filter((r) => options.fail?.has(r.ownerId)).map((r) => r.runKey);
    },
  };
  return { registration, started };
}

const uniqueKind = () => `test-${crypto.randomUUID().slice(0, 8)}`;

async function save(kind: string, ownerId: string, rule: ScheduleRule | null, now: Date) {
  await env.DB.batch([scheduleStatement(env.DB, kind, ownerId, rule, now)]);
}

describe("schedule rules", () => {
  it.each([
    [{ cron: "* * * * * *" }, "cron", "5 fields"],
    [{ cron: "@daily" }, "cron", "5 fields"],
    [{ cron: "61 * * * *" }, "cron", "minute"],
    [{ cron: "0 6 * * mon", timeZone: "Mars/Olympus" }, "timeZone", "IANA"],
    [{ cron: "0 6 * * mon", startAt: "2026-01-05T06:00:00Z" }, "startAt", "without a zone"],
  ] as const)("refuses %j, naming the %s", (rule, part, words) => {
    const problem = scheduleRuleProblem(rule);
    expect(problem?.part).toBe(part);
    expect(problem?.message).toContain(words);
  });

  it("accepts a 5-field expression in a named zone from a start date", () => {
    expect(scheduleRuleProblem({ cron: "0 6 * * mon", timeZone: "Europe/Berlin", startAt: "2026-01-05T06:00:00" })).toBeNull();
  });

  it("keeps local time across a daylight-saving change in a named zone", () => {
    const rule = { cron: "0 6 * * sun", timeZone: "Europe/Berlin" };
    // 22 March 2026 is CET (UTC+1), 29 March is CEST (UTC+2): 06:00 local both times.
    expect(nextRunAfter(rule, new Date("2026-03-20T00:00:00Z"))?.toISOString()).toBe("2026-03-22T05:00:00.000Z");
    expect(nextRunAfter(rule, new Date("2026-03-23T00:00:00Z"))?.toISOString()).toBe("2026-03-29T04:00:00.000Z");
    // Without a zone the same expression is UTC.
    expect(nextRunAfter({ cron: "0 6 * * sun" }, new Date("2026-03-23T00:00:00Z"))?.toISOString()).toBe("2026-03-29T06:00:00.000Z");
  });

  it("runs nothing before the start date", () => {
    const rule = { cron: "0 6 * * mon", startAt: "2026-02-01T00:00:00" };
    expect(nextRunAfter(rule, new Date("2026-01-01T00:00:00Z"))?.toISOString()).toBe("2026-02-02T06:00:00.000Z");
  });
});

describe("the minute dispatcher", () => {
  it("starts a due schedule once and moves it to its next occurrence", async () => {
    const kind = uniqueKind();
    const { registration, started } = recordingKind(kind);
    await save(kind, "a", { cron: "*/10 * * * *" }, new Date("2026-05-01T10:01:00Z"));
    expect((await readSchedule(env.DB, kind, "a"))?.nextRunAt).toBe("2026-05-01T10:10:00.000Z");

    await dispatchDueRuns(env, new Date("2026-05-01T10:09:00Z"), [registration], log);
    expect(started).toEqual([]);

    const report = await dispatchDueRuns(env, new Date("2026-05-01T10:10:00Z"), [registration], log);
    expect(report).toMatchObject({ claimed: 1, started: 1, failed: 0 });
    expect(started).toEqual([
      { kind, ownerId: "a", dueAt: "2026-05-01T10:10:00.000Z", runKey: runKeyOf(kind, "a", "2026-05-01T10:10:00.000Z") },
    ]);
    const state = await readSchedule(env.DB, kind, "a");
    expect(state).toMatchObject({ nextRunAt: "2026-05-01T10:20:00.000Z", lastRunKey: started[0]!.runKey, lastError: null });
  });

  it("starts each due run once when a tick is delivered twice or two ticks overlap", async () => {
    const kind = uniqueKind();
    const { registration, started } = recordingKind(kind);
    const now = new Date("2026-05-01T12:00:00Z");
    for (let i = 0; i < 40; i++) await save(kind, `o${i}`, { cron: "0 12 * * *" }, new Date("2026-05-01T11:00:00Z"));
    await Promise.all([
      dispatchDueRuns(env, now, [registration], log),
      dispatchDueRuns(env, now, [registration], log),
      dispatchDueRuns(env, now, [registration], log),
    ]);
    await dispatchDueRuns(env, now, [registration], log);
    expect(started).toHaveLength(40);
    expect(new Set(started.map((r) => r.runKey)).size).toBe(40);
  });

  it("runs occurrences missed while the service was down once, then the first after now", async () => {
    const kind = uniqueKind();
    const { registration, started } = recordingKind(kind);
    await save(kind, "a", { cron: "0 * * * *" }, new Date("2026-05-01T06:30:00Z"));
    // Down from 06:30 to 10:15: 07:00, 08:00, 09:00 and 10:00 were missed.
    await dispatchDueRuns(env, new Date("2026-05-01T10:15:00Z"), [registration], log);
    expect(started.map((r) => r.dueAt)).toEqual(["2026-05-01T07:00:00.000Z"]);
    expect((await readSchedule(env.DB, kind, "a"))?.nextRunAt).toBe("2026-05-01T11:00:00.000Z");
  });

  it("retries a failed start on the next tick and skips the occurrence after the last attempt", async () => {
    const kind = uniqueKind();
    const { registration, started } = recordingKind(kind, { fail: new Set(["bad"]) });
    const created = new Date("2026-05-01T00:00:00Z");
    await save(kind, "bad", { cron: "0 1 * * *" }, created);
    await save(kind, "good", { cron: "0 1 * * *" }, created);
    const tick = (minute: number) => dispatchDueRuns(env, new Date(Date.UTC(2026, 4, 1, 1, minute)), [registration], log);

    await tick(0);
    expect(started.map((r) => r.ownerId)).toEqual(["good"]);
    expect(await readSchedule(env.DB, kind, "bad")).toMatchObject({
      nextRunAt: "2026-05-01T01:00:00.000Z",
      lastError: "the run could not be started",
    });
    for (let minute = 1; minute < MAX_ATTEMPTS; minute++) await tick(minute);
    expect(await readSchedule(env.DB, kind, "bad")).toMatchObject({ nextRunAt: "2026-05-02T01:00:00.000Z" });
    expect((await readSchedule(env.DB, kind, "bad"))?.lastError).toContain(`skipped after ${MAX_ATTEMPTS} failed starts`);
  });

  it("treats a kind that throws as a failed start of all its runs, and an unregistered kind likewise", async () => {
    const kind = uniqueKind();
    const { registration } = recordingKind(kind, { throws: true });
    await save(kind, "a", { cron: "0 1 * * *" }, new Date("2026-05-01T00:00:00Z"));
    await save(`${kind}-gone`, "b", { cron: "0 1 * * *" }, new Date("2026-05-01T00:00:00Z"));
    const report = await dispatchDueRuns(env, new Date("2026-05-01T01:00:00Z"), [registration], log);
    expect(report).toMatchObject({ claimed: 2, started: 0, failed: 2 });
    expect((await readSchedule(env.DB, kind, "a"))?.lastError).toBe("host down");
    expect((await readSchedule(env.DB, `${kind}-gone`, "b"))?.lastError).toContain("no schedule kind");
  });

  it("takes over the claim of a tick that died, with the same run key", async () => {
    const kind = uniqueKind();
    const { registration, started } = recordingKind(kind);
    await save(kind, "a", { cron: "0 1 * * *" }, new Date("2026-05-01T00:00:00Z"));
    await env.DB.prepare("UPDATE schedules SET lease_token = 'dead-tick', lease_until = '2026-05-01T01:05:00.000Z' WHERE kind = ?1")
      .bind(kind)
      .run();
    await dispatchDueRuns(env, new Date("2026-05-01T01:02:00Z"), [registration], log);
    expect(started).toEqual([]);
    await dispatchDueRuns(env, new Date("2026-05-01T01:06:00Z"), [registration], log);
    expect(started.map((r) => r.runKey)).toEqual([runKeyOf(kind, "a", "2026-05-01T01:00:00.000Z")]);
  });

  it("keeps a pending occurrence when an owner saves the same rule, and replaces it on a new rule or removes it", async () => {
    const kind = uniqueKind();
    await save(kind, "a", { cron: "0 1 * * *" }, new Date("2026-05-01T00:00:00Z"));
    await save(kind, "a", { cron: "0  1 * * *", timeZone: null }, new Date("2026-05-01T01:30:00Z"));
    expect((await readSchedule(env.DB, kind, "a"))?.nextRunAt).toBe("2026-05-01T01:00:00.000Z");
    await save(kind, "a", { cron: "0 2 * * *" }, new Date("2026-05-01T01:30:00Z"));
    expect((await readSchedule(env.DB, kind, "a"))?.nextRunAt).toBe("2026-05-01T02:00:00.000Z");
    await save(kind, "a", null, new Date("2026-05-01T01:30:00Z"));
    expect(await readSchedule(env.DB, kind, "a")).toBeNull();
  });

  it("creates a kind's fixed schedules", async () => {
    const kind = uniqueKind();
    const { registration, started } = recordingKind(kind);
    const fixed: ScheduleKind = { ...registration, fixed: [{ ownerId: "daily", rule: { cron: "0 3 * * *" } }] };
    await dispatchDueRuns(env, new Date("2026-05-01T02:00:00Z"), [fixed], log);
    expect((await readSchedule(env.DB, kind, "daily"))?.nextRunAt).toBe("2026-05-01T03:00:00.000Z");
    await dispatchDueRuns(env, new Date("2026-05-01T03:00:00Z"), [fixed], log);
    expect(started.map((r) => r.ownerId)).toEqual(["daily"]);
  });

  it("finds due schedules through the next-run index, not by scanning every schedule", async () => {
    const { results } = await env.DB.prepare(
      "EXPLAIN QUERY PLAN SELECT rowid FROM schedules WHERE next_run_at <= ?1 AND (lease_until IS NULL OR lease_until " +
        "< ?1) ORDER BY next_run_at LIMIT 500",
    )
      .bind("2026-05-01T00:00:00.000Z")
      .all<{ detail: string }>();
    const plan = results.map((r) => r.detail).join(" | ");
    expect(plan).toContain("USING INDEX schedules_due_idx");
    expect(plan).not.toMatch(/SCAN schedules(?! USING)/);
  });
});
