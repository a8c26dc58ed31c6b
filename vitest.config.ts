import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { exportJWK, generateKeyPair } from "jose";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { configDefaults, defineConfig } from "vitest/config";
import { createFakeContainerHost } from "./test/support/fake-container-host.ts";
import { createFakeWebhookReceiver } from "./test/support/fake-webhook-receiver.ts";

// A throwaway signing key per test run: the Worker trusts its public half through AUTH_JWKS_JSON,
// exactly as a deployment trusts an identity provider's JWKS, and the tests sign with the private half.
const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
const publicJwk = { ...(await exportJWK(publicKey)), kid: "test-key", alg: "ES256", use: "sig" };
const privateJwk = { ...(await exportJWK(privateKey)), kid: "test-key", alg: "ES256" };
mkdirSync(join(import.meta.dirname, ".wrangler"), { recursive: true });

const migrations = await readD1Migrations(join(import.meta.dirname, "migrations"));

export default defineConfig({
  // Image formats Vite does not know as assets (the committed samples are imported ?inline).
  assetsInclude: ["**/*.heic", "**/*.heif", "**/*.tif", "**/*.tiff"],
  plugins: [
    cloudflareTest({
      main: "./src/index.ts",
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          ENVIRONMENT: "test",
          AUTH_ISSUER: "integrity-edge-test",
          AUTH_AUDIENCE: "integrity-edge",
          AUTH_JWKS_JSON: JSON.stringify({ keys: [publicJwk] }),
          TEST_SIGNING_JWK: JSON.stringify(privateJwk),
          // The local /connect/token, as npm start configures it.
          LOCAL_OAUTH_SIGNING_JWK: JSON.stringify(privateJwk),
          LOCAL_OAUTH_CLIENTS: JSON.stringify([
            {
              clientId: "integration",
              clientSecret: "s3cret-for-tests",
              name: "Integration",
              permissions: ["properties_read", "files_read"],
            },
            // The original client's upload (test/compat/users.test.ts): it looks itself up, then posts a file.
            {
              clientId: "uploader",
              clientSecret: "uploader-s3cret",
              name: "Uploader",
              permissions: ["users_read", "files_read", "files_write"],
            },
          ]),
          TEST_MIGRATIONS: migrations,
          LOG_LEVEL: "error",
          CONTAINER_HOST_KIND: "local",
          // Pinned, so a developer's .dev.vars (written by npm start) never changes what the tests see.
          LOCAL_CONTAINER_HOST_URL: "",
          LOCAL_CONTAINER_HOST_SECRET: "",
          PUBLIC_API_URL: "",
          RATE_LIMITS: "off",
          // Some tests send 20 requests of one user at once; admission's own test sets its limits (test/reliability/overload.test.ts).
          MAX_USER_REQUESTS_IN_FLIGHT: "64",
          // Run options are sealed under this throwaway key (key version 1).
          DATAPROCESSING_ENCRYPTION_KEY: `1:${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")}`,
          // Webhooks follow production's target rules, plus one local port the allow-list test uses.
          WEBHOOK_ALLOWED_TARGETS: "http://127.0.0.1:9999",
        },
        // The Images binding's local stand-in (sharp in this process), for the opt-in resizer's test;
        // IMAGE_RESIZER stays "wasm", so every other test runs the default path.
        images: { binding: "IMAGES" },
        // A tiny limit the rate-limit test swaps in for READ_LIMITER.
        ratelimits: { TEST_LIMITER: { simple: { limit: 3, period: 60 } } },
        // The container host is remote: tests talk to a scripted fake of its protocol.
        // Webhook receivers: deliveries go to a fake in this process, never to the internet.
        serviceBindings: { LOCAL_CONTAINER_HOST: createFakeContainerHost(), WEBHOOK_TRANSPORT: createFakeWebhookReceiver() },
      },
    }),
  ],
  test: {
    // The benches copy the project under .bench/ (gitignored): its tests are not this checkout's.
    exclude: [...configDefaults.exclude, ".bench/**", ".wrangler/**"],
    setupFiles: ["./test/setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
