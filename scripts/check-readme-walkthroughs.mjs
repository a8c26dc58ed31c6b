// The README's walkthroughs keep the rules written beside its setup block (node --test; `npm run test:host`),
// checked in a second so a broken rule fails before the smoke run gets to run them: every mark is
// followed by an sh block, the setup comes first, each walkthrough starts with `walk` and has a name of
// its own, requests go through `api` (no bare curl to the API), and nothing listens on a fixed port.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ROOT } from "./dev-env.mjs";
import { extractWalkthroughs } from "./readme-walkthroughs.mjs";

const blocks = extractWalkthroughs(readFileSync(join(ROOT, "README.md"), "utf8"));

test("the README has its setup first, then walkthroughs with names of their own", () => {
  assert.equal(blocks[0]?.name, "setup");
  assert.ok(blocks.length >= 12, `${blocks.length} walkthroughs`);
  const names = blocks.map((b) => b.name);
  assert.deepEqual([...new Set(names)], names);
});

test("each walkthrough starts with walk and sends its requests through api", () => {
  for (const { name, code, line } of blocks.slice(1)) {
    assert.match(code.split("\n")[0], /^walk "/, `README.md:${line} (${name}) must start with walk "..."`);
    // The cron and the setup's helpers are the only curl calls; a bare curl to the API would not stop the walkthrough.
    for (const command of code.split("\n").filter((l) => /(^|[;|&(]\s*)curl /.test(l))) {
      assert.fail(`README.md:${line} (${name}) calls curl directly, not through api: ${command.trim()}`);
    }
    assert.doesNotMatch(code, /listen\(\d{2,5}\b/, `README.md:${line} (${name}) listens on a fixed port`);
  }
});

test("a mark without an sh block after it is refused", () => {
  assert.throws(() => extractWalkthroughs("<!-- walkthrough: lost -->\ntext\n"), /not followed by an sh block/);
  assert.deepEqual(extractWalkthroughs('<!-- walkthrough: one -->\n```sh\nwalk "one"\n```\n'), [
    { name: "one", code: 'walk "one"', line: 2 },
  ]);
});
