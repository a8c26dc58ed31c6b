/**
 * The loop's guarantees (issue 25): an alarm is never entered twice, whatever delivers a job's end
 * again or evaluates it again, and monitors never trigger themselves, nor one another without bound.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/pkg/logger";
import { evaluateControllers } from "../../src/monitors/alarms/evaluation";
import { evaluateIfPending, expireMonitorJobs, monitorJobEndHook } from "../../src/monitors/monitor-jobs/run";
import { MAX_TRIGGER_DEPTH, triggerMonitors } from "../../src/monitors/triggers";
import type { DomainEvent } from "../../src/events/outbox";
import { call } from "../support/http";
import { asset, count, outbox, run, vibration, watchedEquipment, workTemplate } from "./alarm-support";
import { bearer, definition } from "./support";

const log = createLogger("error", { test: "alarm-loop" });
const high = (actions: Record<string, unknown> = {}, onLeave?: Record<string, unknown>) => ({
  name: "High vibration",
  conditions: [{ variableName: "vibration", operator: "GreaterThen", comparisonValue: 7 }],
  actions,
  ...(onLeave ? { onLeave } : {}),
});

async function tally(monitorId: string) {
  return {
    alarms: await count("SELECT id FROM monitor_alarms WHERE monitor_ref = ?1", monitorId),
    entered: await count("SELECT id FROM monitor_alarm_events WHERE monitor_ref = ?1 AND action = 'entered'", monitorId),
    left: await count("SELECT id FROM monitor_alarm_events WHERE monitor_ref = ?1 AND action = 'left'", monitorId),
    events: (await outbox("alarm", "json_extract(payload, '$.monitor.id') = ?2", monitorId)).map((e) => e.action),
    deviations: await count("SELECT id FROM deviations WHERE origin_monitor_ref = ?1", monitorId),
    deviationUpdates: await count(
      "SELECT o.id FROM outbox o JOIN deviations d ON d.id = o.entity_id WHERE o.entity_kind = 'deviation' AND " +
        "o.action = 'updated' AND d.origin_monitor_ref = ?1",
      monitorId,
    ),
    workItems: await count(
      "SELECT work_item_id FROM monitor_alarms WHERE monitor_ref = ?1 AND work_item_id IN (SELECT id FROM work_items)",
      monitorId,
    ),
  };
}

async function startJob(monitorId: string) {
  const started = await call(`/MonitorJobs/Execution/${monitorId}`, { method: "POST" });
  expect(started.status, started.text).toBe(201);
  return started.body as { id: string; statusToken: string };
}

describe("an alarm is entered once", () => {
  it("with two overlapping jobs of one monitor ending at the same time", async () => {
    const template = await workTemplate();
    const { monitor, assets } = await watchedEquipment([high({ raiseDeviation: {}, createWorkItem: { workTemplateId: template.id } })], 1);
    const jobs = [await startJob(monitor.id), await startJob(monitor.id), await startJob(monitor.id)];
    const answers = await Promise.all(
      jobs.map((job) =>
        call(`/MonitorJobs/${job.id}/Succeeded`, {
          method: "PUT",
          headers: bearer(job.statusToken),
          body: vibration({ [assets[0]!.id]: 9 }),
        }),
      ),
    );
    for (const answer of answers) expect(answer.status, answer.text).toBe(200);
    expect(await tally(monitor.id)).toEqual({
      alarms: 1,
      entered: 1,
      left: 0,
      events: ["entered"],
      deviations: 1,
      deviationUpdates: 0,
      workItems: 1,
    });
    expect(await count("SELECT id FROM monitor_jobs WHERE monitor_ref = ?1 AND evaluated_at IS NOT NULL", monitor.id)).toBe(3);
  });

  it("when a job's end is delivered again, at once or later (ACR end hook)", async () => {
    const { monitor, assets } = await watchedEquipment([high({ raiseDeviation: {} })], 1);
    const job = await startJob(monitor.id);
    const end = {
      jobId: crypto.randomUUID(),
      status: "Success" as const,
      errorMessage: null,
      output: "done",
      outputs: [{ jobOutputTypeId: null, output: vibration({ [assets[0]!.id]: 9 }) }],
    };
    await Promise.all([monitorJobEndHook.onEnd(env, job.id, end), monitorJobEndHook.onEnd(env, job.id, end)]);
    await monitorJobEndHook.onEnd(env, job.id, end);
    expect(await tally(monitor.id)).toMatchObject({ alarms: 1, entered: 1, events: ["entered"], deviations: 1 });
    expect((await call(`/MonitorJobs/${job.id}`)).body.status).toBe("Succeeded");
  });

  it("when an evaluation is retried or runs twice at once", async () => {
    const { monitor, assets } = await watchedEquipment([high({ raiseDeviation: {} }, { deviationStatus: "closed" })], 1);
    const { job } = await run(monitor.id, vibration({ [assets[0]!.id]: 9 }));
    const row = (await env.DB.prepare("SELECT id, monitor_ref, created_at, trigger_depth FROM monitor_jobs WHERE id = ?1")
      .bind(job.id)
      .first<{ id: string; monitor_ref: string; created_at: string; trigger_depth: number }>())!;
    const events = { actorId: null, requestId: null, now: new Date().toISOString(), uuid: () => crypto.randomUUID() };
    const variables = vibration({ [assets[0]!.id]: 9 }).variables;
    await Promise.all([evaluateControllers(env, row, variables, events), evaluateControllers(env, row, variables, events)]);
    await env.DB.prepare("UPDATE monitor_jobs SET evaluated_at = NULL WHERE id = ?1").bind(job.id).run();
    expect(await evaluateIfPending(env, job.id)).toBe(true);
    expect(await evaluateIfPending(env, job.id)).toBe(false);
    expect(await tally(monitor.id)).toMatchObject({ alarms: 1, entered: 1, events: ["entered"], deviations: 1 });

    // Leaving twice at once (two jobs with normal values): one exit, one event, one status change.
    const [a, b] = [await startJob(monitor.id), await startJob(monitor.id)];
    await Promise.all(
      [a, b].map((j) =>
        call(`/MonitorJobs/${j.id}/Succeeded`, { method: "PUT", headers: bearer(j.statusToken), body: vibration({ [assets[0]!.id]: 1 }) }),
      ),
    );
    expect(await tally(monitor.id)).toEqual({
      alarms: 1,
      entered: 1,
      left: 1,
      events: ["entered", "left"],
      deviations: 1,
      deviationUpdates: 1,
      workItems: 0,
    });
  });

  it("when the evaluation after a Succeeded status never ran (a crash): the minute cron evaluates the job", async () => {
    const { monitor, assets } = await watchedEquipment([high({ raiseDeviation: {} })], 1);
    const job = await startJob(monitor.id);
    const ended = new Date(Date.now() - 5 * 60_000).toISOString();
    // The status and the reports were written; the evaluation was not.
    await env.DB.prepare("UPDATE monitor_jobs SET status = 'Succeeded', completed_at = ?1, reports = ?2 WHERE id = ?3")
      .bind(ended, JSON.stringify({ criticality: [], variables: vibration({ [assets[0]!.id]: 9 }).variables }), job.id)
      .run();
    await Promise.all([expireMonitorJobs(env, new Date()), expireMonitorJobs(env, new Date())]);
    expect(await tally(monitor.id)).toMatchObject({ alarms: 1, entered: 1, deviations: 1 });
    expect(await count("SELECT id FROM monitor_jobs WHERE id = ?1 AND evaluated_at IS NOT NULL", job.id)).toBe(1);
  });

  it("a job that started before one already evaluated changes no alarm and says so", async () => {
    const { monitor, assets } = await watchedEquipment([high()], 1);
    const older = await startJob(monitor.id);
    await new Promise((r) => setTimeout(r, 5));
    await run(monitor.id, vibration({ [assets[0]!.id]: 9 }));
    const late = await call(`/MonitorJobs/${older.id}/Succeeded`, {
      method: "PUT",
      headers: bearer(older.statusToken),
      body: vibration({ [assets[0]!.id]: 1 }),
    });
    expect(late.status, late.text).toBe(200);
    expect(late.body.errorMessage).toContain("Controllers not evaluated");
    expect(await tally(monitor.id)).toMatchObject({ alarms: 1, entered: 1, left: 0 });
  });
});

/** The deviation events written since `afterSeq`, as the queue delivers them. */
async function deviationEventsAfter(afterSeq: number): Promise<{ events: DomainEvent[]; last: number }> {
  const { results } = await env.DB.prepare(
    "SELECT seq, id, entity_id, action, payload, occurred_at FROM outbox WHERE entity_kind = 'deviation' AND seq > ?1 ORDER BY seq",
  )
    .bind(afterSeq)
    .all<{ seq: number; id: string; entity_id: string; action: DomainEvent["action"]; payload: string; occurred_at: string }>();
  return {
    events: results.map((r) => ({
      id: r.id,
      entityKind: "deviation",
      entityId: r.entity_id,
      action: r.action,
      occurredAt: r.occurred_at,
      actorId: null,
      requestId: null,
      payload: JSON.parse(r.payload),
    })),
    last: results.at(-1)?.seq ?? afterSeq,
  };
}
const lastSeq = async () => (await env.DB.prepare("SELECT coalesce(max(seq), 0) AS s FROM outbox").first<{ s: number }>())!.s;

/** Two Active monitors of External models watching one pump, both triggered by deviationChanged. */
async function twoMonitorsOnOnePump() {
  const pump = await asset("equipment");
  const monitors: { id: string }[] = [];
  for (const name of ["A", "B"]) {
    const def = await definition("External");
    const model = await call("/Models", {
      method: "POST",
      body: { name: `model ${name}`, modelDefinitionName: def.name, modelDefinitionVersion: def.version, cpuCores: 1, memory: 1 },
    });
    const population = await call(`/Models/${model.body.id}/Populations`, {
      method: "POST",
      body: { name: "pumps", assetType: "Equipment" },
    });
    await call(`/Models/${model.body.id}/Populations/${population.body.id}/Items`, {
      method: "POST",
      body: { assetReference: { id: pump.id } },
    });
    const monitor = await call("/Monitors", {
      method: "POST",
      body: {
        name: `feeding ${name} ${crypto.randomUUID().slice(0, 4)}`,
        modelId: model.body.id,
        status: "Active",
        triggerEvent: { kind: "deviationChanged" },
        controllers: [high({ raiseDeviation: {} }, { deviationStatus: "closed" })],
      },
    });
    expect(monitor.status, monitor.text).toBe(201);
    monitors.push(monitor.body);
  }
  return { pump, a: monitors[0]!, b: monitors[1]! };
}

const jobsOf = async (monitorId: string) =>
  (
    await env.DB.prepare("SELECT id, status, trigger_kind, trigger_depth FROM monitor_jobs WHERE monitor_ref = ?1 ORDER BY created_at")
      .bind(monitorId)
      .all<{ id: string; status: string; trigger_kind: string; trigger_depth: number }>()
  ).results;

describe("deviationChanged and the loop", () => {
  it("a deviation the loop raises or changes never triggers its own monitor; a person's change does", async () => {
    const { pump, a, b } = await twoMonitorsOnOnePump();
    const since = await lastSeq();
    await run(a.id, vibration({ [pump.id]: 9 }));
    const { events } = await deviationEventsAfter(since);
    expect(events.map((e) => e.action)).toEqual(["created"]);
    for (const event of events) await triggerMonitors(event, env, log);
    expect((await jobsOf(a.id)).map((j) => j.trigger_kind)).toEqual(["onDemand"]);
    expect((await jobsOf(b.id)).map((j) => [j.trigger_kind, j.trigger_depth])).toEqual([["event", 1]]);

    // A person edits the deviation A raised: that is an ordinary change, and A runs for it.
    const raised = await call(`/Deviations/${events[0]!.entityId}`);
    const before = await lastSeq();
    const edited = await call("/Deviations", {
      method: "PUT",
      headers: { "if-match": raised.headers.get("etag")! },
      body: { ...raised.body, description: "seen on the walk-round too" },
    });
    expect(edited.status, edited.text).toBe(200);
    for (const event of (await deviationEventsAfter(before)).events) await triggerMonitors(event, env, log);
    expect((await jobsOf(a.id)).map((j) => [j.trigger_kind, j.trigger_depth])).toEqual([
      ["onDemand", 0],
      ["event", 1],
    ]);
  });

  it(`two monitors whose deviations trigger each other stop after ${MAX_TRIGGER_DEPTH} rounds`, async () => {
    const { pump, a, b } = await twoMonitorsOnOnePump();
    // The external models answer each run with the other state than their last: over the limit, then back to normal, and so on.
    const next = new Map<string, number>([
      [a.id, 9],
      [b.id, 9],
    ]);
    let seq = await lastSeq();
    await run(a.id, vibration({ [pump.id]: next.get(a.id)! }));
    next.set(a.id, 1);
    const answered = new Set<string>();
    for (let round = 0; round < 20; round++) {
      const { events, last } = await deviationEventsAfter(seq);
      seq = last;
      for (const event of events) await triggerMonitors(event, env, log);
      const pending = [
        ...(await jobsOf(a.id)).map((j) => ({ ...j, monitor: a.id })),
        ...(await jobsOf(b.id)).map((j) => ({ ...j, monitor: b.id })),
      ].filter((j) => j.status === "Started" && !answered.has(j.id));
      if (pending.length === 0 && events.length === 0) break;
      for (const job of pending) {
        answered.add(job.id);
        // Runs started by an event answer no one a status token: the external system reports them with its
        // own credentials (monitor_jobs_status), as the test's caller does here.
        const value = next.get(job.monitor)!;
        const done = await call(`/MonitorJobs/${job.id}/Succeeded`, { method: "PUT", body: vibration({ [pump.id]: value }) });
        expect(done.status, done.text).toBe(200);
        next.set(job.monitor, value > 7 ? 1 : 9);
      }
    }
    const depths = [...(await jobsOf(a.id)), ...(await jobsOf(b.id))].map((j) => j.trigger_depth).sort();
    // A on demand (0); B for A's deviation (1); A for B's (2); B for A's closed deviation (3); nothing at 4.
    expect(depths).toEqual([0, 1, 2, 3]);
    expect(Math.max(...depths)).toBe(MAX_TRIGGER_DEPTH);
    // The last change happened (B left its alarm and closed its deviation); it just started no one.
    expect((await tally(b.id)).left).toBe(1);
  });
});
