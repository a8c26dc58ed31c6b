// npm start: generates the types of the running server's API (openapi-typescript, as the README shows),
// type-checks and compiles main.ts and deviations.ts against them (tsc), and runs the result, which
// creates a deviation and reads it back (openapi-fetch). The server: API_URL, else PORT, else the one
// `npm start` runs in this checkout, else http://127.0.0.1:8787. The token: TOKEN, else one minted by
// the checkout's `npm run token`.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const checkout = join(here, "..", "..");
const running = join(checkout, ".dev", "server.json");
const base =
  process.env.API_URL ??
  (process.env.PORT ? `http://127.0.0.1:${process.env.PORT}` : undefined) ??
  (existsSync(running) ? JSON.parse(readFileSync(running, "utf8")).base : "http://127.0.0.1:8787");

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: here, stdio: ["ignore", "inherit", "inherit"], ...options });
  if (result.status !== 0) {
    console.error(`client example: ${[command, ...args].join(" ")} failed (${result.status ?? result.error?.message})`);
    process.exit(1);
  }
  return result;
}

let token = process.env.TOKEN;
if (!token) {
  const minted = run(process.execPath, [join(checkout, "scripts", "token.mjs")], { stdio: ["ignore", "pipe", "ignore"], encoding: "utf8" });
  token = minted.stdout.trim().split("\n").pop();
}
const bin = (name) => join(here, "node_modules", ".bin", name);
console.log(`client example: types from ${base}/openapi.json`);
run(bin("openapi-typescript"), [`${base}/openapi.json`, "--default-non-nullable", "false", "-o", "api.d.ts"]);
run(bin("tsc"), ["-p", "."]);
run(process.execPath, [join(here, "dist", "main.js")], { env: { ...process.env, API_URL: base, TOKEN: token } });
