/**
 * Factories for the upload area: data types through the API, multipart forms as the original
 * clients send them, raw downloads (the shared `call` decodes bodies as text), and the cron.
 */
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import worker from "../../../src/index";
import { call, tokenFor, type TestUser } from "../http";

export const ALICE = { id: "alice-0001", name: "Alice Inspector" } as const;
export const BOB = { id: "bob-0002", name: "Bob Analyst" } as const;

export function uniqueDataTypeId(prefix = "dt"): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
}

export interface CreatedDataType {
  id: string;
  name: string;
  allowedExtensions: string[];
  etag: string;
}

export async function createDataType(overrides: Record<string, unknown> = {}): Promise<CreatedDataType> {
  const id = uniqueDataTypeId();
  const res = await call("/DataTypes", {
    method: "POST",
    body: { id, name: `Data type ${id}`, allowedExtensions: ["csv", "xlsx"], ...overrides },
  });
  expect(res.status, res.text).toBe(201);
  return { ...(res.body as Omit<CreatedDataType, "etag">), etag: res.headers.get("etag")! };
}

/** Deterministic bytes (not all equal, so a misplaced part shows). */
export function patternBytes(size: number, seed = 1): Uint8Array {
  const bytes = new Uint8Array(size);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    bytes[i] = x >>> 24;
  }
  return bytes;
}

export async function sha256Hex(bytes: Uint8Array | ArrayBuffer): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The checksum a resumable upload gets, recomputed as a client would from its bytes and the part
 * size: one part is its plain SHA-256; n parts are `sha256-parts:` + SHA-256 over the parts' binary
 * SHA-256 digests in order + `-n`.
 */
export async function compositeSha256(bytes: Uint8Array, partSize: number): Promise<string> {
  const count = Math.ceil(bytes.length / partSize);
  if (count === 1) return sha256Hex(bytes);
  const digests = new Uint8Array(32 * count);
  for (let i = 0; i < count; i++) {
    digests.set(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes.subarray(i * partSize, (i + 1) * partSize))), 32 * i);
  }
  return `sha256-parts:${await sha256Hex(digests)}-${count}`;
}

export interface FormFile {
  name: string;
  content: Uint8Array | string;
  type?: string;
}

/** A form with the given text fields and file, in the order given (field names exactly as written). */
export function fileForm(entries: [string, string | FormFile][]): FormData {
  const form = new FormData();
  for (const [name, value] of entries) {
    if (typeof value === "string") form.append(name, value);
    else form.append(name, new File([value.content], value.name, { type: value.type ?? "application/octet-stream" }));
  }
  return form;
}

export function postForm(form: FormData, user?: Partial<TestUser>, headers?: Record<string, string>) {
  return call("/Files", { method: "POST", rawBody: form, ...(user ? { user } : {}), ...(headers ? { headers } : {}) });
}

/** Posts one file as the original clients do (DataTypeId, File) and expects 201. */
export async function uploadFile(dataTypeId: string, file: FormFile, user?: Partial<TestUser>) {
  const res = await postForm(
    fileForm([
      ["DataTypeId", dataTypeId],
      ["File", file],
    ]),
    user,
  );
  expect(res.status, res.text).toBe(201);
  return res;
}

export interface RawResult {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
}

/** A request whose response body is read as bytes (downloads); the request body may be raw bytes. */
export async function rawCall(
  path: string,
  options: { method?: string; headers?: Record<string, string>; user?: Partial<TestUser>; body?: BodyInit } = {},
): Promise<RawResult> {
  const headers = new Headers(options.headers);
  headers.set("authorization", `Bearer ${await tokenFor(options.user)}`);
  const response = await exports.default.fetch(
    new Request(`https://api.test${path}`, {
      method: options.method ?? "GET",
      headers,
      ...(options.body !== undefined ? { body: options.body } : {}),
    }),
  );
  return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) };
}

/** Runs the Worker's scheduled handler as the minute cron would, at `scheduledTime`. */
export async function runCron(scheduledTime = Date.now()): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ cron: "* * * * *", scheduledTime }), env, ctx);
  await waitOnExecutionContext(ctx);
}

/** Every key in the UPLOADS bucket under a prefix. */
export async function bucketKeys(prefix = "files/"): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.UPLOADS.list({ prefix, ...(cursor ? { cursor } : {}) });
    keys.push(...page.objects.map((o) => o.key));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return keys;
}
