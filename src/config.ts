/**
 * The deployment's settings, validated once per isolate (per env object) and typed: every place that
 * needs a setting reads it from `configOf(env)` instead of parsing `env.X` where it is used. Every
 * request reads the log level first, so a bad value fails every request with a 500 whose log line
 * names the variable and the rule (clients see an ordinary 500); background tasks log it and go on
 * ({@link taskLogger}).
 */
import type { Database } from "./db/statements";
import { z } from "zod";
import type { Bindings } from "./env";
import { ApiError } from "./pkg/errors";
import { createLogger, errorFields, LOG_LEVELS, type Logger } from "./pkg/logger";

/** A whole-number variable: absent or empty takes `fallback`. */
function wholeNumber(fallback: number, min: number, max: number) {
  return z
    .union([z.number(), z.string()])
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === "") return fallback;
      const n = typeof value === "number" ? value : /^\d+$/.test(value.trim()) ? Number(value) : NaN;
      if (!Number.isSafeInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: "custom", message: `must be a whole number from ${min} to ${max}, not '${value}'` });
        return z.NEVER;
      }
      return n;
    });
}

/** A text variable: absent or empty is undefined. */
const text = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === "" ? undefined : value));

/** A choice among `values` (case and surrounding spaces ignored): absent or empty takes `fallback`. */
function oneOf<const T extends readonly string[]>(values: T, fallback: T[number]) {
  return z
    .string()
    .optional()
    .transform((value, ctx): T[number] => {
      const chosen = (value ?? "").trim().toLowerCase();
      if (chosen === "") return fallback;
      if (!values.includes(chosen)) {
        ctx.addIssue({ code: "custom", message: `must be ${values.join(", ").replace(/, (?=[^,]*$)/, " or ")}, not '${value}'` });
        return z.NEVER;
      }
      return chosen;
    });
}

/** `scheme://host[:port]`: what a browser sends in Origin (a hybrid app's `capacitor://localhost` too). */
const ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/[^/?#\s,]+$/i;

/**
 * CORS_ORIGINS: `*`, or a comma-separated list of origins (empty: no browser origin). An entry with a
 * path (`https://app.example/`, the usual slip) never equals an Origin header, so it is refused
 * rather than silently matching nothing.
 */
const corsOrigins = z
  .string()
  .optional()
  .transform((value, ctx): readonly string[] => {
    if (value === undefined) return ["*"];
    const origins = value
      .split(",")
      .map((origin) => origin.trim())
      .filter((origin) => origin !== "");
    const bad = origins.filter((origin) => origin !== "*" && !ORIGIN.test(origin));
    if (bad.length > 0) {
      ctx.addIssue({
        code: "custom",
        message: `must be * or origins such as https://app.example (scheme and host, no path or trailing slash), not '${bad.join("', '")}'`,
      });
      return z.NEVER;
    }
    return origins;
  });

/** PUBLIC_API_URL: an absolute http(s) URL (a path prefix allowed), kept without its trailing slash; empty is none. */
const publicUrl = text.transform((value, ctx) => {
  if (value === undefined) return undefined;
  let url: URL | null = null;
  try {
    url = new URL(value.trim());
  } catch {
    // not a URL: refused below
  }
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:") || url.search !== "" || url.hash !== "") {
    ctx.addIssue({ code: "custom", message: `must be an absolute http(s) URL without query or fragment, not '${value}'` });
    return z.NEVER;
  }
  return url.href.replace(/\/+$/, "");
});

/** Longest token lifetime accepted unless AUTH_MAX_TOKEN_LIFETIME_SECONDS says otherwise: one day. */
const DEFAULT_MAX_TOKEN_LIFETIME_SECONDS = 24 * 60 * 60;

const ConfigSchema = z.object({
  /** Log lines below this level are not written (README, "Configuration"). */
  LOG_LEVEL: oneOf(LOG_LEVELS, "info"),
  /** `off` disables the per-user request limits. */
  RATE_LIMITS: oneOf(["on", "off"], "on"),
  /** Origins a browser may call from: `*`, a list, or none (an empty list). */
  CORS_ORIGINS: corsOrigins,
  /** The API's public base URL (job containers, webhook links); undefined: the request's origin or a relative path. */
  PUBLIC_API_URL: publicUrl,
  /** Longest token lifetime accepted, `exp` minus `iat` (README, "Configuration"). */
  AUTH_MAX_TOKEN_LIFETIME_SECONDS: wholeNumber(DEFAULT_MAX_TOKEN_LIFETIME_SECONDS, 60, 366 * 24 * 60 * 60),
  /** Largest JSON body in bytes (larger: 413). */
  MAX_BODY_BYTES: wholeNumber(1024 * 1024, 1024, 64 * 1024 * 1024),
  /** Admission (src/pkg/admission.ts): requests one user may have in progress on one isolate at once (more: 429). */
  MAX_USER_REQUESTS_IN_FLIGHT: wholeNumber(8, 1, 10_000),
  /** Admission: requests one user may start on one isolate in a second, as a bucket refilled at that rate (more: 429). */
  MAX_USER_REQUESTS_PER_SECOND: wholeNumber(50, 1, 10_000_000),
  /** Requests one isolate serves at once (more: 503 with Retry-After). */
  MAX_REQUESTS_IN_FLIGHT: wholeNumber(256, 1, 100_000),
  /** Upload bodies (past MAX_BODY_BYTES, or of unknown length) one isolate receives at once (more: 503 with Retry-After). */
  MAX_LARGE_BODIES_IN_FLIGHT: wholeNumber(3, 1, 1000),
  /** Days the audit trail keeps its records in D1 before the cron moves them to R2 (AUDIT_ARCHIVE). */
  AUDIT_RETENTION_DAYS: wholeNumber(90, 1, 3650),
  /** Days an archived segment of the audit trail is kept in R2 (10 years by default) before the cron removes it. */
  AUDIT_ARCHIVE_DAYS: wholeNumber(3650, 1, 36_500),
  /** Most fields a custom index's mapping may have (spec 8). */
  SEARCH_MAX_FIELDS: wholeNumber(5000, 1, 100_000),
  /** Time limit of one run of a custom index's library, ms. */
  SEARCH_LIBRARY_TIME_MS: wholeNumber(20_000, 100, 600_000),
  /** Longest a followed job output stream stays open, seconds. */
  JOB_OUTPUT_FOLLOW_SECONDS: wholeNumber(300, 1, 3600),
  /** What one entry of an imported XLSX workbook may inflate to, MiB (more: the file is refused as a zip bomb). */
  IMPORT_MAX_INFLATED_MIB: wholeNumber(256, 1, 4096),
  /** How often a followed job output asks the host, ms. */
  JOB_OUTPUT_POLL_MS: wholeNumber(2000, 50, 60_000),
  /** The local /connect/token's clients (JSON) and signing key (JWK): both, or it is off. */
  LOCAL_OAUTH_CLIENTS: text,
  LOCAL_OAUTH_SIGNING_JWK: text,
  /** Where job containers run, and the local host's URL and secret (README, "Data processing"). */
  CONTAINER_HOST_KIND: text,
  LOCAL_CONTAINER_HOST_URL: text,
  LOCAL_CONTAINER_HOST_SECRET: text,
});

export type Config = z.output<typeof ConfigSchema>;

const parsed = new WeakMap<object, Config>();
const NAMES = Object.keys(ConfigSchema.shape);
/** Settings by their raw values: tests give requests env objects of their own. */
const byValues = new Map<string, Config>();
/** A request's env (see {@link withDatabase}) -> the isolate's env, whose settings it has. */
const settingsFrom = new WeakMap<object, Bindings>();

/**
 * A request's env: the isolate's, with DB replaced (by the request's D1 session, src/handlers.ts). It
 * inherits every other binding rather than copying them (a copy was 2.3 KB per request), and its
 * settings are looked up on the isolate's env, parsed once.
 */
export function withDatabase(env: Bindings, db: Database): Bindings {
  const derived = Object.create(env, { DB: { value: db, enumerable: true } }) as Bindings;
  settingsFrom.set(derived, env);
  return derived;
}

/** The validated settings of this environment (parsed on first use, then kept with the env object). */
export function configOf(requestEnv: Bindings): Config {
  const env = settingsFrom.get(requestEnv) ?? requestEnv;
  const known = parsed.get(env);
  if (known) return known;
  // A new env object with the same settings: found by value, not parsed again (a zod parse on every
  // request cost about 18 µs of CPU per read; docs/benchmarks.md, "Reads (issue 22)").
  const key = JSON.stringify(NAMES.map((name) => (env as unknown as Record<string, unknown>)[name] ?? null));
  let config = byValues.get(key);
  if (!config) {
    const result = ConfigSchema.safeParse(env);
    if (!result.success) {
      const problems = result.error.issues.map((issue) => `${issue.path.join(".")} ${issue.message}`).join("; ");
      throw new ApiError(
        "Internal",
        `The deployment's configuration is not valid: ${problems} (wrangler.toml [vars], .dev.vars or secrets).`,
      );
    }
    config = result.data;
    // Tests vary the settings; a deployment has one set.
    if (byValues.size >= 32) byValues.clear();
    byValues.set(key, config);
  }
  parsed.set(env, config);
  return config;
}

/**
 * A background task's logger (cron, queues, Durable Objects) at the configured level. A bad
 * configuration is logged and the task goes on at info: requests refuse to run on it (a 500 that
 * names nothing, the log line names the variable), but events and jobs already under way are not
 * dropped over a log setting.
 */
export function taskLogger(env: Bindings, fields: Record<string, unknown>): Logger {
  try {
    return createLogger(configOf(env).LOG_LEVEL, fields);
  } catch (error) {
    const log = createLogger("info", fields);
    log.error("configuration not valid", errorFields(error));
    return log;
  }
}
