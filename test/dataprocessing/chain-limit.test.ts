/**
 * A chain is at most 50 configs (issue 20, section 3): every write that links configs into a longer
 * one is refused with a 400 naming the limit, counting the configs before the written one as well as
 * after it, and an execution never runs part of a chain.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, type CallResult } from "../support/http";
import { configBody, createConfig, owner } from "./support";

/** Creates a chain of `length` configs (tail first), returning their ids head first. */
async function chainOf(length: number): Promise<string[]> {
  const ids: string[] = [];
  let next: string | null = null;
  for (let i = 0; i < length; i++) {
    next = (await createConfig({ nextConfigId: next })).id;
    ids.unshift(next);
  }
  return ids;
}

async function read(id: string) {
  const res = await call(`/JobConfigurations/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body as Record<string, unknown> & { id: string; name: string };
}

/** A whole-object PUT of a config with another nextConfigId. */
async function relink(id: string, nextConfigId: string | null) {
  const current = await read(id);
  return call("/JobConfigurations", { method: "PUT", body: { ...configBody({ name: current.name, nextConfigId }), id } });
}

function expectLimitProblem(res: CallResult<{ errors: unknown[]; detail: string }>) {
  expect(res.status, res.text).toBe(400);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  expect(res.body.errors[0]).toMatchObject({ field: "body.nextConfigId", rule: "maxLength" });
  expect(res.body.detail).toContain("at most 50 configs");
}

async function jobsOf(configId: string): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM jobs WHERE configuration_id = ?1").bind(configId).first<{ n: number }>();
  return row!.n;
}

describe("chain length limit", () => {
  it("refuses a create or a PUT of any member that makes a chain past 50, counting the configs before it too", async () => {
    const a = await chainOf(30);
    const b = await chainOf(21);

    // Joining the tail of a (30) to b (21) would make 51: refused, even though only 21 follow a's tail.
    expectLimitProblem(await relink(a.at(-1)!, b[0]!));
    // Skipping b's head makes exactly 50: accepted.
    const joined = await relink(a.at(-1)!, b[1]!);
    expect(joined.status, joined.text).toBe(200);

    // A new config in front of the 50: refused (the create names the limit).
    const front = await call("/JobConfigurations", { method: "POST", body: configBody({ nextConfigId: a[0] }) });
    expectLimitProblem(front);
    // A PUT of the last member pointing at a new config: 49 come before it, so refused as well.
    const extra = await createConfig();
    expectLimitProblem(await relink(b.at(-1)!, extra.id));
    // A PUT of a middle member that keeps the chain at 50 or shortens it is fine.
    const middle = await relink(a[10]!, a[11]!);
    expect(middle.status, middle.text).toBe(200);
    const cut = await relink(a[10]!, null);
    expect(cut.status, cut.text).toBe(200);
  });

  it("lets only one of two concurrent writes through when together they would pass the limit", async () => {
    const a = await chainOf(25);
    const b = await chainOf(25);
    const c = await createConfig();
    // a + b is 50; c after b's tail, or a's tail before b's head, is each fine alone but not both.
    const [join, append] = await Promise.all([relink(a.at(-1)!, b[0]!), relink(b.at(-1)!, c.id)]);
    expect([join.status, append.status].sort()).toEqual([200, 400]);
    const refused = join.status === 400 ? join : append;
    expectLimitProblem(refused);
  });

  it("refuses to execute a chain past the limit (data saved before the check) instead of running the first 50", async () => {
    const a = await chainOf(30);
    const b = await chainOf(27);
    // Older data: a chain of 57 written without the check.
    await env.DB.prepare("UPDATE job_configurations SET next_config_id = ?1 WHERE id = ?2").bind(b[0], a.at(-1)).run();

    const run = await call(`/Jobs/Execution/${a[0]}`, { method: "POST", user: owner });
    expect(run.status, run.text).toBe(409);
    expect(run.headers.get("content-type")).toContain("application/problem+json");
    expect(run.body.detail).toContain("more than 50 configs");
    expect(run.body.detail).toContain("nothing was run");
    expect(await jobsOf(a[0]!)).toBe(0);
    expect(await jobsOf(b.at(-1)!)).toBe(0);

    // A shorter chain from a later member still runs whole.
    const rest = await call(`/Jobs/Execution/${b[0]}`, { method: "POST", user: owner });
    expect(rest.status, rest.text).toBe(201);
    expect(rest.body.jobIds).toHaveLength(27);
  });

  it("refuses a chain execution of more than 50 configs, naming the limit", async () => {
    const config = await createConfig();
    const res = await call("/Jobs/ChainExecution", {
      method: "POST",
      body: { jobConfigIds: Array.from({ length: 51 }, () => config.id) },
      user: owner,
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body.detail).toContain("at most 50 configs");
    expect(await jobsOf(config.id)).toBe(0);
  });
});
