// drizzle-kit's record of the migrations (node --test; `npm run test:host`): `npm run db:generate` after a
// schema edit must write that edit alone, as the next migration. The database the migrations make is held
// to the schema by test/conventions/schema-migrations.test.ts; this holds migrations/meta (the journal and
// the last snapshot, which is what drizzle-kit diffs the schema against) to both. Two branches that each
// add a migration from the same snapshot, or a migration written by hand, break it, and the next developer's
// generate then fails or writes again what is already applied.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const dir = mkdtempSync(join(tmpdir(), "migrations-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const out = join(dir, "migrations");
cpSync(join(ROOT, "migrations"), out, { recursive: true });
const config = join(dir, "drizzle.config.json");
// drizzle-kit takes its paths relative to where it runs (the copy's folder).
writeFileSync(
  config,
  JSON.stringify({ dialect: "sqlite", schema: relative(dir, join(ROOT, "src", "db", "schema.ts")), out: "./migrations" }),
);

function drizzleKit(...args) {
  const result = spawnSync(process.execPath, [join(ROOT, "node_modules", "drizzle-kit", "bin.cjs"), ...args, "--config", config], {
    cwd: dir,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
    timeout: 120_000,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

test("every migration is in the journal, in order, and the snapshots chain without a fork", () => {
  const journal = JSON.parse(readFileSync(join(out, "meta", "_journal.json"), "utf8"));
  const files = readdirSync(out)
    .filter((name) => name.endsWith(".sql"))
    .map((name) => name.replace(/\.sql$/, ""));
  assert.deepEqual(
    journal.entries.map((entry) => entry.tag),
    files.sort(),
  );
  const check = drizzleKit("check");
  assert.equal(check.status, 0, check.output);
  assert.doesNotMatch(check.output, /collision|Warning/i);
});

test("the last snapshot is the schema: generate finds nothing to write", () => {
  const before = readdirSync(out).sort();
  const generate = drizzleKit("generate", "--name", "unexpected");
  assert.equal(generate.status, 0, generate.output);
  assert.match(generate.output, /No schema changes/);
  assert.deepEqual(readdirSync(out).sort(), before);
});
