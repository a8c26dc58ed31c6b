import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";

// Each runtime starts with empty storage: under `npm test` one per group of whole folders (TEST_GROUPS=folder,
// vitest.config.ts: each group's files are imported by one generated file), and one per file run alone.
// This runs once in each runtime, before its tests.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

// The Worker's handlers are loaded before the tests, as a deployed isolate loads them on its first
// event (src/index.ts), and with them the modules the Durable Objects load on first use. In the tests a
// module is fetched by the pool's module runner, and an import still in flight cannot be shared between
// the request and Durable Object contexts that ask for it at once ("Cannot perform I/O on behalf of a
// different Durable Object"; cloudflare/workers-sdk#5387): loaded here, in the runner's own context, every
// later `import()` finds the module evaluated.
await Promise.all([
  import("../src/handlers"),
  import("../src/search/store"),
  import("../src/search/query"),
  import("../src/search/library"),
  import("../src/templates/writer"),
  import("../src/dataprocessing/runner"),
  import("../src/imports/run"),
  import("../src/imports/store"),
]);
