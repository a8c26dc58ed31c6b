// Proves that a client generated from the OpenAPI document works (issue 24): generates TypeScript
// types from a running server's /openapi.json with openapi-typescript, type-checks
// examples/client/deviations.ts (openapi-fetch over those types) against them, checks that a wrong call
// does not type-check, then runs the example: it creates a deviation and reads it back.
//
// The smoke run calls checkGeneratedClient on its server. By hand, against `npm start`:
//   node scripts/check-client.mjs [http://127.0.0.1:8787]
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import { ROOT } from "./dev-env.mjs";

const EXAMPLE = join(ROOT, "examples", "client", "deviations.ts");

/**
 * Calls the generated types must refuse, one per line (proof that they are the API's types and not
 * `any`): a wrong value type, an unknown path, a misspelt field of the answer, and a misspelt body key
 * checked with `satisfies`, as examples/client/deviations.ts writes its body.
 */
const WRONG = `import createClient from "openapi-fetch";
import type { components, paths } from "./api";
const api = createClient<paths>({ baseUrl: "http://127.0.0.1:8787" });
export async function wrong() {
  await api.POST("/Deviations", { body: { description: 42 } });
  await api.GET("/Deviationz");
  await api.POST("/Deviations", { body: { descripton: "typo" } satisfies components["schemas"]["CreateDeviation"] });
  const { data } = await api.GET("/Deviations/{id}", { params: { path: { id: "x" } } });
  return data?.descripton;
}
`;

/**
 * What the README says compiles although it is wrong: a misspelt key in a body written inline, which
 * openapi-fetch infers from the call (an inferred literal is not checked for extra keys). Should a
 * release of openapi-fetch or TypeScript start refusing it, this check fails so the README is updated.
 */
const LOOSE = `import createClient from "openapi-fetch";
import type { paths } from "./api";
const api = createClient<paths>({ baseUrl: "http://127.0.0.1:8787" });
export async function loose() {
  await api.POST("/Deviations", { body: { descripton: "typo" } });
}
`;

/** Type-checks the given files; returns the diagnostics as text, one per line. */
function typeCheck(files) {
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ["lib.es2023.d.ts", "lib.dom.d.ts"],
    types: [],
    skipLibCheck: true,
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) =>
        `${d.file ? `${d.file.fileName.split("/").pop()}(${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1})` : ""}: ` +
        `${ts.flattenDiagnosticMessageText(d.messageText, " ")}`,
    );
}

/**
 * Generates the client of the server at `base` and uses it with `token` (a token with work_read and
 * work_write). Returns a one-line summary; throws saying what failed.
 */
export async function checkGeneratedClient({ base, token }) {
  const response = await fetch(`${base}/openapi.json`);
  if (!response.ok) throw new Error(`GET /openapi.json answered ${response.status}`);
  const document = await response.json();

  // Under the checkout, so that openapi-fetch resolves from its node_modules.
  mkdirSync(join(ROOT, ".wrangler", "tmp"), { recursive: true });
  const dir = mkdtempSync(join(ROOT, ".wrangler", "tmp", "client-"));
  try {
    // As the README's command: request bodies' defaulted fields stay optional (openapi-typescript's
    // default makes a field with a `default` required, which suits answers, not requests).
    const types = astToString(await openapiTS(document, { defaultNonNullable: false }));
    writeFileSync(join(dir, "api.d.ts"), types);
    copyFileSync(EXAMPLE, join(dir, "deviations.ts"));
    writeFileSync(join(dir, "wrong.ts"), WRONG);
    writeFileSync(join(dir, "loose.ts"), LOOSE);

    const errors = typeCheck([join(dir, "deviations.ts")]);
    if (errors.length > 0)
      throw new Error(`examples/client/deviations.ts does not type-check against the generated types:\n${errors.join("\n")}`);
    const refused = typeCheck([join(dir, "wrong.ts")]);
    // Each wrong line is its own error: lines 5 to 9 of WRONG, less the `const` line.
    const lines = new Set(refused.map((e) => /\((\d+)\)/.exec(e)?.[1]));
    const missed = ["5", "6", "7", "9"].filter((line) => !lines.has(line));
    if (missed.length > 0)
      throw new Error(
        `the generated types accepted wrong.ts lines ${missed.join(", ")}, which they must refuse:\n${WRONG}\n${refused.join("\n")}`,
      );
    const loose = typeCheck([join(dir, "loose.ts")]);
    if (loose.length > 0)
      throw new Error(`a misspelt key in an inline body no longer compiles; say so in the README ("A typed client"):\n${loose.join("\n")}`);

    const js = ts.transpileModule(ts.sys.readFile(join(dir, "deviations.ts")), {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
    }).outputText;
    writeFileSync(join(dir, "deviations.mjs"), js);
    const { createAndReadDeviation } = await import(pathToFileURL(join(dir, "deviations.mjs")).href);
    const deviation = await createAndReadDeviation(base, token);
    if (deviation.description !== "Corrosion under insulation near the pump" || !/^"/.test(deviation.etag ?? "")) {
      throw new Error(`the deviation read back is not the one created: ${JSON.stringify(deviation)}`);
    }
    return (
      `${Math.round(types.length / 1024)} KiB of types, ${lines.size} wrong calls refused, created and read ` + `${deviation.referenceId}`
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const base = process.argv[2] ?? `http://127.0.0.1:${process.env.PORT || 8787}`;
  const minted = spawnSync(process.execPath, [join(ROOT, "scripts", "token.mjs")], { cwd: ROOT, encoding: "utf8" });
  const token = minted.stdout.trim().split("\n").pop();
  if (minted.status !== 0 || !token) {
    console.error(`check-client: could not mint a token: ${minted.stderr}`);
    process.exit(1);
  }
  checkGeneratedClient({ base, token }).then(
    (summary) => console.log(`check-client: ${summary}`),
    (error) => {
      console.error(`check-client: ${error.message}`);
      process.exit(1);
    },
  );
}
