// The hostile soak's other user (scripts/soak-hostile.mjs): GET /health and GET /Deviations/{id} every
// `everyMs`, each sent on time whether or not the previous one was answered, from a worker thread of its
// own. Its own thread, because the probes time the server, not the soak's main thread: that one also
// drives the workload (200 clients, their bodies and answers), and a probe answered while it is busy
// would be read late and counted slow. Its own connections too (below). On "stop" it waits for the
// probes in flight and posts what it measured.
import { Agent, get as httpGet } from "node:http";
import { parentPort, workerData } from "node:worker_threads";

const { base, probeToken, deviationId, everyMs, limitMs, giveUpMs } = workerData;

/**
 * The other user's connections: their own pool, as another client's would be, not the workload's. In one
 * pool, a probe could be sent on a connection workerd was closing under a workload client (the local
 * server now drains the unread body of a refused request, which was why workerd closed them). The probes'
 * own connections close after 3 s idle, before workerd's 5 s (it closes idle connections after 5 s and,
 * unlike Node's server, says nothing of it in a Keep-Alive header), as a client told the server's limit
 * would.
 */
const agent = new Agent({ keepAlive: true, timeout: 3000 });

/** One probe: GET `path`; resolves with the status and body once the body is read. */
function probeRequest(path, headers) {
  return new Promise((resolve, reject) => {
    const req = httpGet(`${base}${path}`, { agent, headers, timeout: giveUpMs }, (res) => {
      let body = "";
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode, body }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(Object.assign(new Error("no answer"), { code: "PROBE_TIMEOUT" })));
    req.on("error", reject);
  });
}

const measured = { health: [], read: [], refused: [], dropped: [], fiveHundreds: [], slow: [] };
const started = performance.now();
const inFlight = new Set();
function probe(kind, path, headers) {
  const t0 = performance.now();
  const done = probeRequest(path, headers)
    .then(({ status, body }) => {
      const ms = performance.now() - t0;
      measured[kind].push(ms);
      if (ms > limitMs) measured.slow.push(`probe ${path} sent ${((t0 - started) / 1000).toFixed(1)} s in: ${Math.round(ms)} ms`);
      const detail = (() => {
        try {
          return JSON.parse(body).detail ?? body.slice(0, 160);
        } catch {
          return body.slice(0, 160);
        }
      })();
      if (status >= 500) measured.fiveHundreds.push(`probe ${path}: ${status} ${detail}`);
      else if (status !== 200) measured.refused.push(`probe ${path}: ${status} ${detail}`);
    })
    .catch((error) => {
      measured[kind].push(performance.now() - t0);
      measured.dropped.push(`probe ${path}: ${error.code ?? error.message}`);
    })
    .finally(() => inFlight.delete(done));
  inFlight.add(done);
}

const timer = setInterval(() => {
  probe("health", "/health", {});
  probe("read", `/Deviations/${deviationId}`, { authorization: `Bearer ${probeToken}` });
}, everyMs);

parentPort.on("message", async (message) => {
  if (message !== "stop") return;
  clearInterval(timer);
  await Promise.all(inFlight);
  agent.destroy();
  parentPort.postMessage(measured);
  parentPort.close();
});
