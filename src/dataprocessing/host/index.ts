import { configOf } from "../../config";
import type { Bindings } from "../../env";
import type { ContainerHost } from "./types";
import { LocalContainerHost } from "./local";
import { HostNotConfiguredError } from "./errors";
import { AzureContainerHost, azureSettings } from "./azure";

export type { ContainerHost, GroupSpec, GroupState } from "./types";
export { HostNotConfiguredError, HostUnavailableError } from "./errors";

/** Settings and bindings the host choice reads; optional so a deployment names only what it uses. */
export interface HostSettings {
  /** `local`, `azure` or `cloudflare`; unset or empty: no container host (job and monitor execution answer 501). */
  CONTAINER_HOST_KIND?: string;
  /** The local host's base URL (`npm start` sets it in .dev.vars). */
  LOCAL_CONTAINER_HOST_URL?: string;
  /** The secret the local host checks on every call (`npm start` generates it per start, in .dev.vars). */
  LOCAL_CONTAINER_HOST_SECRET?: string;
  /** A service binding that speaks the local protocol (the scripted fake host in tests). */
  LOCAL_CONTAINER_HOST?: Fetcher;
}

/**
 * The container host this deployment runs jobs on, chosen by `CONTAINER_HOST_KIND`. There is no
 * default: a deployment that names none never falls back to the local host (which only `npm start`
 * runs and configures), it answers job and monitor execution with 501 NotConfigured.
 * Implementations register in `remoteHosts` (Azure Container Instances lives in ./azure.ts).
 */
export function hostFor(env: Bindings): ContainerHost {
  const config = configOf(env);
  const kind = (config.CONTAINER_HOST_KIND ?? "").trim().toLowerCase();
  if (kind === "") {
    throw new HostNotConfiguredError(
      `no container host is configured: set CONTAINER_HOST_KIND to ${Object.keys(remoteHosts).join(" or ")} (README, ` +
        `"Data processing"); npm start runs a local one`,
    );
  }
  if (kind === "local") {
    const binding = (env as HostSettings).LOCAL_CONTAINER_HOST;
    if (binding) return LocalContainerHost.overBinding(binding);
    if (config.LOCAL_CONTAINER_HOST_URL && config.LOCAL_CONTAINER_HOST_SECRET) {
      return LocalContainerHost.overUrl(config.LOCAL_CONTAINER_HOST_URL, config.LOCAL_CONTAINER_HOST_SECRET);
    }
    throw new HostNotConfiguredError(
      "CONTAINER_HOST_KIND is local but LOCAL_CONTAINER_HOST_URL with LOCAL_CONTAINER_HOST_SECRET (or a " +
        "LOCAL_CONTAINER_HOST binding) is not set",
    );
  }
  const make = remoteHosts[kind];
  if (!make) throw new HostNotConfiguredError(`CONTAINER_HOST_KIND ${kind} is not one of local, ${Object.keys(remoteHosts).join(", ")}`);
  // Each remote host validates its own settings (azureSettings names the missing ones).
  return make(env as unknown as Record<string, unknown>);
}

/** Remote implementations by kind; each reads its own settings and throws HostNotConfiguredError when some are missing. */
export const remoteHosts: Record<string, (settings: Record<string, unknown>) => ContainerHost> = {
  azure: (settings) => new AzureContainerHost(azureSettings(settings)),
  cloudflare: () => {
    throw new HostNotConfiguredError(
      "CONTAINER_HOST_KIND cloudflare is not available: Cloudflare Containers need a Durable Object class and an " +
        "image built and pushed with wrangler per image, so they cannot run the images data scientists hand over at run " +
        'time (docs/decisions.md, "Container hosts")',
    );
  },
};

/**
 * Variables every job container receives besides its run options. The job's run options never
 * override these (a run option of the same name is refused when the config is saved).
 */
export const JOB_ENV = {
  /** The job's id (rule 2 of section 4.2; the spec's name, so it keeps its lower-case spelling). */
  jobId: "jobId",
  /** The API's base URL, e.g. `http://127.0.0.1:8787`. */
  apiUrl: "INTEGRITY_EDGE_API_URL",
  /** A bearer token that may post outputs for this job alone (`POST {apiUrl}/JobOutputs`) and expires with it. */
  token: "INTEGRITY_EDGE_JOB_TOKEN",
  /** The config's output type id, when it has one. */
  outputTypeId: "INTEGRITY_EDGE_OUTPUT_TYPE_ID",
} as const;
