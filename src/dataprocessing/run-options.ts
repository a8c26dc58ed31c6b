/**
 * Run options at rest: one AES-256-GCM blob per config or job, under a key ring read from the secret
 * `DATAPROCESSING_ENCRYPTION_KEY` (the spec's `dataprocessing-encryption-key`): a comma-separated list
 * of `{version}:{base64 32 bytes}`, the first one current. Each blob names the version that sealed it
 * (`v{version}.{iv}.{ciphertext}`, base64url), so a rotation (put the new key first, keep the old ones
 * after it) leaves every stored config readable; a config re-saved is sealed under the current key.
 * The option names are inside the blob too: D1 holds nothing of the options in plain text.
 */
import { ApiError } from "../pkg/errors";

export type RunOptions = Record<string, string>;

interface KeyRing {
  current: { version: string; key: CryptoKey };
  byVersion: Map<string, CryptoKey>;
}

const rings = new Map<string, Promise<KeyRing>>();

function notConfigured(): ApiError {
  return new ApiError(
    "NotConfigured",
    'Run options cannot be stored: the secret DATAPROCESSING_ENCRYPTION_KEY is not set (README, "Data processing").',
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

async function parseRing(secret: string): Promise<KeyRing> {
  const entries = secret
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);
  const byVersion = new Map<string, CryptoKey>();
  let current: KeyRing["current"] | undefined;
  for (const entry of entries) {
    const match = /^([A-Za-z0-9]{1,16}):([A-Za-z0-9+/=_-]+)$/.exec(entry);
    if (!match) throw new Error("DATAPROCESSING_ENCRYPTION_KEY must be a comma-separated list of version:base64key");
    const raw = fromBase64(match[2]!);
    if (raw.length !== 32) throw new Error(`DATAPROCESSING_ENCRYPTION_KEY version ${match[1]} is not 32 bytes`);
    const key = await crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
    byVersion.set(match[1]!, key);
    current ??= { version: match[1]!, key };
  }
  if (!current) throw new Error("DATAPROCESSING_ENCRYPTION_KEY names no key");
  return { current, byVersion };
}

function keyRing(secret: string | undefined): Promise<KeyRing> {
  if (!secret) throw notConfigured();
  let ring = rings.get(secret);
  if (!ring) {
    ring = parseRing(secret);
    rings.set(secret, ring);
    ring.catch(() => rings.delete(secret));
  }
  return ring;
}

export interface SecretSource {
  DATAPROCESSING_ENCRYPTION_KEY?: string;
}

/** Seals run options under the current key. */
export async function sealRunOptions(env: SecretSource, options: RunOptions): Promise<string> {
  const { current } = await keyRing(env.DATAPROCESSING_ENCRYPTION_KEY);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const data = new Uint8Array(
    await crypto.subtle.encrypt({ name: "AES-GCM", iv }, current.key, new TextEncoder().encode(JSON.stringify(options))),
  );
  return `v${current.version}.${toBase64Url(iv)}.${toBase64Url(data)}`;
}

/** Opens a blob sealed by {@link sealRunOptions} under any key of the ring. */
export async function openRunOptions(env: SecretSource, sealed: string): Promise<RunOptions> {
  const match = /^v([A-Za-z0-9]{1,16})\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(sealed);
  if (!match) throw new Error("stored run options are not a sealed blob");
  const ring = await keyRing(env.DATAPROCESSING_ENCRYPTION_KEY);
  const key = ring.byVersion.get(match[1]!);
  if (!key)
    throw new ApiError(
      "NotConfigured",
      `Run options were sealed with key version ${match[1]}, which DATAPROCESSING_ENCRYPTION_KEY no longer holds.`,
    );
  const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: fromBase64(match[2]!) }, key, fromBase64(match[3]!));
  return JSON.parse(new TextDecoder().decode(plain)) as RunOptions;
}

/** The key version a blob was sealed with. */
export function sealedKeyVersion(sealed: string): string | null {
  return /^v([A-Za-z0-9]{1,16})\./.exec(sealed)?.[1] ?? null;
}

/**
 * The original client's older configs hold run options as a docker-style string of `-e KEY=VALUE`
 * tokens (values may be quoted). Returns the map, or the index of the first token that is not one.
 */
export function parseDockerStyleOptions(text: string): { options: RunOptions } | { error: string } {
  const options: RunOptions = {};
  const tokens = text.match(/"[^"]*"|'[^']*'|\S+/g) ?? [];
  for (let i = 0; i < tokens.length; i++) {
    const flag = tokens[i]!;
    if (flag !== "-e" && flag !== "--env") return { error: `'${flag}' is not '-e'; run options as a string are '-e KEY=VALUE' tokens` };
    const pair = tokens[++i];
    const unquoted = pair?.replace(/^(["'])(.*)\1$/, "$2");
    const eq = unquoted?.indexOf("=") ?? -1;
    if (!unquoted || eq <= 0) return { error: `'-e' must be followed by KEY=VALUE` };
    options[unquoted.slice(0, eq)] = unquoted.slice(eq + 1).replace(/^(["'])(.*)\1$/, "$2");
  }
  return { options };
}

/**
 * A job's output token: `job.{jobId}.{keyVersion}.{mac}`, the MAC an HMAC-SHA-256 of the job id under
 * a key derived from the ring's key of that version. The service can recompute it whenever it
 * (re)starts the job's container, so nothing secret is stored; it is accepted only while the job runs.
 */
const macKeys = new Map<string, Promise<CryptoKey>>();

async function macKey(env: SecretSource, version: string): Promise<CryptoKey | null> {
  const secret = env.DATAPROCESSING_ENCRYPTION_KEY;
  if (!secret) throw notConfigured();
  const entry = secret
    .split(",")
    .map((p) => p.trim())
    .find((p) => p.startsWith(`${version}:`));
  if (!entry) return null;
  const cacheKey = `${version}:${entry}`;
  let key = macKeys.get(cacheKey);
  if (!key) {
    const raw = fromBase64(entry.slice(version.length + 1));
    // A separate key for MACs: SHA-256 of a label and the AES key, so the AES key is never used twice.
    const derived = new Uint8Array(
      await crypto.subtle.digest("SHA-256", new Uint8Array([...new TextEncoder().encode("integrity-edge job token\0"), ...raw])),
    );
    key = crypto.subtle.importKey("raw", derived, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
    macKeys.set(cacheKey, key);
  }
  return key;
}

/**
 * Any text sealed for one purpose (AES-256-GCM, `v{version}.{iv}.{ciphertext}` like run options) under
 * a key derived from the ring's key of that version and the purpose's name (SHA-256 of a label and the
 * key, as the token MACs are derived), so no two uses share a key. Rotation works as for run options:
 * a blob names its version and opens while the ring still holds it.
 */
const purposeKeys = new Map<string, Promise<CryptoKey>>();

async function purposeKey(env: SecretSource, version: string, purpose: string): Promise<CryptoKey | null> {
  const secret = env.DATAPROCESSING_ENCRYPTION_KEY;
  if (!secret) throw notConfigured();
  const entry = secret
    .split(",")
    .map((p) => p.trim())
    .find((p) => p.startsWith(`${version}:`));
  if (!entry) return null;
  const cacheKey = `${purpose}\0${entry}`;
  let key = purposeKeys.get(cacheKey);
  if (!key) {
    const raw = fromBase64(entry.slice(version.length + 1));
    const derived = new Uint8Array(
      await crypto.subtle.digest("SHA-256", new Uint8Array([...new TextEncoder().encode(`integrity-edge sealed ${purpose}\0`), ...raw])),
    );
    key = crypto.subtle.importKey("raw", derived, "AES-GCM", false, ["encrypt", "decrypt"]);
    purposeKeys.set(cacheKey, key);
    key.catch(() => purposeKeys.delete(cacheKey));
  }
  return key;
}

export async function sealText(env: SecretSource, purpose: string, text: string): Promise<string> {
  const { current } = await keyRing(env.DATAPROCESSING_ENCRYPTION_KEY);
  const key = (await purposeKey(env, current.version, purpose))!;
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const data = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, new TextEncoder().encode(text)));
  return `v${current.version}.${toBase64Url(iv)}.${toBase64Url(data)}`;
}

/** Opens a blob of {@link sealText}; throws when it is not one, was sealed for another purpose, or its key version is gone. */
export async function openText(env: SecretSource, purpose: string, sealed: string): Promise<string> {
  const match = /^v([A-Za-z0-9]{1,16})\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]*)$/.exec(sealed);
  if (!match) throw new Error("not a sealed blob");
  const key = await purposeKey(env, match[1]!, purpose);
  if (!key)
    throw new ApiError(
      "NotConfigured",
      `A sealed value names key version ${match[1]}, which DATAPROCESSING_ENCRYPTION_KEY no longer holds.`,
    );
  const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: fromBase64(match[2]!) }, key, fromBase64(match[3]!));
  return new TextDecoder().decode(plain);
}

/**
 * What a scoped token may do: post a job's outputs (`job`), or set the status of one monitor job, one
 * run of an External model (`monitorjob`). `monitor` is the older monitor-wide status token, good for
 * every run of a monitor forever: still recognised, so that it can be refused saying why.
 */
export type TokenScope = "job" | "monitorjob" | "monitor";

export async function scopedTokenFor(env: SecretSource, scope: TokenScope, id: string): Promise<string> {
  const { current } = await keyRing(env.DATAPROCESSING_ENCRYPTION_KEY);
  const key = (await macKey(env, current.version))!;
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${scope}:${id}`)));
  return `${scope}.${id}.${current.version}.${toBase64Url(mac)}`;
}

export const jobTokenFor = (env: SecretSource, jobId: string) => scopedTokenFor(env, "job", jobId);

const SCOPED_TOKEN = /^(job|monitorjob|monitor)\.([0-9a-f-]{36})\.([A-Za-z0-9]{1,16})\.([A-Za-z0-9_-]{43})$/;

/** The scope and id a token speaks for when its MAC is right (whether it is still valid is the caller's check). */
export async function scopeOfToken(env: SecretSource, token: string): Promise<{ scope: TokenScope; id: string } | null> {
  const match = SCOPED_TOKEN.exec(token);
  if (!match) return null;
  const key = await macKey(env, match[3]!);
  if (!key) return null;
  const scope = match[1] as TokenScope;
  const ok = await crypto.subtle.verify("HMAC", key, fromBase64(match[4]!), new TextEncoder().encode(`${scope}:${match[2]}`));
  return ok ? { scope, id: match[2]! } : null;
}
