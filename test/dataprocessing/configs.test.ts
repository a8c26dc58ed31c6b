import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { readSchedule } from "../../src/pkg/schedule";
import { setHostDown } from "../support/fake-host";
import { call, tokenFor } from "../support/http";
import { configBody, createConfig, owner } from "./support";

const readOnly = { id: "dp-reader", name: "Reader", permissions: ["dataprocessing_read"] };

describe("job definitions", () => {
  afterEach(() => setHostDown(false));

  it("lists the images the container host offers", async () => {
    const res = await call("/JobDefinitions");
    expect(res.status).toBe(200);
    expect(res.body).toContainEqual(expect.objectContaining({ name: "examples/hello", tag: "latest", image: "examples/hello:latest" }));
  });

  it("answers 503 with Retry-After when the host does not answer", async () => {
    await setHostDown(true);
    const res = await call("/JobDefinitions");
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("30");
    expect(res.body.code).toBe("HostUnavailable");
  });
});

describe("job configurations", () => {
  it("creates, reads, replaces and deletes a config", async () => {
    const created = await createConfig({ description: "scores plants" });
    expect(created).toMatchObject({
      jobDefinition: "examples/hello:latest",
      runConfigs: { cpuCores: 1, memory: 1.5 },
      timeoutMinutes: 60,
      objectOwner: { id: "dp-owner" },
    });
    const read = await call(`/JobConfigurations/${created.id}`, { user: owner });
    expect(read.body.runOptions).toEqual({ THRESHOLD: "0.8", SECRET_TOKEN: "hunter2-do-not-leak" });
    const put = await call("/JobConfigurations", {
      method: "PUT",
      headers: { "if-match": read.headers.get("etag")! },
      body: { ...configBody({ name: created.name, runOptions: { THRESHOLD: "0.9" } }), id: created.id },
      user: owner,
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body.runOptions).toEqual({ THRESHOLD: "0.9" });
    const list = await call(`/JobConfigurations?ids=${created.id}`);
    expect(list.body.map((c: { id: string }) => c.id)).toEqual([created.id]);
    expect((await call(`/JobConfigurations/${created.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/JobConfigurations/${created.id}`)).status).toBe(404);
  });

  it("shows option values to the owner and write-permission holders only", async () => {
    const created = await createConfig();
    const asReader = await call(`/JobConfigurations/${created.id}`, { user: readOnly });
    expect(asReader.body.runOptions).toEqual({ THRESHOLD: null, SECRET_TOKEN: null });
    const asOwnerWithReadOnly = await call(`/JobConfigurations/${created.id}`, {
      user: { ...owner, permissions: ["dataprocessing_read"] },
    });
    expect(asOwnerWithReadOnly.body.runOptions.SECRET_TOKEN).toBe("hunter2-do-not-leak");
  });

  it("stores no option name or value in plain text in D1", async () => {
    const created = await createConfig();
    const row = await env.DB.prepare("SELECT * FROM job_configurations WHERE id = ?1").bind(created.id).first<Record<string, unknown>>();
    const stored = JSON.stringify(row);
    expect(stored).not.toContain("hunter2-do-not-leak");
    expect(stored).not.toContain("SECRET_TOKEN");
    expect(String(row!.run_options_enc)).toMatch(/^v1\./);
  });

  it("never writes an option value to a log line or an event", async () => {
    const lines: string[] = [];
    const spies = (["log", "info", "warn", "error", "debug"] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" "))),
    );
    try {
      const app = createApp();
      const ctx = createExecutionContext();
      const debugEnv = { ...env, LOG_LEVEL: "debug" };
      const headers = { authorization: `Bearer ${await tokenFor(owner)}`, "content-type": "application/json" };
      const res = await app.fetch(
        new Request("https://api.test/JobConfigurations", {
          method: "POST",
          headers,
          body: JSON.stringify(configBody({ runOptions: { LEAK_CHECK: "value-that-must-not-leak" } })),
        }),
        debugEnv,
        ctx,
      );
      expect(res.status).toBe(201);
      const { id } = (await res.json()) as { id: string };
      const run = await app.fetch(
        new Request(`https://api.test/Jobs/Execution/${id}`, { method: "POST", headers: { authorization: headers.authorization } }),
        debugEnv,
        ctx,
      );
      expect(run.status).toBe(201);
      await waitOnExecutionContext(ctx);
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.join("\n")).not.toContain("value-that-must-not-leak");
      const { results } = await env.DB.prepare("SELECT payload FROM outbox").all<{ payload: string | null }>();
      expect(results.length).toBeGreaterThan(0);
      expect(JSON.stringify(results)).not.toContain("value-that-must-not-leak");
      expect(JSON.stringify(results)).not.toContain("LEAK_CHECK");
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  it("accepts the original client's docker-style option string and refuses the job's own variable names", async () => {
    const created = await createConfig({ runOptions: '-e MODE=fast -e "LABEL=two words"' });
    expect(created.runOptions).toEqual({ MODE: "fast", LABEL: "two words" });
    const reserved = await call("/JobConfigurations", {
      method: "POST",
      body: configBody({ runOptions: { jobId: "x", INTEGRITY_EDGE_JOB_TOKEN: "y" } }),
    });
    expect(reserved.status).toBe(400);
    expect(reserved.body.errors.map((e: { field: string }) => e.field)).toEqual([
      "body.runOptions.jobId",
      "body.runOptions.INTEGRITY_EDGE_JOB_TOKEN",
    ]);
    const malformed = await call("/JobConfigurations", { method: "POST", body: configBody({ runOptions: "MODE=fast" }) });
    expect(malformed.status).toBe(400);
  });

  it("refuses a run option value holding a NUL character when the config is saved, changing nothing", async () => {
    const nul = { GOOD: "fine", BAD: "before\u0000after" };
    const body = configBody({ runOptions: nul });
    const created = await call("/JobConfigurations", { method: "POST", body });
    expect(created.status).toBe(400);
    expect(created.headers.get("content-type")).toContain("application/problem+json");
    expect(created.body.errors).toEqual([
      { field: "body.runOptions.BAD", rule: "noNulCharacter", message: expect.stringContaining("NUL") },
    ]);
    const listed = await call(`/JobConfigurations?searchText=${encodeURIComponent(body.name)}`);
    expect(listed.body).toEqual([]);
    // The original client's string form, and a PUT of a saved config: the same rule; the config keeps its options.
    const docker = await call("/JobConfigurations", { method: "POST", body: configBody({ runOptions: '-e "BAD=a\u0000b"' }) });
    expect(docker.body.errors).toMatchObject([{ field: "body.runOptions.BAD", rule: "noNulCharacter" }]);
    const saved = await createConfig();
    const read = await call(`/JobConfigurations/${saved.id}`, { user: owner });
    const put = await call("/JobConfigurations", { method: "PUT", user: owner, body: { ...read.body, runOptions: nul } });
    expect(put.status).toBe(400);
    expect(put.body.errors[0]).toMatchObject({ field: "body.runOptions.BAD", rule: "noNulCharacter" });
    expect((await call(`/JobConfigurations/${saved.id}`, { user: owner })).body).toEqual(read.body);
    // Nor can an execution slip one in.
    const run = await call(`/Jobs/Execution/${saved.id}`, { method: "POST", body: { runOptions: { BAD: "\u0000" } } });
    expect(run.status).toBe(400);
    expect(run.body.errors[0]).toMatchObject({ field: "body.runOptions.BAD", rule: "noNulCharacter" });
  });

  it("validates the image and resources against what the host offers", async () => {
    const unknownImage = await call("/JobConfigurations", { method: "POST", body: configBody({ jobDefinition: "examples/nope:1" }) });
    expect(unknownImage.status).toBe(400);
    expect(unknownImage.body.errors[0]).toMatchObject({ field: "body.jobDefinition", rule: "exists" });
    const tooBig = await call("/JobConfigurations", {
      method: "POST",
      body: configBody({ runConfigs: { cpuCores: 8, memory: 64, gpuCores: 1, gpuSku: "V100" } }),
    });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.errors.map((e: { field: string }) => e.field)).toEqual([
      "body.runConfigs.cpuCores",
      "body.runConfigs.memory",
      "body.runConfigs.gpuSku",
    ]);
    const gpu = await createConfig({ runConfigs: { cpuCores: 2, memory: 4, gpuCores: 1, gpuSku: "K80" } });
    expect(gpu.runConfigs).toEqual({ cpuCores: 2, memory: 4, gpuCores: 1, gpuSku: "K80" });
  });

  it("refuses a chain to a missing config or a cycle, naming the config", async () => {
    const missing = crypto.randomUUID();
    const dangling = await call("/JobConfigurations", { method: "POST", body: configBody({ nextConfigId: missing }) });
    expect(dangling.status).toBe(400);
    expect(dangling.body.errors[0]).toMatchObject({ field: "body.nextConfigId", rule: "exists" });
    expect(dangling.body.detail).toContain(missing);

    const b = await createConfig();
    const a = await createConfig({ nextConfigId: b.id });
    const cycle = await call("/JobConfigurations", {
      method: "PUT",
      body: { ...configBody({ name: b.name, nextConfigId: a.id }), id: b.id },
    });
    expect(cycle.status).toBe(400);
    expect(cycle.body.errors[0]).toMatchObject({ field: "body.nextConfigId", rule: "acyclic" });
    expect(cycle.body.detail).toContain(b.id);

    const inUse = await call(`/JobConfigurations/${b.id}`, { method: "DELETE" });
    expect(inUse.status).toBe(409);
    expect(inUse.body.detail).toContain(a.id);
  });

  it("keeps the weekly schedule in step and reads the frequency in the config's zone", async () => {
    const config = await createConfig({
      frequency: { dayOfWeek: "monday", hour: 9, startDate: "2027-03-01T00:00:00" },
      timeZone: "America/New_York",
    });
    // 09:00 in New York is 14:00 UTC before daylight saving time begins (14 March 2027).
    expect(config.nextRunAt).toBe("2027-03-01T14:00:00.000Z");
    const schedule = await readSchedule(env.DB, "job-config", config.id);
    expect(schedule?.nextRunAt).toBe("2027-03-01T14:00:00.000Z");
    const utc = await createConfig({ frequency: { dayOfWeek: "sunday", hour: 23, startDate: "2027-01-01T00:00:00" } });
    expect(utc.nextRunAt).toBe("2027-01-03T23:00:00.000Z");
    await call("/JobConfigurations", { method: "PUT", body: { ...configBody({ name: utc.name }), id: utc.id } });
    expect(await readSchedule(env.DB, "job-config", utc.id)).toBeNull();
    const badZone = await call("/JobConfigurations", {
      method: "POST",
      body: configBody({ frequency: { dayOfWeek: "monday", hour: 9, startDate: "2027-03-01T00:00:00" }, timeZone: "Mars/Olympus" }),
    });
    expect(badZone.status).toBe(400);
    expect(badZone.body.errors[0].field).toBe("body.timeZone");
    const badDay = await call("/JobConfigurations", {
      method: "POST",
      body: configBody({ frequency: { dayOfWeek: "Monday", hour: 24, startDate: "2027-03-01" } }),
    });
    expect(badDay.status).toBe(400);
    expect(badDay.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      "body.frequency.dayOfWeek",
      "body.frequency.hour",
      "body.frequency.startDate",
    ]);
  });
});

describe("run option key rotation", () => {
  const key = () => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));

  it("reads configs sealed under an older key and re-seals them under the current one", async () => {
    const app = createApp();
    const keyOne = `7:${key()}`;
    const keyTwo = `8:${key()}`;
    const send = async (secret: string, path: string, init: RequestInit = {}) => {
      const ctx = createExecutionContext();
      const headers = {
        authorization: `Bearer ${await tokenFor(owner)}`,
        "content-type": "application/json",
        ...(init.headers as Record<string, string>),
      };
      const res = await app.fetch(
        new Request(`https://api.test${path}`, { ...init, headers }),
        { ...env, DATAPROCESSING_ENCRYPTION_KEY: secret },
        ctx,
      );
      await waitOnExecutionContext(ctx);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const body = configBody({ runOptions: { ROTATE: "before" } });
    const created = await send(keyOne, "/JobConfigurations", { method: "POST", body: JSON.stringify(body) });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const sealedVersion = async () =>
      (await env.DB.prepare("SELECT run_options_enc FROM job_configurations WHERE id = ?1")
        .bind(id)
        .first<{ run_options_enc: string }>())!.run_options_enc.split(".")[0];
    expect(await sealedVersion()).toBe("v7");

    const rotated = `${keyTwo},${keyOne}`;
    expect((await send(rotated, `/JobConfigurations/${id}`)).body.runOptions).toEqual({ ROTATE: "before" });
    const resaved = await send(rotated, "/JobConfigurations", {
      method: "PUT",
      body: JSON.stringify({ ...body, runOptions: { ROTATE: "after" }, id }),
    });
    expect(resaved.status).toBe(200);
    expect(await sealedVersion()).toBe("v8");
    // Once every config is re-sealed, the old key can go.
    expect((await send(keyTwo, `/JobConfigurations/${id}`)).body.runOptions).toEqual({ ROTATE: "after" });
    // Sealed under a key the runtime's other tests do not hold (they list configs): it leaves with the test.
    expect((await call(`/JobConfigurations/${id}`, { method: "DELETE", user: owner })).status).toBe(204);
  });
});

describe("output types", () => {
  it("refuses a schema that is not a JSON Schema, listing why", async () => {
    for (const schema of [{ type: "strin" }, { type: 5 }, { properties: { a: { minLength: -1 } } }, { required: "a" }, "not a schema"]) {
      const res = await call("/OutputTypes", { method: "POST", body: { name: `bad ${crypto.randomUUID()}`, schema } });
      expect(res.status, JSON.stringify(schema)).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ field: "body.schema", rule: "jsonSchema" });
    }
  });

  it("stores a valid schema or null, and refuses to delete a type a config uses", async () => {
    const structured = await call("/OutputTypes", {
      method: "POST",
      body: {
        name: `scores ${crypto.randomUUID()}`,
        schema: { type: "object", required: ["score"], properties: { score: { type: "number", minimum: 0 } } },
      },
    });
    expect(structured.status, structured.text).toBe(201);
    const free = await call("/OutputTypes", { method: "POST", body: { name: `free ${crypto.randomUUID()}`, schema: null } });
    expect(free.status).toBe(201);
    expect(free.body.schema).toBeNull();
    await createConfig({ outputTypeId: structured.body.id });
    expect((await call(`/OutputTypes/${structured.body.id}`, { method: "DELETE" })).status).toBe(409);
    expect((await call(`/OutputTypes/${free.body.id}`, { method: "DELETE" })).status).toBe(204);
    const unknown = await call("/JobConfigurations", { method: "POST", body: configBody({ outputTypeId: crypto.randomUUID() }) });
    expect(unknown.body.errors[0]).toMatchObject({ field: "body.outputTypeId", rule: "exists" });
  });
});
