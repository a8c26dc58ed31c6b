// What both host checks (check-server.mjs, check-docker.mjs) use to talk to a host: every call
// carries the host's secret, as the Worker's calls do.

/** A group spec as the Worker sends it. */
export const spec = (name, image, extra = {}) => ({
  name,
  image: image.includes(":") ? image : `${image}:latest`,
  command: null,
  environment: {},
  cpuCores: 1,
  memoryGb: 1,
  gpuCores: null,
  gpuSku: null,
  timeoutSeconds: 30,
  ...extra,
});

/** put/get/del/until against `host`, authorised with its secret. */
export function hostClient(host) {
  const auth = { authorization: `Bearer ${host.secret}` };
  const client = {
    put: (name, body) =>
      fetch(`${host.url}/groups/${name}`, {
        method: "PUT",
        headers: { ...auth, "content-type": "application/json" },
        body: typeof body === "string" ? body : JSON.stringify(body),
      }),
    get: async (name, tail = 1 << 20) => {
      const res = await fetch(`${host.url}/groups/${name}?tailBytes=${tail}`, { headers: auth });
      return res.status === 404 ? null : res.json();
    },
    del: (name) => fetch(`${host.url}/groups/${name}`, { method: "DELETE", headers: auth }),
    images: () => fetch(`${host.url}/images`, { headers: auth }),
    async until(name, phases, { timeoutMs = 20_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const state = await client.get(name);
        if (state && phases.includes(state.phase)) return state;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`${name} never reached ${phases}`);
    },
  };
  return client;
}
