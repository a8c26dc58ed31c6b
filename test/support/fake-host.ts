/**
 * Test-side handle on the scripted fake container host (test/support/fake-container-host.ts).
 */
import { env } from "cloudflare:workers";

export interface FakeGroupState {
  phase?: "pending" | "running" | "succeeded" | "failed";
  exitCode?: number | null;
  error?: string | null;
  output?: string;
  outputTruncated?: boolean;
  /** Why the host holds the group back (its job limits), as the local host says it; null when it does not. */
  waiting?: string | null;
}

export interface FakeGroupRecord {
  spec: {
    name: string;
    image: string;
    command: string | null;
    environment: Record<string, string>;
    cpuCores: number;
    memoryGb: number;
    gpuCores: number | null;
    gpuSku: string | null;
    timeoutSeconds: number;
    owner: string;
  } | null;
  starts: number;
  removed: boolean;
  lost: boolean;
  state: Required<FakeGroupState>;
}

function control(path: string, init?: RequestInit): Promise<Response> {
  return (env as unknown as { LOCAL_CONTAINER_HOST: Fetcher }).LOCAL_CONTAINER_HOST.fetch(`http://container-host/__control${path}`, init);
}

const post = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

/** Sets what the group reports from now on (e.g. `{ phase: "succeeded", exitCode: 0, output: "done" }`). */
export async function scriptGroup(name: string, state: FakeGroupState): Promise<void> {
  await control(`/groups/${encodeURIComponent(name)}`, post(state));
}

/** The host forgets the group, as when a container is lost. */
export async function loseGroup(name: string): Promise<void> {
  await control(`/groups/${encodeURIComponent(name)}/lose`, post({}));
}

/** What the host saw of a group, or null when it was never mentioned. */
export async function groupRecord(name: string): Promise<FakeGroupRecord | null> {
  const res = await control(`/groups/${encodeURIComponent(name)}`);
  return res.status === 404 ? null : ((await res.json()) as FakeGroupRecord);
}

/** While down, every protocol call answers 503. Always restore with `setHostDown(false)`. */
export async function setHostDown(down: boolean): Promise<void> {
  await control("/outage", post({ down }));
}
