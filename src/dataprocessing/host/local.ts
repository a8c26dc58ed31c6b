import type { ContainerHost, GroupSpec, GroupState, HostCapacity, JobImage } from "./types";
import { HostUnavailableError } from "./errors";

/** How long one call to the host may take before the host counts as not answering. */
const CALL_TIMEOUT_MS = 10_000;

type Send = (path: string, init?: RequestInit) => Promise<Response>;

/**
 * The local host protocol (see ./types.ts) over HTTP: the Node host `npm start` runs beside the
 * Worker, reached by URL, or a service binding (the scripted fake host in tests).
 */
export class LocalContainerHost implements ContainerHost {
  readonly kind = "local" as const;

  constructor(private readonly send: Send) {}

  /** The host at `baseUrl`, which takes only requests carrying its secret (`npm start` generates it). */
  static overUrl(baseUrl: string, secret: string): LocalContainerHost {
    const base = baseUrl.replace(/\/+$/, "");
    return new LocalContainerHost((path, init) =>
      fetch(`${base}${path}`, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${secret}` } }),
    );
  }

  static overBinding(binding: Fetcher): LocalContainerHost {
    return new LocalContainerHost((path, init) => binding.fetch(`http://container-host${path}`, init));
  }

  async listImages(): Promise<{ images: JobImage[]; capacity: HostCapacity }> {
    const res = await this.call("GET", "/images");
    return (await res.json()) as { images: JobImage[]; capacity: HostCapacity };
  }

  async startGroup(spec: GroupSpec): Promise<void> {
    await this.call("PUT", `/groups/${encodeURIComponent(spec.name)}`, spec);
  }

  async inspectGroup(name: string, tailBytes: number): Promise<GroupState | null> {
    const res = await this.call("GET", `/groups/${encodeURIComponent(name)}?tailBytes=${tailBytes}`, undefined, [404]);
    if (res.status === 404) return null;
    return (await res.json()) as GroupState;
  }

  async removeGroup(name: string): Promise<void> {
    await this.call("DELETE", `/groups/${encodeURIComponent(name)}`, undefined, [404]);
  }

  private async call(method: string, path: string, body?: unknown, accepted: number[] = []): Promise<Response> {
    let res: Response;
    try {
      res = await this.send(path, {
        method,
        headers: body === undefined ? {} : { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
    } catch (err) {
      // Never include the request body: it carries the job's run options.
      throw new HostUnavailableError(`the local container host did not answer ${method} ${path.split("?")[0]}: ${(err as Error).message}`);
    }
    if (res.ok || accepted.includes(res.status)) return res;
    const text = (await res.text().catch(() => "")).slice(0, 300);
    throw new HostUnavailableError(
      `the local container host answered ${res.status} to ${method} ${path.split("?")[0]}${text ? `: ${text}` : ""}`,
    );
  }
}
