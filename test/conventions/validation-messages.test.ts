/**
 * Validation failures read as sentences about the API (issue 24, "Answers that help"): which field,
 * what it must be, an example; the `errors[]` field and rule stay what clients rely on.
 */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";

interface Problem {
  detail: string;
  errors: { field: string; rule: string; message: string }[];
}

const problemOf = (body: unknown, field: string) => (body as Problem).errors.find((e) => e.field === field);

describe("validation messages", () => {
  it("says a missing field is required, what it is and an example", async () => {
    const res = await call("/DataTypes", { method: "POST", body: { name: "Thickness readings" } });
    expect(res.status).toBe(400);
    const problem = problemOf(res.body, "body.allowedExtensions");
    expect(problem).toMatchObject({ field: "body.allowedExtensions", rule: "invalid_type" });
    expect(problem!.message).toBe('allowedExtensions is required: a list of text values such as ["xlsx","xls","csv"].');
    expect(res.body.detail).toContain("allowedExtensions is required");
    expect(res.text).not.toContain("Invalid input");
  });

  it("names a path id that is not a UUID with an example", async () => {
    const res = await call("/Categories/not-a-uuid");
    expect(res.status).toBe(400);
    const problem = problemOf(res.body, "path.id");
    expect(problem).toMatchObject({ field: "path.id", rule: "invalid_format" });
    expect(problem!.message).toMatch(/^id must be a UUID such as [0-9a-f-]{36}, not 'not-a-uuid'\.$/);
    expect(res.text).not.toContain("Invalid UUID");
  });

  it("says what a value of the wrong type must be and what was sent", async () => {
    const res = await call("/DataTypes", { method: "POST", body: { name: "Readings", allowedExtensions: "csv" } });
    expect(res.status).toBe(400);
    expect(problemOf(res.body, "body.allowedExtensions")!.message).toBe(
      `allowedExtensions must be a list of text values such as ["xlsx","xls","csv"], not 'csv'.`,
    );
  });

  it("speaks of bounds in words, and of unknown fields with the ones the body takes", async () => {
    const empty = await call("/DataTypes", { method: "POST", body: { name: "Readings", allowedExtensions: [] } });
    expect(problemOf(empty.body, "body.allowedExtensions")).toMatchObject({ rule: "too_small" });
    expect(problemOf(empty.body, "body.allowedExtensions")!.message).toMatch(/^allowedExtensions must list at least one item/);

    const extra = await call("/DataTypes", { method: "POST", body: { name: "Readings", allowedExtensions: ["csv"], colour: "red" } });
    expect(extra.status).toBe(400);
    const unknown = (extra.body as Problem).errors.find((e) => e.rule === "unrecognized_keys")!;
    expect(unknown.field).toBe("body");
    expect(unknown.message).toBe("The body does not take the field colour; it takes id, name, allowedExtensions.");
  });

  it("keeps the messages a schema writes itself", async () => {
    const res = await call("/DataTypes", { method: "POST", body: { name: "Readings", allowedExtensions: ["not an extension!"] } });
    expect(res.status).toBe(400);
    expect(problemOf(res.body, "body.allowedExtensions.0")!.message).toMatch(/^An extension is letters and digits/);
    expect(res.body.detail).toMatch(/^allowedExtensions\[0\]: An extension is letters and digits/);
  });

  it("says what is wrong inside a value of one of a union's types, keeping the union's field and rule", async () => {
    const res = await call("/JobConfigurations", {
      method: "POST",
      body: { name: "union", jobDefinition: "examples/hello:latest", runConfigs: { cpuCores: 1, memory: 1 }, runOptions: { THRESHOLD: 1 } },
    });
    expect(res.status).toBe(400);
    const problem = problemOf(res.body, "body.runOptions")!;
    expect(problem.rule).toBe("invalid_union");
    expect(problem.message).toMatch(/^runOptions\.THRESHOLD must be text.*, not the number 1\.$/);
  });

  it("describes a query number in words", async () => {
    const res = await call("/Deviations?take=lots");
    expect(res.status).toBe(400);
    const problem = (res.body as Problem).errors.find((e) => e.field === "query.take")!;
    expect(problem.message).toMatch(/^take must be a (whole )?number.*, not 'lots'\.$/);
  });
});
