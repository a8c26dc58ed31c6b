/** Shared steps of the data processing tests. */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { call, type TestUser } from "../support/http";

export const owner: Partial<TestUser> = { id: "dp-owner", name: "Data Scientist" };

let counter = 0;

export function configBody(overrides: Record<string, unknown> = {}) {
  counter += 1;
  return {
    name: `config ${counter} ${crypto.randomUUID().slice(0, 8)}`,
    jobDefinition: "examples/hello:latest",
    runConfigs: { cpuCores: 1, memory: 1.5, gpuCores: null, gpuSku: null },
    runOptions: { THRESHOLD: "0.8", SECRET_TOKEN: "hunter2-do-not-leak" },
    runCommand: null,
    ...overrides,
  };
}

export async function createConfig(overrides: Record<string, unknown> = {}, user: Partial<TestUser> = owner) {
  const res = await call("/JobConfigurations", { method: "POST", body: configBody(overrides), user });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string; runOptions: Record<string, string | null> } & Record<string, unknown>;
}

/** Runs one step of a chain's runner now (what its minute alarm does). */
export async function step(chainId: string): Promise<void> {
  await env.JOBS.get(env.JOBS.idFromName(chainId)).kick(chainId);
}

export async function job(id: string) {
  const res = await call(`/Jobs/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body as {
    id: string;
    status: string;
    errorMessage: string | null;
    output: string | null;
    chainId: string;
    outputRejections: unknown[];
  } & Record<string, unknown>;
}
