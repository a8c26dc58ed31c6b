/**
 * The configuration is read once, validated, and typed (src/config.ts): defaults for what is left
 * out, and a bad value is refused naming the variable instead of being read as 0 or NaN somewhere.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { configOf, taskLogger, withDatabase } from "../../src/config";
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

  it("reads the log level, rate limits, CORS origins and public URL as documented", () => {
    const read = (settings: Record<string, string | undefined>) => configOf({ ...env, ...settings } as unknown as typeof env);
    expect(read({ LOG_LEVEL: undefined, RATE_LIMITS: undefined, CORS_ORIGINS: undefined, PUBLIC_API_URL: undefined })).toMatchObject({
      LOG_LEVEL: "info",
      RATE_LIMITS: "on",
      CORS_ORIGINS: ["*"],
      PUBLIC_API_URL: undefined,
    });
    expect(read({ LOG_LEVEL: "", RATE_LIMITS: "", CORS_ORIGINS: "", PUBLIC_API_URL: "" })).toMatchObject({
      LOG_LEVEL: "info",
      RATE_LIMITS: "on",
      CORS_ORIGINS: [],
      PUBLIC_API_URL: undefined,
    });
    expect(
      read({
        LOG_LEVEL: " Warn ",
        RATE_LIMITS: "OFF",
        CORS_ORIGINS: "https://app.example, capacitor://localhost,http://localhost:8100",
        PUBLIC_API_URL: "https://api.example/integrity/",
      }),
    ).toMatchObject({
      LOG_LEVEL: "warn",
      RATE_LIMITS: "off",
      CORS_ORIGINS: ["https://app.example", "capacitor://localhost", "http://localhost:8100"],
      PUBLIC_API_URL: "https://api.example/integrity",
    });
  });

  it("refuses a log level, rate limit switch, origin or public URL that would otherwise be silently ignored", () => {
    for (const [name, value, rule] of [
      ["LOG_LEVEL", "verbose", "must be debug, info, warn or error, not 'verbose'"],
      ["RATE_LIMITS", "disabled", "must be on or off, not 'disabled'"],
      ["CORS_ORIGINS", "https://app.example/", "must be \\* or origins such as https://app.example .*, not 'https://app.example/'"],
      ["CORS_ORIGINS", "https://ok.example, app.example", "not 'app.example'"],
      ["PUBLIC_API_URL", "api.example", "must be an absolute http\\(s\\) URL without query or fragment, not 'api.example'"],
      ["PUBLIC_API_URL", "ftp://api.example", "not 'ftp://api.example'"],
      ["PUBLIC_API_URL", "https://api.example/?x=1", "not 'https://api.example/\\?x=1'"],
    ] as const) {
      const read = () => configOf({ ...env, [name]: value } as unknown as typeof env);
      expect(read, `${name}=${value}`).toThrow(new RegExp(`${name} .*${rule}`));
    }
  });

  it("gives a request's env the isolate's settings and bindings, with its own database", () => {
    const isolate = { ...env, MAX_BODY_BYTES: "4096" } as unknown as typeof env;
    const session = isolate.DB.withSession("first-unconstrained") as unknown as D1Database;
    const request = withDatabase(isolate, session);
    expect(request.DB).toBe(session);
    expect(request.MEDIA).toBe(isolate.MEDIA);
    expect(request.JOBS).toBe(isolate.JOBS);
    expect(request.MAX_BODY_BYTES).toBe("4096");
    // Parsed once, for the isolate: every request's env reads the same settings object.
    expect(configOf(request)).toBe(configOf(isolate));
    expect(configOf(withDatabase(isolate, session))).toBe(configOf(isolate));
  });

  it("keeps a background task running at info on a bad log level, logging which variable is wrong", () => {
    const logged: string[] = [];
    const original = console.error;
    console.error = (line: unknown) => void logged.push(String(line));
    try {
      const log = taskLogger({ ...env, LOG_LEVEL: "loud" } as unknown as typeof env, { task: "test" });
      log.debug("not written at info");
      log.error("written");
      const lines = logged.map((line) => JSON.parse(line) as { msg: string; error?: string; task: string });
      expect(lines.map((line) => line.msg)).toEqual(["configuration not valid", "written"]);
      expect(lines[0]!.error).toContain("LOG_LEVEL must be debug, info, warn or error, not 'loud'");
      expect(lines[0]!.task).toBe("test");
    } finally {
      console.error = original;
    }
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

  it("answers every request, reads too, with a 500 on a bad setting and logs which variable is wrong", async () => {
    for (const [settings, method, rule] of [
      [{ LOG_LEVEL: "verbose" }, "GET", "LOG_LEVEL must be debug, info, warn or error, not 'verbose'"],
      [{ MAX_BODY_BYTES: "lots", LOG_LEVEL: "info" }, "POST", "MAX_BODY_BYTES must be a whole number"],
    ] as const) {
      const logged: string[] = [];
      const original = { log: console.log, error: console.error };
      console.log = console.error = (line: unknown) => void logged.push(String(line));
      try {
        const ctx = createExecutionContext();
        const request = new Request("https://api.test/Categories", {
          method,
          headers: { authorization: `Bearer ${await tokenFor()}`, "content-type": "application/json" },
          body: method === "POST" ? "{}" : undefined,
        });
        const res = await worker.fetch!(
          request as Request<unknown, IncomingRequestCfProperties>,
          { ...env, ...settings } as unknown as typeof env,
          ctx,
        );
        await waitOnExecutionContext(ctx);
        expect(res.status, method).toBe(500);
        expect(res.headers.get("content-type")).toContain("application/problem+json");
        // The answer names nothing of the deployment; the log line names the variable and the rule.
        expect(await res.text()).not.toContain(Object.keys(settings)[0]!);
        expect(logged.join("\n")).toContain(rule);
      } finally {
        console.log = original.log;
        console.error = original.error;
      }
    }
  });
});
