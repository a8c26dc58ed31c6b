import type { D1Migration } from "cloudflare:test";

declare global {
  namespace Cloudflare {
    interface Env {
      TEST_SIGNING_JWK: string;
      TEST_MIGRATIONS: D1Migration[];
      AUTH_JWKS_JSON: string;
      DATAPROCESSING_ENCRYPTION_KEY: string;
      LOCAL_CONTAINER_HOST: Fetcher;
      WEBHOOK_TRANSPORT: Fetcher;
      TEST_LIMITER: RateLimit;
    }
    interface GlobalProps {
      mainModule: typeof import("../src/index");
    }
  }
}
export {};
