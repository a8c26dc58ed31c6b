// npm run audit:verify -- --from 2026-11-01T00:00:00Z --to 2026-12-01T00:00:00Z [--url https://api.example.com]
// Checks the audit trail's hash chain over a range (GET /AuditTrail/Verification, issue 34) on a running
// server: the local one (npm start) unless --url names another (then AUDIT_TOKEN holds a token with
// audit_read). Prints what was checked; exits 1 naming the first broken link, 2 when it cannot ask.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { localBase, ROOT } from "./dev-env.mjs";

const { values } = parseArgs({ options: { from: { type: "string" }, to: { type: "string" }, url: { type: "string" } } });
const base = (values.url ?? localBase()).replace(/\/+$/, "");

function token() {
  if (process.env.AUDIT_TOKEN) return process.env.AUDIT_TOKEN;
  const minted = spawnSync(process.execPath, [join(ROOT, "scripts", "token.mjs")], { cwd: ROOT, encoding: "utf8" });
  const value = minted.stdout.trim().split("\n").pop();
  if (minted.status !== 0 || !value) throw new Error(`could not mint a token: ${minted.stderr}`);
  return value;
}

const query = new URLSearchParams(Object.entries({ from: values.from, to: values.to }).filter(([, v]) => v !== undefined));
let response;
try {
  response = await fetch(`${base}/AuditTrail/Verification?${query}`, {
    headers: { authorization: `Bearer ${token()}` },
    signal: AbortSignal.timeout(600_000),
  });
} catch (error) {
  console.error(`${base} does not answer (${error.cause?.code ?? error.message}): start it with npm start, or name it with --url`);
  process.exit(2);
}
const text = await response.text();
if (!response.ok) {
  console.error(`GET /AuditTrail/Verification answered ${response.status}: ${text.trim().slice(0, 600)}`);
  process.exit(2);
}
const result = JSON.parse(text);
const range = `${result.from ?? "the start"} to ${result.to ?? "now"}`;
if (result.valid) {
  console.log(
    `audit trail intact from ${range}: ${result.checked} records checked (sequence ${result.firstSequence ?? "-"} to ` +
      `${result.lastSequence ?? "-"}), ${result.unsealed} not sealed yet`,
  );
} else {
  console.error(`audit trail BROKEN at record ${result.broken.sequence} (${result.broken.occurredAt ?? "?"}): ${result.broken.problem}`);
  console.error(`${result.checked} records before it were intact (from ${range})`);
  process.exit(1);
}
