/**
 * The deployment's settings, validated once per isolate (per env object) and typed: every place that
 * needs a setting reads it from `configOf(env)` instead of parsing `env.X` where it is used. A bad
 * value fails the first request that needs the configuration, with a log line naming the variable
 * and the rule (clients see an ordinary 500).
 */
import { z } from "zod";
import type { Bindings } from "./env";
import { ApiError } from "./pkg/errors";

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

/** Longest token lifetime accepted unless AUTH_MAX_TOKEN_LIFETIME_SECONDS says otherwise: one day. */
const DEFAULT_MAX_TOKEN_LIFETIME_SECONDS = 24 * 60 * 60;

const ConfigSchema = z.object({
  /** Longest token lifetime accepted, `exp` minus `iat` (README, "Configuration"). */
  AUTH_MAX_TOKEN_LIFETIME_SECONDS: wholeNumber(DEFAULT_MAX_TOKEN_LIFETIME_SECONDS, 60, 366 * 24 * 60 * 60),
  /** Largest JSON body in bytes (larger: 413). */
  MAX_BODY_BYTES: wholeNumber(1024 * 1024, 1024, 64 * 1024 * 1024),
  /** Most fields a custom index's mapping may have (spec 8). */
  SEARCH_MAX_FIELDS: wholeNumber(5000, 1, 100_000),
  /** Time limit of one run of a custom index's library, ms. */
  SEARCH_LIBRARY_TIME_MS: wholeNumber(20_000, 100, 600_000),
  /** Longest a followed job output stream stays open, seconds. */
  JOB_OUTPUT_FOLLOW_SECONDS: wholeNumber(300, 1, 3600),
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
/** Settings by their raw values: src/index.ts gives every request its own env object (with its D1 session). */
const byValues = new Map<string, Config>();

/** The validated settings of this environment (parsed on first use, then kept with the env object). */
export function configOf(env: Bindings): Config {
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
