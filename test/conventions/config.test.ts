/**
 * The configuration is read once, validated, and typed (src/config.ts): defaults for what is left
 * out, and a bad value is refused naming the variable instead of being read as 0 or NaN somewhere.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { configOf } from "../../src/config";
import worker from "../../src/index";
import { tokenFor } from "../support/http";

describe("configuration", () => {
  it("gives the documented defaults for what a deployment leaves out or leaves empty", () => {
    const config = configOf({
      ...env,
      MAX_BODY_BYTES: "",
      SEARCH_MAX_FIELDS: undefined,
      JOB_OUTPUT_FOLLOW_SECONDS: undefined,
    } as unknown as typeof env);
    expect(config).toMatchObject({
      MAX_BODY_BYTES: 1024 * 1024,
      SEARCH_MAX_FIELDS: 5000,
      SEARCH_LIBRARY_TIME_MS: 20_000,
      JOB_OUTPUT_FOLLOW_SECONDS: 300,
      JOB_OUTPUT_POLL_MS: 2000,
      AUTH_MAX_TOKEN_LIFETIME_SECONDS: 86_400,
    });
    expect(configOf({ ...env, MAX_BODY_BYTES: "2048" } as unknown as typeof env).MAX_BODY_BYTES).toBe(2048);
  });

  it("refuses a bad value naming the variable and the rule", () => {
    for (const [name, value] of [
      ["MAX_BODY_BYTES", "1MB"],
      ["MAX_BODY_BYTES", "12"],
      ["JOB_OUTPUT_FOLLOW_SECONDS", "99999"],
      ["SEARCH_LIBRARY_TIME_MS", "-5"],
      ["AUTH_MAX_TOKEN_LIFETIME_SECONDS", "1d"],
    ] as const) {
      expect(() => configOf({ ...env, [name]: value } as unknown as typeof env), `${name}=${value}`).toThrow(
        new RegExp(`${name} must be a whole number from \\d+ to \\d+, not '${value}'`),
      );
    }
  });

  it("answers a request on a deployment with a bad value with a 500 and logs which variable is wrong", async () => {
    const logged: string[] = [];
    const original = { log: console.log, error: console.error };
    console.log = console.error = (line: unknown) => void logged.push(String(line));
    try {
      const ctx = createExecutionContext();
      const request = new Request("https://api.test/Categories", {
        method: "POST",
        headers: { authorization: `Bearer ${await tokenFor()}`, "content-type": "application/json" },
        body: "{}",
      });
      const res = await worker.fetch!(
        request as Request<unknown, IncomingRequestCfProperties>,
        { ...env, MAX_BODY_BYTES: "lots", LOG_LEVEL: "info" } as unknown as typeof env,
        ctx,
      );
      await waitOnExecutionContext(ctx);
      expect(res.status).toBe(500);
      expect(await res.text()).not.toContain("MAX_BODY_BYTES");
      expect(logged.join("\n")).toContain("MAX_BODY_BYTES must be a whole number");
    } finally {
      console.log = original.log;
      console.error = original.error;
    }
  });
});
