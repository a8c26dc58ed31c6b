// Copies the API reference page's scripts from swagger-ui-dist into the Worker's static assets, so
// /docs renders with no CDN. Run before `wrangler deploy`, `npm start` and the tests.
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const dist = dirname(require.resolve("swagger-ui-dist/package.json"));
const out = join(root, "public", "docs", "assets");
mkdirSync(out, { recursive: true });
for (const file of ["swagger-ui-bundle.js", "swagger-ui.css"]) copyFileSync(join(dist, file), join(out, file));
copyFileSync(join(dist, "LICENSE"), join(out, "SWAGGER-UI-LICENSE"));
// Kept as a file (not inline) so a strict Content-Security-Policy can forbid inline scripts.
writeFileSync(
  join(out, "init.js"),
  'window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#reference", deepLinking: true, persistAuthorization: true });\n',
);
