// Bench-only builds of the Worker with one layer of the request path taken out, to price each layer
// of bench A's read (GET /PropertyDefinitions/{id}) as "the full Worker minus this layer".
//
// Each variant is the deployed bundle (`wrangler deploy --dry-run`) with a few textual patches of
// its index.js, nothing else: the source stays free of bench switches, and every variant differs
// from the full Worker by exactly the patched lines. A patch must match exactly once (the bench
// fails otherwise, naming it), so a change of the source that moves a layer cannot silently leave
// a variant measuring the full Worker. The variants are loaded beside the full Worker in the same
// Miniflare (same D1 database) and measured in the same alternating rounds; the price of a layer
// is the full Worker's server CPU per request minus the variant's (bench/lib/cpu.mjs).
import { copyFileSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";

/**
 * The layers. `patches` are [find, replace] pairs applied to the bundle's index.js. `bindings`
 * (instead of patches) runs the same bundle with other settings.
 */
export const LAYER_VARIANTS = [
  {
    name: "control",
    layer: "nothing (a second copy of the full Worker: the noise floor of this method)",
    patches: [],
  },
  {
    name: "no-log-line",
    layer: "request log line (a quick read logs it at debug, so at LOG_LEVEL=info only the level check is left to remove)",
    patches: [["    if (rank[lvl] < this.min) return;\n", "    return;\n"]],
  },
  {
    name: "no-session",
    layer: "D1 session and bookmark (withSession, the X-Session-Bookmark check, copying the response to add its header)",
    patches: [
      [
        "    const session = openSession(env.DB, request);\n    const response = withBookmark(await app.fetch(request, " +
          "withDatabase(env, session), ctx), session);\n",
        "    const response = await app.fetch(request, env, ctx);\n",
      ],
      ['  app2.use("*", requireWellFormedBookmark);\n', ""],
    ],
  },
  {
    name: "no-token-check",
    layer: "bearer token (the per-isolate verified-token cache: SHA-256 of the token, lookup, the logger with the user id)",
    patches: [
      [
        '    c2.set("principal", await authenticate(c2.env, c2.req.header("authorization")));\n',
        '    c2.set("principal", BENCH_PRINCIPAL);\n',
      ],
      [
        "var requireAuthentication = ",
        'var BENCH_PRINCIPAL = { id: "0b0c0000-0000-4000-8000-000000000001", name: "Bench Runner", permissions: new ' +
          'Set(Object.values(PERMISSIONS)), kind: "person" };\nvar requireAuthentication = ',
      ],
    ],
  },
  {
    name: "no-users-recorder",
    layer: "users directory recorder (src/users/recorder.ts: a Map lookup per request after the first)",
    patches: [['  app2.use("*", recordCaller);\n', ""]],
  },
  {
    name: "no-rate-limit-check",
    layer: "rate limit middleware as benched (RATE_LIMITS=off: the check only)",
    patches: [['  app2.use("*", rateLimit);\n', ""]],
  },
  {
    name: "rate-limit-on",
    layer: "rate limit on (RATE_LIMITS=on: one READ_LIMITER.limit() call per request; Miniflare's simulation)",
    bindings: { RATE_LIMITS: "on" },
    // The call is made and priced; its answer is ignored, or the loop would be throttled after 1,200 reads.
    patches: [
      [
        / {2}if \(!success\d*\) \{\n {4}throw new ApiError\(\s*"TooManyRequests"/,
        '  if (false) {\n    throw new ApiError("TooManyRequests"',
      ],
    ],
    // Added, not removed: its price is this variant minus the full Worker.
    adds: true,
  },
  {
    name: "no-cors",
    layer: "CORS middleware",
    patches: [['  app2.use("*", corsHeaders());\n', ""]],
  },
  {
    name: "no-request-context",
    layer: "request context middleware (request id, logger, clock, ids, x-request-id header, the log line)",
    patches: [
      [
        / {2}app2\.use\("\*", async \(c2, next\) => \{\n {4}const incoming = c2\.req\.header\("x-request-id"\);[\s\S]*?\n {2}\}\);\n/,
        '  app2.use("*", async (c2, next) => {\n    c2.set("requestId", "bench"); c2.set("log", createLogger("error", ' +
          '{})); c2.set("clock", systemClock); c2.set("ids", randomIds);\n    await next();\n  });\n',
      ],
    ],
  },
  {
    name: "no-route-middleware",
    layer: "route middleware (api-version, unknown query parameters, permission, validation-message schemas)",
    patches: [
      // The route's steps run as one middleware (src/pkg/openapi.ts, routeSteps).
      ["  const middleware = [routeSteps(steps)];\n", "  const middleware = [];\n"],
    ],
  },
  {
    name: "no-validation",
    layer: "validation of the id (zod uuid, the Unicode check, the validator middleware)",
    patches: [
      [/( +)summary: "Get a property definition",\n +request: \{ params: IdParam \},\n/, '$1summary: "Get a property definition",\n'],
      [
        '      const found = await getDefinition(c2.env.DB, c2.req.valid("param").id);\n',
        '      const found = await getDefinition(c2.env.DB, c2.req.param("id"));\n',
      ],
    ],
  },
  {
    name: "no-etag",
    layer: "ETag and If-None-Match (jsonWithEtag instead of c.json)",
    patches: [
      [
        '      const found = await getDefinition(c2.env.DB, c2.req.valid("param").id);\n      return jsonWithEtag(c2, ' +
          "found.value, found.etag);\n",
        '      const found = await getDefinition(c2.env.DB, c2.req.valid("param").id);\n      return c2.json(found.value, 200);\n',
      ],
    ],
  },
  {
    name: "few-routes",
    layer: "routing among every route (only the properties routes mounted: about a tenth of them)",
    patches: [[/ {2}app2\.route\("\/", uploadApp\(\)\);\n[\s\S]*?\n {2}registerDocs\(app2\);\n/, ""]],
  },
];

/**
 * Every removal at once: what is left is Hono's core, the handler (one select, the row to JSON) and
 * the response; its price against the minimal Worker is the floor of this design.
 */
export const SKELETON = {
  name: "skeleton",
  layer: "every layer above taken out at once (Hono core, the route's handler and c.json remain)",
  patches: [
    ...LAYER_VARIANTS.filter((v) => v.patches && !["no-log-line", "no-etag"].includes(v.name)).flatMap((v) => v.patches),
    [
      '      const found = await getDefinition(c2.env.DB, c2.req.param("id"));\n      return jsonWithEtag(c2, found.value, found.etag);\n',
      '      const found = await getDefinition(c2.env.DB, c2.req.param("id"));\n      return c2.json(found.value, 200);\n',
    ],
  ],
};

function applyPatch(source, [find, replace], where) {
  if (typeof find === "string") {
    const first = source.indexOf(find);
    if (first < 0 || source.indexOf(find, first + 1) >= 0)
      throw new Error(
        `${where}: the patch ${JSON.stringify(find.slice(0, 80))} must match exactly once ` +
          `(${first < 0 ? "no match" : "several"}); the bundle changed: update bench/lib/layers.mjs`,
      );
    return source.slice(0, first) + replace + source.slice(first + find.length);
  }
  const global = new RegExp(find.source, "g");
  const matches = [...source.matchAll(global)];
  if (matches.length !== 1)
    throw new Error(
      `${where}: the patch ${find} must match exactly once (${matches.length} matches); the bundle changed: update bench/lib/layers.mjs`,
    );
  return source.replace(find, replace);
}

/**
 * The entry of every variant (and of the full Worker and the minimal one, measured the same way):
 * the Worker as built, plus `GET /__bench/loop?n=N&path=P`, which answers P N times in a row inside
 * the isolate, through the Worker's own fetch handler, with a D1 that replays: each distinct
 * statement (SQL and values) runs once against the real database and is answered from memory after
 * that. So the loop prices the Worker's own work per request (routing, middleware, validation,
 * serialisation), without the local D1 (3/4 of a request's CPU, and most of its noise) or the HTTP
 * server; the bench reads workerd's CPU time around one loop request and divides by N.
 */
export function loopEntry(workerModule) {
  return `// Generated by bench/lib/layers.mjs.
import worker from "${workerModule}";
${
  workerModule === "./index.js"
    ? `export * from "${workerModule}";
`
    : ""
}
const BOOKMARK = "00000000-00000000-00000000-00000000000000000000000000000000";
function replaying(real) {
  const memo = new Map();
  const once = (kind, sql, values, run) => {
    const key = kind + "\u0000" + sql + "\u0000" + JSON.stringify(values);
    if (!memo.has(key)) memo.set(key, run());
    return memo.get(key);
  };
  const statement = (sql, values) => ({
    sql,
    values,
    bind: (...next) => statement(sql, next),
    first: (column) =>
      once("first", sql, values, () => real.prepare(sql).bind(...values).first()).then((row) =>
        column === undefined || row === null ? row : row[column],
      ),
    all: () => once("all", sql, values, () => real.prepare(sql).bind(...values).all()),
    raw: (options) => once("raw" + JSON.stringify(options ?? {}), sql, values, () => real.prepare(sql).bind(...values).raw(options)),
    run: () => once("run", sql, values, () => real.prepare(sql).bind(...values).run()),
  });
  const db = {
    prepare: (sql) => statement(sql, []),
    batch: (statements) => Promise.all(statements.map((s) => s.all())),
    exec: (sql) => real.exec(sql),
    withSession: () => ({ ...db, getBookmark: () => BOOKMARK }),
  };
  return db;
}
export default {
  ...worker,
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname !== "/__bench/loop") return worker.fetch(request, env, ctx);
    const n = Number(url.searchParams.get("n"));
    const target = new URL(url.searchParams.get("path"), url);
    const headers = { authorization: request.headers.get("authorization") ?? "" };
    // db=real: every request goes to the local D1 (through the Worker's session), to price what the replay leaves out.
    const replayEnv = url.searchParams.get("db") === "real" ? env : { ...env, DB: replaying(env.DB) };
    let status = 0;
    for (let i = 0; i < n; i++) {
      const res = await worker.fetch(new Request(target, { headers }), replayEnv, ctx);
      await res.arrayBuffer();
      status = res.status;
    }
    return Response.json({ n, status });
  },
};
`;
}

/**
 * Writes each variant's modules under \`dir/{name}\` (the loop entry, the patched index.js, links to
 * the other modules) and returns [{ ...variant, modules }]. \`appModules\` is the bundle, entry first.
 * "full" (no patch) is the bundle as built behind the same loop entry.
 */
export function writeLayerVariants(
  appModules,
  dir,
  variants = [{ name: "full", layer: "the full Worker", patches: [] }, ...LAYER_VARIANTS, SKELETON],
) {
  rmSync(dir, { recursive: true, force: true });
  const [entry, ...rest] = appModules;
  const source = readFileSync(entry.path, "utf8");
  return variants.map((variant) => {
    const out = join(dir, variant.name);
    mkdirSync(out, { recursive: true });
    const patched = (variant.patches ?? []).reduce((text, patch) => applyPatch(text, patch, variant.name), source);
    writeFileSync(join(out, basename(entry.path)), patched);
    writeFileSync(join(out, "bench-loop.js"), loopEntry(`./${basename(entry.path)}`));
    const modules = [
      { type: "ESModule", path: join(out, "bench-loop.js") },
      { ...entry, path: join(out, basename(entry.path)) },
    ];
    for (const module of rest) {
      const target = join(out, relative(dirname(entry.path), module.path));
      mkdirSync(dirname(target), { recursive: true });
      try {
        symlinkSync(module.path, target);
      } catch {
        copyFileSync(module.path, target);
      }
      modules.push({ ...module, path: target });
    }
    return { ...variant, modules };
  });
}

/** The minimal Worker behind the same loop entry (bench/minimal-worker.js beside it). */
export function writeMinimalLoop(minimalScript, dir) {
  mkdirSync(dir, { recursive: true });
  copyFileSync(minimalScript, join(dir, "minimal-worker.js"));
  writeFileSync(join(dir, "bench-loop.js"), loopEntry("./minimal-worker.js"));
  return [
    { type: "ESModule", path: join(dir, "bench-loop.js") },
    { type: "ESModule", path: join(dir, "minimal-worker.js") },
  ];
}
