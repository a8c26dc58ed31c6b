/** Factories of the inspection plan tests (issue 36): a work template and an equipment to plan for, and a plan made over HTTP. */
import { expect } from "vitest";
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
