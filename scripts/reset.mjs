// npm run reset: empties local state (.wrangler/state: D1, R2, Durable Objects, queues), so the next
// npm start begins as a fresh clone does (the migrations seed the defaults again). The signing key and
// the other secrets in .dev/ are kept, so tokens minted before still work. Refused while npm start
// runs: its workerd holds the database files open, and deleting them under it loses nothing cleanly.
import { existsSync, rmSync } from "node:fs";
import { relative } from "node:path";
import { DEFAULT_PERSIST_DIR, portInUse, readRunningServer, ROOT } from "./dev-env.mjs";

const shown = relative(ROOT, DEFAULT_PERSIST_DIR);
const running = readRunningServer();
if (running) {
  console.error(`reset: npm start is running on ${running.base} (pid ${running.pid}); stop it (Ctrl-C), then npm run reset.`);
  process.exit(1);
}
// A server started otherwise (wrangler dev by hand) on the default port holds the files too.
const check = await portInUse(Number(process.env.PORT || 8787));
if (check.integrityEdge) {
  console.error(`reset: an integrity-edge server answers on port ${process.env.PORT || 8787}; stop it first, then npm run reset.`);
  process.exit(1);
}
if (!existsSync(DEFAULT_PERSIST_DIR)) {
  console.log(`reset: ${shown} does not exist; local state is already empty.`);
} else {
  rmSync(DEFAULT_PERSIST_DIR, { recursive: true, force: true });
  console.log(`reset: removed ${shown} (local D1, R2, Durable Object and queue state). Keys in .dev/ are kept.`);
}
console.log("Next: npm start (applies the migrations to an empty database), then npm run seed for the demo plant.");
