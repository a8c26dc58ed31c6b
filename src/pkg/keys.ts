/**
 * The deployment's key ring, read from the secret `DATAPROCESSING_ENCRYPTION_KEY` (the spec's
 * `dataprocessing-encryption-key`): a comma-separated list of `{version}:{base64 32 bytes}`, the first
 * one current. Every sealed value names the version that sealed it (`v{version}.{iv}.{ciphertext}`,
 * base64url), so a rotation (the new key first, the old ones after it) leaves everything sealed
 * readable, and a value sealed again is sealed under the current key.
 *
 * One key per purpose: a purpose's AES-GCM or HMAC key is SHA-256 of a label naming the purpose and
 * the ring's key of that version, so no two uses share a key. The one exception is the interface's
 * own: job run options are sealed under the ring's key itself ({@link sealWithDeploymentKey}), as the
 * interface names that key for them, and as every stored config was sealed.
 */
import { ApiError } from "./errors";

interface KeyRing {
  current: string;
  /** The raw 32 bytes of each version. */
  byVersion: Map<string, Uint8Array>;
}

const rings = new Map<string, KeyRing>();

export interface SecretSource {
  DATAPROCESSING_ENCRYPTION_KEY?: string;
}

export function notConfigured(): ApiError {
  return new ApiError(
    "NotConfigured",
    'Secrets cannot be sealed: the secret DATAPROCESSING_ENCRYPTION_KEY is not set (README, "Data processing").',
  );
}

function fromBase64(text: string): Uint8Array {
  const normal = text.replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(normal + "=".repeat((4 - (normal.length % 4)) % 4)), (ch) => ch.charCodeAt(0));
}

function toBase64Url(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function parseRing(secret: string): KeyRing {
  const byVersion = new Map<string, Uint8Array>();
  let current: string | undefined;
  for (const entry of secret
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean)) {
    const match = /^([A-Za-z0-9]{1,16}):([A-Za-z0-9+/=_-]+)$/.exec(entry);
    if (!match) throw new Error("DATAPROCESSING_ENCRYPTION_KEY must be a comma-separated list of version:base64key");
    const raw = fromBase64(match[2]!);
    if (raw.length !== 32) throw new Error(`DATAPROCESSING_ENCRYPTION_KEY version ${match[1]} is not 32 bytes`);
    byVersion.set(match[1]!, raw);
    current ??= match[1]!;
  }
  if (!current) throw new Error("DATAPROCESSING_ENCRYPTION_KEY names no key");
  return { current, byVersion };
}

function keyRing(env: SecretSource): KeyRing {
  const secret = env.DATAPROCESSING_ENCRYPTION_KEY;
  if (!secret) throw notConfigured();
  let ring = rings.get(secret);
  if (!ring) rings.set(secret, (ring = parseRing(secret)));
  return ring;
}

/** What a key of the ring is used as: the ring's key itself, or one derived for a purpose. */
type KeyUse = { kind: "deployment" } | { kind: "sealed"; purpose: string } | { kind: "mac"; label: string };

const keys = new Map<string, Promise<CryptoKey>>();

/** The key of one use and version, or null when the ring no longer holds that version. */
function keyOf(env: SecretSource, version: string, use: KeyUse): Promise<CryptoKey> | null {
  const raw = keyRing(env).byVersion.get(version);
  if (!raw) return null;
  const label = use.kind === "sealed" ? use.purpose : use.kind === "mac" ? use.label : "";
  const cacheKey = `${use.kind}\0${label}\0${version}\0${toBase64Url(raw)}`;
  let key = keys.get(cacheKey);
  if (!key) {
    key = (async () => {
      if (use.kind === "deployment") return crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
      // The label of each use (the same labels as before this module, so what they sealed still opens).
      const text = use.kind === "sealed" ? `integrity-edge sealed ${use.purpose}\0` : use.label;
      const derived = new Uint8Array(await crypto.subtle.digest("SHA-256", new Uint8Array([...new TextEncoder().encode(text), ...raw])));
      return use.kind === "sealed"
        ? crypto.subtle.importKey("raw", derived, "AES-GCM", false, ["encrypt", "decrypt"])
        : crypto.subtle.importKey("raw", derived, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
    })();
    keys.set(cacheKey, key);
    key.catch(() => keys.delete(cacheKey));
  }
  return key;
}

async function seal(env: SecretSource, use: KeyUse, text: string): Promise<string> {
  const version = keyRing(env).current;
  const key = (await keyOf(env, version, use))!;
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const data = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, new TextEncoder().encode(text)));
  return `v${version}.${toBase64Url(iv)}.${toBase64Url(data)}`;
}

const SEALED = /^v([A-Za-z0-9]{1,16})\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]*)$/;

async function open(env: SecretSource, use: KeyUse, sealed: string): Promise<string> {
  const match = SEALED.exec(sealed);
  if (!match) throw new Error("not a sealed blob");
  const key = keyOf(env, match[1]!, use);
  if (!key)
    throw new ApiError(
      "NotConfigured",
      `A sealed value names key version ${match[1]}, which DATAPROCESSING_ENCRYPTION_KEY no longer holds.`,
    );
  const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: fromBase64(match[2]!) }, await key, fromBase64(match[3]!));
  return new TextDecoder().decode(plain);
}

/** Seals text under the ring's current key itself (job run options, as the interface requires). */
export function sealWithDeploymentKey(env: SecretSource, text: string): Promise<string> {
  return seal(env, { kind: "deployment" }, text);
}

/** Opens a value of {@link sealWithDeploymentKey} under whichever key of the ring sealed it. */
export function openWithDeploymentKey(env: SecretSource, sealed: string): Promise<string> {
  return open(env, { kind: "deployment" }, sealed);
}

/** Seals text for one purpose (webhook secrets, idempotent answers...) under a key of its own. */
export function sealText(env: SecretSource, purpose: string, text: string): Promise<string> {
  return seal(env, { kind: "sealed", purpose }, text);
}

/** Opens a value of {@link sealText}; throws when it is not one, was sealed for another purpose, or its key version is gone. */
export function openText(env: SecretSource, purpose: string, sealed: string): Promise<string> {
  return open(env, { kind: "sealed", purpose }, sealed);
}

/** The key version a sealed value names. */
export function sealedKeyVersion(sealed: string): string | null {
  return /^v([A-Za-z0-9]{1,16})\./.exec(sealed)?.[1] ?? null;
}

/** The MAC key of scoped tokens (its label as before this module, so tokens made then still verify). */
const TOKEN_MAC: KeyUse = { kind: "mac", label: "integrity-edge job token\0" };

/**
 * A scoped token: `{scope}.{id}.{keyVersion}.{mac}`, the MAC an HMAC-SHA-256 of `{scope}:{id}` under a
 * key derived from the ring's key of that version. Nothing secret is stored: the service makes it
 * again whenever it needs to; whether it is still good is the scope's owner's check (a job's token
 * only while the job runs, say).
 */
export async function signScopedToken(env: SecretSource, scope: string, id: string): Promise<string> {
  const version = keyRing(env).current;
  const key = (await keyOf(env, version, TOKEN_MAC))!;
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${scope}:${id}`)));
  return `${scope}.${id}.${version}.${toBase64Url(mac)}`;
}

const SCOPED_TOKEN = /^([a-z]{1,32})\.([0-9a-f-]{36})\.([A-Za-z0-9]{1,16})\.([A-Za-z0-9_-]{43})$/;

/** Whether a token has the shape of a scoped token (and is so not a JWT). */
export function looksScoped(token: string): { scope: string } | null {
  const match = SCOPED_TOKEN.exec(token);
  return match ? { scope: match[1]! } : null;
}

/** The scope and id a scoped token speaks for when its MAC is right, or null. */
export async function verifyScopedToken(env: SecretSource, token: string): Promise<{ scope: string; id: string } | null> {
  const match = SCOPED_TOKEN.exec(token);
  if (!match) return null;
  const key = keyOf(env, match[3]!, TOKEN_MAC);
  if (!key) return null;
  const ok = await crypto.subtle.verify("HMAC", await key, fromBase64(match[4]!), new TextEncoder().encode(`${match[1]}:${match[2]}`));
  return ok ? { scope: match[1]!, id: match[2]! } : null;
}
