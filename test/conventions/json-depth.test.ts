import { describe, expect, it } from "vitest";
import { jsonDepthExceeded, MAX_JSON_DEPTH } from "../../src/pkg/json-depth";
import { call } from "../support/http";

/** JSON text of `levels` nested objects (`{"a":{"a":...{}}}`), built as text: no recursion, any depth. */
const nestedObjects = (levels: number) => '{"a":'.repeat(levels - 1) + "{}" + "}".repeat(levels - 1);
/** JSON text of `levels` nested arrays. */
const nestedArrays = (levels: number) => "[".repeat(levels) + "]".repeat(levels);

const json = { "content-type": "application/json" };
const tag = () => crypto.randomUUID().slice(0, 8);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- problem body
function expectDepthProblem(res: { status: number; body: any; text: string }) {
  expect(res.status, res.text.slice(0, 300)).toBe(400);
  expect(res.body).toMatchObject({ code: "ValidationFailed", status: 400 });
  expect(res.body.detail).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
  expect(res.body.errors).toEqual([expect.objectContaining({ field: "body", rule: "maxDepth" })]);
}

describe("JSON nesting depth", () => {
  it("scans text without counting brackets inside strings", () => {
    expect(jsonDepthExceeded(nestedArrays(64))).toBe(-1);
    expect(jsonDepthExceeded(nestedArrays(65))).toBe(64);
    expect(jsonDepthExceeded(`{"a":"[[[[{{{{","b":"\\"[[[[","c":"\\\\"}`, 1)).toBe(-1);
    expect(jsonDepthExceeded(`{"a":"\\\\","b":[]}`, 1)).toBe(14);
    expect(jsonDepthExceeded(`["unterminated [[[[`, 1)).toBe(-1);
    expect(jsonDepthExceeded(nestedObjects(100_000), 64)).toBe(5 * 64);
  });

  it("refuses bodies nested 2,000 and 100,000 levels deep on every kind of JSON route with a 400 naming the limit", async () => {
    for (const levels of [2_000, 100_000]) {
      // Free-form metadata, which the Unicode check walked (a 500 before the limit).
      const metadata = `{"name":"deep ${tag()}","metadata":${nestedObjects(levels - 1)}}`;
      expectDepthProblem(await call("/EntityTypes", { method: "POST", rawBody: metadata, headers: json }));
      // A strict schema, arrays.
      expectDepthProblem(await call("/Categories", { method: "POST", rawBody: `{"name":${nestedArrays(levels - 1)}}`, headers: json }));
      // A job output posted by a container: the output is free JSON.
      expectDepthProblem(
        await call("/JobOutputs", {
          method: "POST",
          rawBody: `{"jobId":"${crypto.randomUUID()}","output":${nestedObjects(levels - 1)}}`,
          headers: json,
        }),
      );
      // A monitor job's status body (optional body, PUT).
      expectDepthProblem(
        await call(`/MonitorJobs/${crypto.randomUUID()}/Succeeded`, {
          method: "PUT",
          rawBody: `{"criticality":${nestedArrays(levels - 1)}}`,
          headers: json,
        }),
      );
      // A search request.
      expectDepthProblem(
        await call("/Indices/00000000-0000-4000-8000-000000000002/Search", {
          method: "POST",
          rawBody: `{"text":"x","filter":${nestedArrays(levels - 1)}}`,
          headers: json,
        }),
      );
      // A bare array as the whole body.
      expectDepthProblem(await call("/Categories", { method: "POST", rawBody: nestedArrays(levels), headers: json }));
    }
  });

  it("applies to a compressed body, whose length is not known up front", async () => {
    const body = new Blob([`{"name":"gz ${tag()}","metadata":${nestedObjects(100_000)}}`])
      .stream()
      .pipeThrough(new CompressionStream("gzip"));
    const compressed = await new Response(body).arrayBuffer();
    expectDepthProblem(
      await call("/EntityTypes", { method: "POST", rawBody: compressed, headers: { ...json, "content-encoding": "gzip" } }),
    );
  });

  it("accepts a body of exactly 64 levels where the schema allows free JSON, and brackets inside strings do not count", async () => {
    const name = `deep ok ${tag()}`;
    // The body's own object is level 1, metadata's object level 2: 62 more inside it make 64.
    const metadata = JSON.parse(nestedObjects(MAX_JSON_DEPTH - 1)) as Record<string, unknown>;
    (metadata as { s?: string }).s = '[[[[{{{{"\\'.repeat(1000);
    const created = await call("/EntityTypes", { method: "POST", body: { name, metadata } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.metadata).toEqual(metadata);
    const read = await call(`/EntityTypes/${created.body.id}`);
    expect(read.status, read.text).toBe(200);
    expect(read.body.metadata).toEqual(metadata);
    // One level more is refused.
    expectDepthProblem(
      await call("/EntityTypes", { method: "POST", body: { name: `${name} 2`, metadata: JSON.parse(nestedObjects(MAX_JSON_DEPTH)) } }),
    );
  });
});
