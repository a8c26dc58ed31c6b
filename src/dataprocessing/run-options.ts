/**
 * Run options at rest: one AES-256-GCM blob per config or job, sealed under the deployment's key ring
 * (src/pkg/keys.ts) with the key the interface names for them, `dataprocessing-encryption-key`
 * itself. The option names are inside the blob too: D1 holds nothing of the options in plain text.
 * Also the jobs' output tokens, scoped tokens of the kit.
 */
import { ApiError } from "../pkg/errors";
import { openWithDeploymentKey, sealWithDeploymentKey, signScopedToken, type SecretSource } from "../pkg/keys";

export type RunOptions = Record<string, string>;

function notConfigured(): ApiError {
  return new ApiError(
    "NotConfigured",
    'Run options cannot be stored: the secret DATAPROCESSING_ENCRYPTION_KEY is not set (README, "Data processing").',
  );
}

/** Seals run options under the current key. */
export async function sealRunOptions(env: SecretSource, options: RunOptions): Promise<string> {
  if (!env.DATAPROCESSING_ENCRYPTION_KEY) throw notConfigured();
  return sealWithDeploymentKey(env, JSON.stringify(options));
}

/** Opens a blob sealed by {@link sealRunOptions} under any key of the ring. */
export async function openRunOptions(env: SecretSource, sealed: string): Promise<RunOptions> {
  if (!env.DATAPROCESSING_ENCRYPTION_KEY) throw notConfigured();
  if (!/^v[A-Za-z0-9]{1,16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(sealed)) throw new Error("stored run options are not a sealed blob");
  return JSON.parse(await openWithDeploymentKey(env, sealed)) as RunOptions;
}

/**
 * The original client's older configs hold run options as a docker-style string of `-e KEY=VALUE`
 * tokens (values may be quoted). Returns the map, or the index of the first token that is not one.
 */
export function parseDockerStyleOptions(text: string): { options: RunOptions } | { error: string } {
  const options: RunOptions = {};
  const tokens = text.match(/"[^"]*"|'[^']*'|\S+/g) ?? [];
  for (let i = 0; i < tokens.length; i++) {
    const flag = tokens[i]!;
    if (flag !== "-e" && flag !== "--env") return { error: `'${flag}' is not '-e'; run options as a string are '-e KEY=VALUE' tokens` };
    const pair = tokens[++i];
    const unquoted = pair?.replace(/^(["'])(.*)\1$/, "$2");
    const eq = unquoted?.indexOf("=") ?? -1;
    if (!unquoted || eq <= 0) return { error: `'-e' must be followed by KEY=VALUE` };
    options[unquoted.slice(0, eq)] = unquoted.slice(eq + 1).replace(/^(["'])(.*)\1$/, "$2");
  }
  return { options };
}

/**
 * A job's output token: a scoped token (`job.{jobId}.{keyVersion}.{mac}`, src/pkg/keys.ts) the service
 * makes again whenever it (re)starts the job's container; accepted only while the job runs
 * (src/dataprocessing/tokens.ts).
 */
export const jobTokenFor = (env: SecretSource, jobId: string) => signScopedToken(env, "job", jobId);
