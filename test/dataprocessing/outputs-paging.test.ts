/**
 * GET /Jobs/{id}/Outputs is paged like every list (issue 20, section 3): it used to stop at 1,000
 * outputs and refuse `skip`, so a job's later outputs could not be read at all.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { groupRecord } from "../support/fake-host";
import { call } from "../support/http";
import { createConfig, owner, step } from "./support";

const OUTPUTS = 1_205;

/** A running job with one output posted over HTTP and the rest written straight to D1 (fast). */
async function jobWithOutputs(): Promise<string> {
  const config = await createConfig();
  const run = await call(`/Jobs/Execution/${config.id}`, { method: "POST", user: owner });
  expect(run.status, run.text).toBe(201);
  const jobId = run.body.jobId as string;
  await step(run.body.chainId);
  const token = (await groupRecord(`containergroup-${jobId}`))!.spec!.environment.INTEGRITY_EDGE_JOB_TOKEN!;
  const first = await call("/JobOutputs", {
    method: "POST",
    body: { jobId, output: { n: 0 } },
    headers: { authorization: `Bearer ${token}` },
  });
  expect(first.status, first.text).toBe(201);
  const base = Date.parse(first.body.createdAt as string);
  const insert = env.DB.prepare(
    "INSERT INTO job_outputs (id, job_id, job_output_type_id, output, etag, created_at, updated_at, created_by) " +
      "VALUES (?1, ?2, NULL, ?3, 'e', ?4, ?4, NULL)",
  );
  const rows = Array.from({ length: OUTPUTS - 1 }, (_, i) =>
    insert.bind(crypto.randomUUID(), jobId, JSON.stringify({ n: i + 1 }), new Date(base + (i + 1) * 1000).toISOString()),
  );
  for (let i = 0; i < rows.length; i += 200) await env.DB.batch(rows.slice(i, i + 200));
  return jobId;
}

const numbers = (body: unknown) => (body as { output: { n: number } }[]).map((o) => o.output.n);

describe("GET /Jobs/{id}/Outputs", () => {
  it("pages every output with skip, take and includeTotal, oldest first by default", async () => {
    const jobId = await jobWithOutputs();

    const firstPage = await call(`/Jobs/${jobId}/Outputs?includeTotal=true`);
    expect(firstPage.status, firstPage.text).toBe(200);
    expect(firstPage.headers.get("x-total-count")).toBe(String(OUTPUTS));
    expect(numbers(firstPage.body)).toEqual(Array.from({ length: 100 }, (_, i) => i));

    // Past the old 1,000 cut: every output is reachable, in order, with nothing repeated or lost.
    const seen: number[] = [];
    for (let skip = 0; skip < OUTPUTS; skip += 1000) {
      const page = await call(`/Jobs/${jobId}/Outputs?skip=${skip}&take=1000`);
      expect(page.status, page.text).toBe(200);
      seen.push(...numbers(page.body));
    }
    expect(seen).toEqual(Array.from({ length: OUTPUTS }, (_, i) => i));

    const newest = await call(`/Jobs/${jobId}/Outputs?order=createdAt%20desc&take=2`);
    expect(numbers(newest.body)).toEqual([OUTPUTS - 1, OUTPUTS - 2]);
    const tooMany = await call(`/Jobs/${jobId}/Outputs?take=1001`);
    expect(tooMany.status).toBe(400);
  });

  it("answers 404 for a job that does not exist", async () => {
    expect((await call(`/Jobs/${crypto.randomUUID()}/Outputs?skip=10`)).status).toBe(404);
  });
});
