// Copies the API reference page's scripts from swagger-ui-dist, and its own from src/docs/page/, into
// the Worker's static assets, so /docs renders with no CDN. Run before `wrangler deploy`, `npm start` and the tests.
import { copyFileSync, mkdirSync } from "node:fs";
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
// The page's own script and style (src/docs/page/): Swagger UI's set-up and the header drawn before it.
for (const file of ["init.js", "page.css"]) copyFileSync(join(root, "src", "docs", "page", file), join(out, file));
