// A throwaway ES256 key the benchmarked Worker trusts through AUTH_JWKS_JSON, and a token with every
// permission, so the full Worker does its real per-request work (JWT verification included).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { exportJWK, generateKeyPair, SignJWT } from "jose";

export const ISSUER = "https://bench.integrity-edge.local";
export const AUDIENCE = "integrity-edge";

/** The permission strings of src/pkg/permissions.ts (its PERMISSIONS object's values). */
export function allPermissions(root) {
  const source = readFileSync(join(root, "src", "pkg", "permissions.ts"), "utf8");
  const block = /export const PERMISSIONS\s*=\s*\{([\s\S]*?)\}\s*as const/.exec(source);
  if (!block?.[1]) throw new Error("could not find PERMISSIONS in src/pkg/permissions.ts");
  const values = [...block[1].matchAll(/:\s*["']([^"']+)["']/g)].map((m) => m[1]);
  if (values.length === 0) throw new Error("PERMISSIONS in src/pkg/permissions.ts has no string values");
  return values;
}

export async function benchCredentials(root) {
  const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: "bench", alg: "ES256", use: "sig" };
  const permissions = allPermissions(root);
  const token = await new SignJWT({ name: "Bench Runner", permissions })
    .setProtectedHeader({ alg: "ES256", kid: "bench" })
    .setSubject("0b0c0000-0000-4000-8000-000000000001")
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime("2h")
    .sign(privateKey);
  return { jwksJson: JSON.stringify({ keys: [jwk] }), token, permissions };
}
