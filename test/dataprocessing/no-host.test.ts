/**
 * A deployment with no container host configured (wrangler.toml names none) never falls back to the
 * local host: running a job, a chain or an ACR monitor answers 501 NotConfigured and creates nothing.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { call, tokenFor } from "../support/http";
import { createConfig, owner } from "./support";

/** One request to the Worker as deployed with no CONTAINER_HOST_KIND (as wrangler.toml ships). */
async function callWithoutHost(path: string, body?: unknown) {
  const headers = new Headers({ authorization: `Bearer ${await tokenFor(owner)}` });
  if (body !== undefined) headers.set("content-type", "application/json");
  const ctx = createExecutionContext();
  const request = new Request(`https://api.test${path}`, {
    method: "POST",
    headers,
    body: body === undefined ? null : JSON.stringify(body),
  });
  const deployed = { ...env, CONTAINER_HOST_KIND: "", LOCAL_CONTAINER_HOST: undefined, LOCAL_CONTAINER_HOST_URL: undefined };
  const response = await worker.fetch!(request as Request<unknown, IncomingRequestCfProperties>, deployed as unknown as typeof env, ctx);
  await waitOnExecutionContext(ctx);
  return { status: response.status, body: (await response.json()) as { code: string; detail: string } };
}

const jobCount = async () => (await env.DB.prepare("SELECT count(*) AS n FROM jobs").first<{ n: number }>())!.n;

describe("a deployment without a container host", () => {
  it("answers job and chain execution with 501 NotConfigured and creates no job", async () => {
    const config = await createConfig();
    const before = await jobCount();
    for (const [path, body] of [
      [`/Jobs/Execution/${config.id}`, undefined],
      ["/Jobs/ChainExecution", { jobConfigIds: [config.id] }],
    ] as const) {
      const res = await callWithoutHost(path, body);
      expect(res.status, path).toBe(501);
      expect(res.body.code).toBe("NotConfigured");
      expect(res.body.detail).toMatch(/no container host is configured: set CONTAINER_HOST_KIND/);
    }
    expect(await jobCount()).toBe(before);
  });

  it("answers an ACR monitor's execution with 501 NotConfigured and creates no monitor job", async () => {
    const definition = await call("/ModelDefinitions/models%2Fcriticality/versions/1.0");
    const def =
      definition.status === 200
        ? definition.body
        : (await call("/ModelDefinitions", { method: "POST", body: { name: "models/criticality", version: "1.0", location: "ACR" } })).body;
    const model = await call("/Models", {
      method: "POST",
      body: {
        name: `no host ${crypto.randomUUID().slice(0, 6)}`,
        modelDefinitionName: def.name,
        modelDefinitionVersion: def.version,
        cpuCores: 1,
        memory: 1,
      },
    });
    expect(model.status, model.text).toBe(201);
    const monitor = await call("/Monitors", {
      method: "POST",
      body: { name: `no host ${crypto.randomUUID().slice(0, 6)}`, modelId: model.body.id },
    });
    expect(monitor.status, monitor.text).toBe(201);
    const res = await callWithoutHost(`/MonitorJobs/Execution/${monitor.body.id}`);
    expect(res.status).toBe(501);
    expect(res.body.code).toBe("NotConfigured");
    const jobs = await call(`/MonitorJobs?monitorIds=${monitor.body.id}`);
    expect(jobs.body).toEqual([]);
  });
});
