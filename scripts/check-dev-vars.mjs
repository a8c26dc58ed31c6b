// What `npm start` writes to .dev.vars (node --test; `npm run test:host`): the settings it manages are
// rewritten at each start, and a WEBHOOK_ALLOWED_TARGETS the developer set is kept as it is.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { DEV_VAR_DEFAULTS, writeDevVars } from "./dev-env.mjs";

const dir = mkdtempSync(join(tmpdir(), "dev-vars-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const jwks = { keys: [{ kty: "EC", kid: "local-dev" }] };
/** The variables a .dev.vars file sets, by name (the last line of a name wins, as dotenv reads it). */
const vars = (file) =>
  Object.fromEntries(
    readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(line))
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
const lines = (file, name) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.startsWith(`${name}=`));

test("a first start allows webhook receivers on this machine", () => {
  const file = join(dir, "fresh.vars");
  writeDevVars(jwks, { RATE_LIMITS: "off" }, { file });
  assert.equal(vars(file).WEBHOOK_ALLOWED_TARGETS, DEV_VAR_DEFAULTS.WEBHOOK_ALLOWED_TARGETS);
  assert.equal(vars(file).RATE_LIMITS, "off");
});

test("a WEBHOOK_ALLOWED_TARGETS the developer set survives every start, an empty one included", () => {
  for (const mine of ["https://hooks.lab.example.net:*,http://127.0.0.1:9100", ""]) {
    const file = join(dir, `mine-${mine.length}.vars`);
    writeDevVars(jwks, {}, { file });
    const edited = readFileSync(file, "utf8").replace(/^WEBHOOK_ALLOWED_TARGETS=.*$/m, `WEBHOOK_ALLOWED_TARGETS=${mine}`);
    writeFileSync(file, edited + "MY_OWN_SETTING=kept\n");
    writeDevVars(jwks, { LOCAL_CONTAINER_HOST_SECRET: "new-each-start" }, { file });
    writeDevVars(jwks, { LOCAL_CONTAINER_HOST_SECRET: "newer" }, { file });
    assert.deepEqual(lines(file, "WEBHOOK_ALLOWED_TARGETS"), [`WEBHOOK_ALLOWED_TARGETS=${mine}`], "one line, the developer's");
    assert.equal(vars(file).MY_OWN_SETTING, "kept");
    assert.equal(vars(file).LOCAL_CONTAINER_HOST_SECRET, "newer", "managed settings are still rewritten");
  }
});

test("a start that changes nothing leaves the file untouched", () => {
  const file = join(dir, "same.vars");
  writeDevVars(jwks, {}, { file });
  const first = readFileSync(file, "utf8");
  writeDevVars(jwks, {}, { file });
  assert.equal(readFileSync(file, "utf8"), first, "nothing changed, so the local server is not made to rebuild");
});
