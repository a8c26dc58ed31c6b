import type { D1Migration } from "cloudflare:test";

declare global {
  namespace Cloudflare {
    interface Env {
      TEST_SIGNING_JWK: string;
      TEST_MIGRATIONS: D1Migration[];
      AUTH_JWKS_JSON: string;
    }
    interface GlobalProps {
      mainModule: typeof import("../src/index");
    }
  }
}
export {};
