/** Factories of the inspection plan tests (issue 36): a work template and an equipment to plan for, and a plan made over HTTP. */
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import worker from "../../src/index";
import { replacePlatform } from "../../src/platform/services";
import { call } from "../support/http";
import { createPlantTree, unique } from "../support/factories/work";

export { unique };

export async function createWorkTemplate(): Promise<string> {
  const res = await call("/WorkTemplates", { method: "POST", body: { displayName: unique("Yearly UT"), tags: ["ut"] } });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

/** A plant tree and a work template: what a plan needs. */
export async function planSetup() {
  const tree = await createPlantTree();
  const templateId = await createWorkTemplate();
  return { tree, templateId };
}

export async function createPlan(body: Record<string, unknown>) {
  const res = await call("/InspectionPlans", { method: "POST", body: { name: unique("plan"), ...body } });
  expect(res.status, res.text).toBe(201);
  return { ...res.body, etag: res.headers.get("etag") as string };
}

/**
 * The plans' clock: the platform's Clock seam set by the test (never a sleep), and the minute cron
 * fired through the Worker's scheduled handler at that time. Time only moves forward (the minute
 * dispatcher's schedules remember it): each test jumps to a later moment of its own.
 */
let now = 0;
let restoreClock: () => void = () => undefined;

export const clockNow = () => new Date(now);

/** Installs the clock at `start` (ISO), and registers the dispatcher's fixed schedules with a first tick. */
export async function startClock(start: string): Promise<void> {
  now = Date.parse(start);
  restoreClock = replacePlatform({ clock: { now: () => new Date(now) } });
  await tick();
}

export function stopClock(): void {
  restoreClock();
}

/** Moves the clock to `iso` (never back). */
export function jumpTo(iso: string): void {
  const to = Date.parse(iso);
  expect(to, `the clock only moves forward (${iso})`).toBeGreaterThanOrEqual(now);
  now = to;
}

export function advance(ms: number): void {
  now += ms;
}

/** Fires the minute cron at the clock's time (`times` handlers at once: two Cron Triggers for one minute). */
export async function tick(times = 1): Promise<void> {
  await Promise.all(
    Array.from({ length: times }, async () => {
      const ctx = createExecutionContext();
      await worker.scheduled(createScheduledController({ cron: "* * * * *", scheduledTime: now }), env, ctx);
      await waitOnExecutionContext(ctx);
    }),
  );
}

/** The work items generated from a template (every plan test uses a template of its own), by due date. */
export async function itemsOf(templateId: string): Promise<
  {
    id: string;
    dueDate: string;
    status: string;
    metadata: { inspectionPlan: { id: string; name: string; dueDate: string; reason: string } };
  }[]
> {
  const res = await call(`/WorkItems?basedOnIds=${templateId}&order=dueDate asc&take=100`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

export async function setStatus(workItemId: string, status: string): Promise<void> {
  const read = await call(`/WorkItems/${workItemId}`);
  expect(read.status, read.text).toBe(200);
  const res = await call("/WorkItems", { method: "PUT", body: { ...read.body, status } });
  expect(res.status, res.text).toBe(200);
}

export async function readPlan(id: string) {
  const res = await call(`/InspectionPlans/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}
