/**
 * Azure Container Instances through the Azure Resource Manager REST API, which is what the spec's
 * container groups, ACR images and GPU SKUs describe. One container group per job
 * (`containergroup-{jobId}`, restart policy Never) in one resource group; images from one Azure
 * Container Registry; an app registration's client credentials (OAuth 2.0, Microsoft identity
 * platform) for a management token, cached until shortly before it expires.
 *
 * NOT RUN AGAINST AZURE: it is tested against a recorded fake of the documented requests and answers
 * (test/dataprocessing/azure-host.test.ts). Time limits are the runner's: ACI has no run-time limit
 * of its own, so the runner fails a job past its deadline and deletes its group.
 */
import type { ContainerHost, GroupSpec, GroupState, HostCapacity, JobImage } from "./types";
import { HostNotConfiguredError, HostUnavailableError } from "./errors";
import { nowMs } from "../../platform/services";

export const ARM_API_VERSION = "2023-05-01";
const ARM = "https://management.azure.com";
const CONTAINER = "job";
/** GPU SKUs Azure Container Instances has offered. */
const ACI_GPU_SKUS = ["K80", "P100", "V100"];

export interface AzureSettings {
  AZURE_TENANT_ID: string;
  AZURE_CLIENT_ID: string;
  AZURE_CLIENT_SECRET: string;
  AZURE_SUBSCRIPTION_ID: string;
  AZURE_RESOURCE_GROUP: string;
  AZURE_LOCATION: string;
  ACR_LOGIN_SERVER: string;
  ACR_USERNAME: string;
  ACR_PASSWORD: string;
  /** Largest group this deployment allows (ACI's own limits depend on the region). */
  AZURE_MAX_CPU_CORES?: string;
  AZURE_MAX_MEMORY_GB?: string;
  AZURE_MAX_GPU_CORES?: string;
}

const REQUIRED: (keyof AzureSettings)[] = [
  "AZURE_TENANT_ID",
  "AZURE_CLIENT_ID",
  "AZURE_CLIENT_SECRET",
  "AZURE_SUBSCRIPTION_ID",
  "AZURE_RESOURCE_GROUP",
  "AZURE_LOCATION",
  "ACR_LOGIN_SERVER",
  "ACR_USERNAME",
  "ACR_PASSWORD",
];

export function azureSettings(source: Record<string, unknown>): AzureSettings {
  const missing = REQUIRED.filter((name) => typeof source[name] !== "string" || source[name] === "");
  if (missing.length > 0)
    throw new HostNotConfiguredError(
      `CONTAINER_HOST_KIND is azure but ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} not set`,
    );
  return source as unknown as AzureSettings;
}

type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

interface ArmEvent {
  message?: string;
  type?: string;
}

interface ArmContainerGroup {
  properties?: {
    provisioningState?: string;
    instanceView?: { state?: string; events?: ArmEvent[] };
    containers?: {
      properties?: { instanceView?: { currentState?: { state?: string; exitCode?: number; detailStatus?: string }; events?: ArmEvent[] } };
    }[];
  };
}

/** At most this many pages of the registry's catalog (and of one repository's tags) are read. */
const MAX_REGISTRY_PAGES = 20;

/**
 * The phase of a group from its ARM representation (learn.microsoft.com, "Azure Container Instances
 * states"): the group's `instanceView.state` (Pending, Running, Succeeded, Failed, Stopped), the
 * container's `currentState` (Waiting, Running, Terminated with an exit code) and the group's
 * `provisioningState` (a deployment that failed, e.g. an image that cannot be pulled or no capacity).
 */
export function armPhase(group: ArmContainerGroup): Pick<GroupState, "phase" | "exitCode" | "error"> {
  const properties = group.properties ?? {};
  const containerView = properties.containers?.[0]?.properties?.instanceView;
  const container = containerView?.currentState;
  const groupState = properties.instanceView?.state;
  const exitCode = container?.exitCode ?? null;
  // The most telling event: the container's last warning, else its last event, else the group's.
  const events = [...(containerView?.events ?? []), ...(properties.instanceView?.events ?? [])];
  const lastEvent = (events.filter((e) => e.type === "Warning").at(-1) ?? events.at(-1))?.message ?? null;
  if (container?.state === "Terminated") {
    if (exitCode === 0) return { phase: "succeeded", exitCode, error: null };
    return {
      phase: "failed",
      exitCode,
      error: `The container exited with code ${exitCode ?? "unknown"}${container.detailStatus ? ` (${container.detailStatus})` : ""}.`,
    };
  }
  if (properties.provisioningState === "Failed" || groupState === "Failed") {
    return {
      phase: "failed",
      exitCode,
      error: lastEvent ? `Azure could not run the container group: ${lastEvent}` : "Azure reports the container group as Failed.",
    };
  }
  if (groupState === "Stopped") return { phase: "failed", exitCode, error: "The container group was stopped outside this service." };
  if (groupState === "Succeeded") return { phase: "succeeded", exitCode, error: null };
  if (groupState === "Running" || container?.state === "Running") return { phase: "running", exitCode, error: null };
  return { phase: "pending", exitCode, error: null };
}

/** Management tokens per app registration, shared by every host object of the isolate. */
const tokens = new Map<string, { value: string; expiresAt: number }>();

export class AzureContainerHost implements ContainerHost {
  readonly kind = "azure" as const;

  constructor(
    private readonly settings: AzureSettings,
    private readonly send: Fetch = (input, init) => fetch(input, init),
    private readonly now: () => number = nowMs,
  ) {}

  private groupUrl(name: string, suffix = ""): string {
    const s = this.settings;
    const subscription = `${ARM}/subscriptions/${encodeURIComponent(s.AZURE_SUBSCRIPTION_ID)}`;
    const group = `${subscription}/resourceGroups/${encodeURIComponent(s.AZURE_RESOURCE_GROUP)}`;
    return `${group}/providers/Microsoft.ContainerInstance/containerGroups/${encodeURIComponent(name)}${suffix}`;
  }

  /** A management token (client credentials), reused until a minute before it expires. */
  private async accessToken(): Promise<string> {
    const s = this.settings;
    const cacheKey = `${s.AZURE_TENANT_ID}/${s.AZURE_CLIENT_ID}`;
    const cached = tokens.get(cacheKey);
    if (cached && cached.expiresAt - 60_000 > this.now()) return cached.value;
    const body = new URLSearchParams({
      grant_type: "client_credentials",
      client_id: s.AZURE_CLIENT_ID,
      client_secret: s.AZURE_CLIENT_SECRET,
      scope: `${ARM}/.default`,
    });
    const res = await this.call(`https://login.microsoftonline.com/${encodeURIComponent(s.AZURE_TENANT_ID)}/oauth2/v2.0/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body,
    });
    if (!res.ok) throw new HostUnavailableError(`Azure sign-in answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
    const token = (await res.json()) as { access_token: string; expires_in: number };
    tokens.set(cacheKey, { value: token.access_token, expiresAt: this.now() + Number(token.expires_in) * 1000 });
    return token.access_token;
  }

  private async call(url: string, init: RequestInit): Promise<Response> {
    try {
      return await this.send(url, { ...init, signal: AbortSignal.timeout(15_000) });
    } catch (error) {
      throw new HostUnavailableError(`Azure did not answer ${init.method ?? "GET"} ${url.split("?")[0]}: ${(error as Error).message}`);
    }
  }

  private async arm(method: string, url: string, body?: unknown, accepted: number[] = []): Promise<Response> {
    const res = await this.call(`${url}${url.includes("?") ? "&" : "?"}api-version=${ARM_API_VERSION}`, {
      method,
      headers: {
        authorization: `Bearer ${await this.accessToken()}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.ok || accepted.includes(res.status)) return res;
    // The error body of ARM names the problem (quota, image pull...); it never holds the environment.
    throw new HostUnavailableError(
      `Azure answered ${res.status} to ${method} ${(url.split("?")[0] ?? url).replace(ARM, "")}: ${(await res.text()).slice(0, 300)}`,
    );
  }

  /**
   * Every item of a paged registry list (Docker Registry HTTP API v2): the next page is named by
   * the answer's `Link: <...>; rel="next"` header.
   */
  private async registryList(path: string, field: "repositories" | "tags", auth: string): Promise<string[] | null> {
    const registry = `https://${this.settings.ACR_LOGIN_SERVER}`;
    const items: string[] = [];
    let next: string | null = `${registry}${path}`;
    for (let page = 0; next && page < MAX_REGISTRY_PAGES; page++) {
      const res = await this.call(next, { method: "GET", headers: { authorization: auth } });
      if (!res.ok) return page === 0 ? null : items;
      items.push(...((((await res.json()) as Record<string, string[] | null | undefined>)[field] ?? []) as string[]));
      const link = /<([^>]+)>\s*;\s*rel="?next"?/.exec(res.headers.get("link") ?? "");
      next = link ? new URL(link[1]!, registry).toString() : null;
    }
    return items;
  }

  async listImages(): Promise<{ images: JobImage[]; capacity: HostCapacity }> {
    const s = this.settings;
    const auth = `Basic ${btoa(`${s.ACR_USERNAME}:${s.ACR_PASSWORD}`)}`;
    const repositories = await this.registryList("/v2/_catalog?n=1000", "repositories", auth);
    if (!repositories) throw new HostUnavailableError("the container registry refused or failed its catalog");
    const images: JobImage[] = [];
    for (const repository of repositories) {
      // A repository whose tags cannot be read is left out rather than failing the whole list.
      for (const tag of (await this.registryList(`/v2/${repository}/tags/list?n=1000`, "tags", auth)) ?? []) {
        images.push({ name: repository, tag, description: `${s.ACR_LOGIN_SERVER}/${repository}:${tag}`, command: null });
      }
    }
    return {
      images,
      capacity: {
        maxCpuCores: Number(s.AZURE_MAX_CPU_CORES ?? 4),
        maxMemoryGb: Number(s.AZURE_MAX_MEMORY_GB ?? 16),
        maxGpuCores: Number(s.AZURE_MAX_GPU_CORES ?? 4),
        gpuSkus: ACI_GPU_SKUS,
      },
    };
  }

  async startGroup(spec: GroupSpec): Promise<void> {
    // PUT is create-or-update: updating a running group would restart it, so an existing group is left alone.
    const existing = await this.arm("GET", this.groupUrl(spec.name), undefined, [404]);
    if (existing.status !== 404) return;
    const s = this.settings;
    const requests: Record<string, unknown> = { cpu: spec.cpuCores, memoryInGB: spec.memoryGb };
    if (spec.gpuCores && spec.gpuSku) requests.gpu = { count: spec.gpuCores, sku: spec.gpuSku };
    await this.arm("PUT", this.groupUrl(spec.name), {
      location: s.AZURE_LOCATION,
      properties: {
        osType: "Linux",
        restartPolicy: "Never",
        imageRegistryCredentials: [{ server: s.ACR_LOGIN_SERVER, username: s.ACR_USERNAME, password: s.ACR_PASSWORD }],
        containers: [
          {
            name: CONTAINER,
            properties: {
              image: `${s.ACR_LOGIN_SERVER}/${spec.image}`,
              ...(spec.command ? { command: ["/bin/sh", "-c", spec.command] } : {}),
              // Secure values are not shown by the ARM API once set.
              environmentVariables: Object.entries(spec.environment).map(([name, value]) => ({ name, secureValue: value })),
              resources: { requests },
            },
          },
        ],
      },
    });
  }

  async inspectGroup(name: string, tailBytes: number): Promise<GroupState | null> {
    const res = await this.arm("GET", this.groupUrl(name), undefined, [404]);
    if (res.status === 404) return null;
    const { phase, exitCode, error } = armPhase((await res.json()) as ArmContainerGroup);
    let output = "";
    if (phase !== "pending") {
      // A container that never started has no logs (ARM answers 400 or 404): its state still counts.
      const logs = await this.arm("GET", this.groupUrl(name, `/containers/${CONTAINER}/logs?tail=1000`), undefined, [400, 404, 409]);
      if (logs.ok) output = ((await logs.json()) as { content?: string }).content ?? "";
    }
    const bytes = new TextEncoder().encode(output);
    const truncated = bytes.length > tailBytes;
    return {
      phase,
      exitCode,
      error,
      output: truncated ? new TextDecoder().decode(bytes.slice(bytes.length - tailBytes)) : output,
      outputTruncated: truncated,
    };
  }

  async removeGroup(name: string): Promise<void> {
    await this.arm("DELETE", this.groupUrl(name), undefined, [404]);
  }
}
