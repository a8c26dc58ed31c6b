// Prints a bearer token that the locally started server (npm start) accepts, as the last line of its
// output (stdout; the explanation goes to stderr, so `TOKEN=$(npm run -s token)` works).
//
//   npm run token                                   the default developer, every permission, 1 h
//   npm run token -- --sub ID --name NAME --permissions a,b [--expires 2h]
import { parseArgs } from "node:util";
import { importJWK, SignJWT } from "jose";
import { allPermissions, DEV_AUDIENCE, DEV_ISSUER, DEV_KID, ensureDevKey, localBase, localOAuthVars, writeDevVars } from "./dev-env.mjs";

const DEFAULT_SUB = "10ca1de7-0000-4000-8000-000000000001";
const DEFAULT_NAME = "Local Developer";

function usage() {
  return [
    "Usage: npm run token -- [--sub ID] [--name NAME] [--permissions a,b] [--expires 1h]",
    `  --sub          the user id (default ${DEFAULT_SUB})`,
    `  --name         the user's display name (default "${DEFAULT_NAME}")`,
    "  --permissions  comma-separated; default every permission; an empty value grants none",
    "  --expires      lifetime such as 30m, 2h, 1d (default 1h)",
  ].join("\n");
}

async function main() {
  const { values } = parseArgs({
    options: {
      sub: { type: "string" },
      name: { type: "string" },
      permissions: { type: "string" },
      expires: { type: "string", default: "1h" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) {
    console.log(usage());
    return;
  }
  const known = allPermissions();
  const permissions =
    values.permissions === undefined
      ? known
      : values.permissions
          .split(",")
          .map((p) => p.trim())
          .filter(Boolean);
  const unknown = permissions.filter((p) => !known.includes(p));
  if (unknown.length > 0) console.error(`warning: not a permission in src/pkg/permissions.ts: ${unknown.join(", ")}`);
  if (!/^\d+\s*(s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hr|hrs|hour|hours|d|day|days|w|week|weeks)$/i.test(values.expires)) {
    throw new Error(`--expires '${values.expires}' is not a lifetime such as 30m, 2h or 1d.`);
  }

  // The key is created here too when `npm start` has not run yet; .dev.vars is then updated so the
  // next `npm start` trusts it (a server already running picks the change up on reload).
  const { privateJwk, publicJwks, created } = await ensureDevKey();
  if (created) writeDevVars(publicJwks, localOAuthVars(privateJwk));
  const key = await importJWK(privateJwk, "ES256");
  const sub = values.sub ?? DEFAULT_SUB;
  const name = values.name ?? DEFAULT_NAME;
  const token = await new SignJWT({ name, permissions })
    .setProtectedHeader({ alg: "ES256", kid: DEV_KID, typ: "JWT" })
    .setSubject(sub)
    .setIssuer(DEV_ISSUER)
    .setAudience(DEV_AUDIENCE)
    .setIssuedAt()
    .setJti(crypto.randomUUID())
    .setExpirationTime(values.expires)
    .sign(key);

  const { exp } = JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString("utf8"));
  console.error(`Token for ${name} (sub ${sub}), expires ${new Date(exp * 1000).toISOString()}`);
  console.error(`Permissions: ${permissions.length > 0 ? permissions.join(", ") : "(none)"}`);
  console.error(`Use it as: curl -H "Authorization: Bearer <token>" ${localBase()}/Categories`);
  if (npmBannerOnStdout()) {
    console.error(
      "warning: npm printed its banner ('> integrity-edge@... token') on stdout before the token, so TOKEN=$(npm run token) " +
        "holds it too, and a server refuses such an Authorization header with a plain-text 400 ('The headers sent by your " +
        "client are not valid'). Use TOKEN=$(npm run -s token).",
    );
  }
  console.log(token);
}

/**
 * Whether npm ran this script without -s and its output is captured: npm then writes its banner to the
 * same stdout, and the captured "token" holds the banner's lines, which no HTTP header may carry.
 */
function npmBannerOnStdout() {
  return Boolean(process.env.npm_lifecycle_event) && process.env.npm_config_loglevel !== "silent" && !process.stdout.isTTY;
}

main().catch((error) => {
  console.error(`token: ${error.message}`);
  console.error(usage());
  process.exit(1);
});
