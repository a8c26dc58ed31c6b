/**
 * A scripted fake of the local container host protocol (src/dataprocessing/host/types.ts), served to
 * the test Worker as the `LOCAL_CONTAINER_HOST` service binding. It runs in the vitest (Node) process,
 * so its state outlives one test file; tests use unique group names (`containergroup-{jobId}`).
 *
 * Protocol: GET /images, PUT|GET|DELETE /groups/{name} exactly as the real local host answers them.
 * Control (tests only, through test/support/fake-host.ts):
 *   POST /__control/groups/{name}   Partial<GroupState>  sets what the group reports next (creates it if absent)
 *   POST /__control/groups/{name}/lose                   the host forgets the group (a lost container)
 *   GET  /__control/groups/{name}                        { spec, starts, removed, state } or 404
 *   POST /__control/outage          { down: boolean }    every protocol call answers 503 while down
 *   POST /__control/images          { images, capacity } replaces what GET /images lists
 */
interface GroupState {
  phase: "pending" | "running" | "succeeded" | "failed";
  exitCode: number | null;
  error: string | null;
  output: string;
  outputTruncated: boolean;
}

interface Group {
  spec: Record<string, unknown> | null;
  starts: number;
  removed: boolean;
  lost: boolean;
  state: GroupState;
}

const defaultImages = () => ({
  images: [
    {
      name: "examples/hello",
      tag: "latest",
      description: "Prints its environment names, writes an output and exits 0.",
      command: "node hello.mjs",
    },
    { name: "examples/fail", tag: "latest", description: "Exits 1 with an error message.", command: "node fail.mjs" },
    { name: "examples/slow", tag: "latest", description: "Prints a line every second for a while.", command: "node slow.mjs" },
    { name: "models/criticality", tag: "1.0", description: "Scores criticality of population items.", command: null },
    { name: "models/criticality", tag: "2.0", description: "Scores criticality of population items.", command: null },
  ],
  capacity: { maxCpuCores: 4, maxMemoryGb: 16, maxGpuCores: 4, gpuSkus: ["K80"] },
});

export function createFakeContainerHost(): (request: Request) => Promise<Response> {
  const groups = new Map<string, Group>();
  let images = defaultImages();
  let down = false;

  const json = (body: unknown, status = 200) => Response.json(body, { status });
  const group = (name: string): Group => {
    let found = groups.get(name);
    if (!found) {
      found = {
        spec: null,
        starts: 0,
        removed: false,
        lost: false,
        state: { phase: "running", exitCode: null, error: null, output: "", outputTruncated: false },
      };
      groups.set(name, found);
    }
    return found;
  };

  return async (request) => {
    const url = new URL(request.url);
    const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);

    if (parts[0] === "__control") {
      if (parts[1] === "outage") {
        down = Boolean(((await request.json()) as { down: boolean }).down);
        return json({ down });
      }
      if (parts[1] === "images") {
        images = { ...defaultImages(), ...((await request.json()) as object) };
        return json(images);
      }
      if (parts[1] === "groups" && parts[2]) {
        if (request.method === "GET") {
          const found = groups.get(parts[2]);
          return found ? json(found) : json({ error: "unknown group" }, 404);
        }
        const target = group(parts[2]);
        if (parts[3] === "lose") target.lost = true;
        else Object.assign(target.state, (await request.json()) as Partial<GroupState>);
        return json(target);
      }
      return json({ error: "unknown control call" }, 404);
    }

    if (down) return new Response("host down", { status: 503 });

    if (parts[0] === "images" && request.method === "GET") return json(images);

    if (parts[0] === "groups" && parts[1]) {
      const name = parts[1];
      const existing = groups.get(name);
      if (request.method === "PUT") {
        if (existing?.spec && !existing.lost && !existing.removed) return json({ name }, 200);
        const target = group(name);
        target.spec = (await request.json()) as Record<string, unknown>;
        target.starts += 1;
        target.lost = false;
        target.removed = false;
        return json({ name }, 201);
      }
      if (request.method === "GET") {
        if (!existing?.spec || existing.lost || existing.removed) return json({ error: "unknown group" }, 404);
        const tail = Number(url.searchParams.get("tailBytes") ?? "65536");
        const output = existing.state.output;
        const encoded = new TextEncoder().encode(output);
        if (encoded.length <= tail) return json(existing.state);
        return json({ ...existing.state, output: new TextDecoder().decode(encoded.slice(encoded.length - tail)), outputTruncated: true });
      }
      if (request.method === "DELETE") {
        if (existing) existing.removed = true;
        return new Response(null, { status: 204 });
      }
    }
    return json({ error: "not found" }, 404);
  };
}
