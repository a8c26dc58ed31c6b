import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { exportJWK, generateKeyPair } from "jose";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { configDefaults, defineConfig, type Plugin } from "vitest/config";
import { createFakeContainerHost } from "./test/support/fake-container-host.ts";
import { createFakeWebhookReceiver } from "./test/support/fake-webhook-receiver.ts";

// A throwaway signing key per test run: the Worker trusts its public half through AUTH_JWKS_JSON,
// exactly as a deployment trusts an identity provider's JWKS, and the tests sign with the private half.
const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
const publicJwk = { ...(await exportJWK(publicKey)), kid: "test-key", alg: "ES256", use: "sig" };
const privateJwk = { ...(await exportJWK(privateKey)), kid: "test-key", alg: "ES256" };
mkdirSync(join(import.meta.dirname, ".wrangler"), { recursive: true });

const migrations = await readD1Migrations(join(import.meta.dirname, "migrations"));

/**
 * Vite's dependency cache, per checkout: under node_modules it is shared by every worktree that links
 * the same node_modules, and two runs re-optimizing at once fail each other's files ("There is a new
 * version of the pre-bundle").
 */
const cacheDir = join(import.meta.dirname, ".wrangler", "vite");

/**
 * Tests of pure functions run in Node (no Worker, no D1): they pay for no Worker module graph. Every
 * other test runs in the Workers pool against real workerd. A test file that needs the Worker
 * (cloudflare:test, cloudflare:workers, the HTTP client) must not be listed here.
 */
const NODE_TESTS = [
  "test/query/dates.test.ts",
  "test/query/filter.test.ts",
  "test/query/order.test.ts",
  "test/query/schemas.test.ts",
  "test/conventions/serial.test.ts",
  "test/conventions/seams.test.ts",
  "test/conventions/table-owners.test.ts",
  "test/conventions/key-ring.test.ts",
  "test/properties/regex-translation.test.ts",
  "test/upload/form.test.ts",
  "test/imports/xlsx-dates.test.ts",
  "test/upload/presign.test.ts",
  "test/sandbox/containment.test.ts",
  "test/sandbox/failures.test.ts",
  "test/sandbox/throughput.test.ts",
  "test/sandbox/values.test.ts",
];

/**
 * `TEST_GROUPS=folder` (what `npm test` and CI run): the Workers test files run in a few runtimes
 * in all instead of one each. Each Workers test file would otherwise start its own workerd and load the
 * Worker's modules, 7 to 10 s a file here, most of the suite's time (docs/benchmarks.md, "The test
 * suite"). The folders under test/ are packed, whole, into `TEST_RUNTIMES` runtimes (4 unless set),
 * the largest folder first into the smallest runtime by the size of its test files, and each runtime
 * is a file generated here that imports its test files, each inside a `describe` named after it (so a
 * file's top-level hooks stay its own). Every test file found under test/ is in exactly one runtime,
 * so a new file runs without being listed. Two runtimes run at once (`maxWorkers` below), one workerd
 * each: one is a single thread, and this machine has two cores. Tests that share a runtime share its
 * storage: a test reads what it made (its own ids, names or types), not a whole table. Without the
 * variable (`npx vitest run <file>`), each file runs alone, as named.
 */
const GROUPED = process.env.TEST_GROUPS === "folder";
const TEST_RUNTIMES = Math.max(1, Number(process.env.TEST_RUNTIMES) || 4);
/**
 * Files that need their storage as only they left it, grouped with nothing: a table dropped on purpose,
 * the schema's tables compared with the migrations' (others create tables of their own), the unique-name
 * keys' one-off step (another file's cron runs it first), the audit chain broken on purpose and counted
 * from its start, and the query planner's statistics (ANALYZE in one, none in the other).
 */
const ALONE_TESTS = [
  "test/conventions/internal-error.test.ts",
  "test/conventions/schema-migrations.test.ts",
  "test/conventions/unicode-names.test.ts",
  "test/audit/chain.test.ts",
  "test/query/plans.test.ts",
  "test/query/plans-analyzed.test.ts",
];
const GROUPS_DIR = join(import.meta.dirname, ".dev", "test-groups");

function workersTestGroups(): string[] {
  const testDir = join(import.meta.dirname, "test");
  const files = (readdirSync(testDir, { recursive: true }) as string[])
    .map((file) => `test/${file.split("\\").join("/")}`)
    .filter((file) => file.endsWith(".test.ts") && !NODE_TESTS.includes(file) && !ALONE_TESTS.includes(file))
    .sort();
  const byFolder = new Map<string, string[]>();
  for (const file of files) {
    const folder = file.split("/").length > 2 ? file.split("/")[1] : "root";
    byFolder.set(folder, [...(byFolder.get(folder) ?? []), file]);
  }
  rmSync(GROUPS_DIR, { recursive: true, force: true });
  mkdirSync(GROUPS_DIR, { recursive: true });
  // Folders, largest first, each into the runtime with the least so far (by the size of its test files).
  const size = (file: string) => readFileSync(join(import.meta.dirname, file), "utf8").length;
  const folders = [...byFolder].map(([folder, members]) => ({ folder, members, size: members.reduce((sum, f) => sum + size(f), 0) }));
  folders.sort((a, b) => b.size - a.size || a.folder.localeCompare(b.folder));
  const runtimes = Array.from({ length: TEST_RUNTIMES }, () => ({ folders: [] as string[], members: [] as string[], size: 0 }));
  for (const folder of folders) {
    const runtime = runtimes.reduce((least, r) => (r.size < least.size ? r : least));
    runtime.folders.push(folder.folder);
    runtime.members.push(...folder.members);
    runtime.size += folder.size;
  }
  const groups = runtimes.filter((r) => r.members.length > 0).map((r, i) => ({ name: `runtime-${i + 1}`, ...r }));
  for (const group of groups) {
    const where = group.folders.map((f) => (f === "root" ? "test/" : `test/${f}/`)).join(", ");
    const lines = [
      `// Generated by vitest.config.ts (TEST_GROUPS=folder): the Workers tests of ${where}, in one runtime.`,
      'import { describe } from "vitest";',
      ...group.members.map(
        (file) => `describe(${JSON.stringify(file)}, async () => {\n  await import(${JSON.stringify(`../../${file}`)});\n});`,
      ),
      "",
    ];
    writeFileSync(join(GROUPS_DIR, `${group.name}.test.ts`), lines.join("\n"));
  }
  return [...groups.map((group) => `.dev/test-groups/${group.name}.test.ts`), ...ALONE_TESTS];
}

/** A `.wasm` import is a compiled WebAssembly.Module in workerd (wrangler's CompiledWasm rule); in Node, the same. */
const compiledWasm: Plugin = {
  name: "integrity-edge:compiled-wasm",
  enforce: "pre",
  load(id) {
    if (!id.endsWith(".wasm")) return null;
    return `import { readFileSync } from "node:fs";\nexport default new WebAssembly.Module(readFileSync(${JSON.stringify(id)}));`;
  },
};

/**
 * Dependencies the Worker imports, bundled once per run (Vite's dependency optimizer) instead of
 * fetched module by module by every test file's runner: a test file's start fell from about 40 s to
 * 15 s on the shared 2-core machine (docs/benchmarks.md, "The test suite").
 */
const WORKER_DEPENDENCIES = [
  "zod",
  // Every entry the Worker imports from hono: an entry left out is a second copy of hono's classes, and
  // the error handler's `instanceof HTTPException` stops matching what the bundled validator throws.
  "hono",
  "hono/cors",
  "hono/http-exception",
  "@hono/zod-openapi",
  "@asteasolutions/zod-to-openapi",
  "drizzle-orm",
  "drizzle-orm/d1",
  "drizzle-orm/sqlite-core",
  "jose",
  "re2js",
  "croner",
  "standardwebhooks",
  "fflate",
  "aws4fetch",
  "@cfworker/json-schema",
];

export default defineConfig({
  test: {
    // Vitest's default is one fewer than the cores, one here: each Workers test runtime is a workerd of its
    // own, mostly one thread, so two side by side use both cores (docs/benchmarks.md, "The test suite").
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        cacheDir,
        plugins: [compiledWasm],
        assetsInclude: ["**/*.heic", "**/*.heif", "**/*.tif", "**/*.tiff"],
        test: {
          name: "node",
          environment: "node",
          include: NODE_TESTS,
          testTimeout: 30_000,
          // Through Vite, so the .wasm it imports reaches the plugin above (Node itself cannot import .wasm).
          server: { deps: { inline: [/quickjs-wasmfile-release-sync/] } },
        },
      },
      {
        cacheDir,
        // Image formats Vite does not know as assets (the committed samples are imported ?inline).
        assetsInclude: ["**/*.heic", "**/*.heif", "**/*.tif", "**/*.tiff"],
        plugins: [
          cloudflareTest({
            main: "./src/index.ts",
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                ENVIRONMENT: "test",
                AUTH_ISSUER: "integrity-edge-test",
                AUTH_AUDIENCE: "integrity-edge",
                AUTH_JWKS_JSON: JSON.stringify({ keys: [publicJwk] }),
                TEST_SIGNING_JWK: JSON.stringify(privateJwk),
                // The local /connect/token, as npm start configures it.
                LOCAL_OAUTH_SIGNING_JWK: JSON.stringify(privateJwk),
                LOCAL_OAUTH_CLIENTS: JSON.stringify([
                  {
                    clientId: "integration",
                    clientSecret: "s3cret-for-tests",
                    name: "Integration",
                    permissions: ["properties_read", "files_read"],
                  },
                  // The original client's upload (test/compat/users.test.ts): it looks itself up, then posts a file.
                  {
                    clientId: "uploader",
                    clientSecret: "uploader-s3cret",
                    name: "Uploader",
                    permissions: ["users_read", "files_read", "files_write"],
                  },
                ]),
                TEST_MIGRATIONS: migrations,
                LOG_LEVEL: "error",
                CONTAINER_HOST_KIND: "local",
                // Pinned, so a developer's .dev.vars (written by npm start) never changes what the tests see.
                LOCAL_CONTAINER_HOST_URL: "",
                LOCAL_CONTAINER_HOST_SECRET: "",
                PUBLIC_API_URL: "",
                RATE_LIMITS: "off",
                // Some tests send 20 requests of one user at once; admission's own test sets its limits
                // (test/reliability/overload.test.ts).
                MAX_USER_REQUESTS_IN_FLIGHT: "64",
                // A test user sends thousands of requests a second, some under a clock that stands still.
                MAX_USER_REQUESTS_PER_SECOND: "10000000",
                // Run options are sealed under this throwaway key (key version 1).
                DATAPROCESSING_ENCRYPTION_KEY: `1:${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")}`,
                // Webhooks follow production's target rules, plus one local port the allow-list test uses.
                WEBHOOK_ALLOWED_TARGETS: "http://127.0.0.1:9999",
                // A zip bomb's test inflates 48 MiB, not hundreds (test/imports/large.test.ts).
                IMPORT_MAX_INFLATED_MIB: "32",
              },
              // The Images binding's local stand-in (sharp in this process), for the opt-in resizer's test;
              // IMAGE_RESIZER stays "wasm", so every other test runs the default path.
              images: { binding: "IMAGES" },
              // A tiny limit the rate-limit test swaps in for READ_LIMITER.
              ratelimits: { TEST_LIMITER: { simple: { limit: 3, period: 60 } } },
              // The container host is remote: tests talk to a scripted fake of its protocol.
              // Webhook receivers: deliveries go to a fake in this process, never to the internet.
              serviceBindings: { LOCAL_CONTAINER_HOST: createFakeContainerHost(), WEBHOOK_TRANSPORT: createFakeWebhookReceiver() },
            },
          }),
        ],
        test: {
          name: "workers",
          ...(GROUPED ? { include: workersTestGroups() } : {}),
          // The benches copy the project under .bench/ (gitignored): its tests are not this checkout's; nor
          // are the groups generated under .dev/ when the files run alone.
          exclude: [...configDefaults.exclude, ".bench/**", ".wrangler/**", ...(GROUPED ? [] : [".dev/**"]), ...NODE_TESTS],
          setupFiles: ["./test/setup.ts"],
          deps: { optimizer: { ssr: { enabled: true, include: WORKER_DEPENDENCIES } } },
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
