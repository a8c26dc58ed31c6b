/**
 * Runs a batch: each operation is a request sent through the app itself (the caller's token, the
 * operation's headers and body), one after the other, so every route's authentication, permission,
 * validation, rate limit, events and audit apply as they do to a single request; nothing here repeats a
 * rule of theirs. docs/decisions.md, "Batch".
 */
import type { Context } from "hono";

type HonoExecutionContext = Context<AppEnv>["executionCtx"];
import type { AppEnv, Bindings } from "../env";
import { ApiError, BodyReadError, problemParts, type FieldProblem } from "../pkg/errors";
import { answerHoldsSecrets, answerIsProvisional, batchOperations, operationEnv, type OperationMemory } from "../pkg/idempotency";
import { hex } from "../pkg/body-fingerprint";
import { errorFields } from "../pkg/logger";
import { AUDIT_REASON_HEADER } from "../pkg/audit-reason";
import { referenceProblems, resolved, type Answer } from "./references";
import {
  MAX_ANSWER_BYTES,
  MAX_OPERATIONS,
  OPERATION_HEADERS,
  RESULT_HEADERS,
  type BatchOperation,
  type BatchRequest,
  type BatchResult,
} from "./schema";

/** Sends one request through the app (src/app.ts passes its own fetch). */
export type Dispatch = (request: Request, env: Bindings, ctx: HonoExecutionContext | undefined) => Promise<Response>;

const ALLOWED_HEADERS = new Set<string>(OPERATION_HEADERS);

/** The problems that refuse the whole batch before anything runs (a 400 naming each field and rule). */
function batchProblems(operations: BatchOperation[]): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const earlier = new Set<string>();
  operations.forEach((op, i) => {
    const at = `body.operations.${i}`;
    if (earlier.has(op.id))
      problems.push({ field: `${at}.id`, rule: "unique", message: `The id '${op.id}' is used by an earlier operation.` });
    if (!op.path.startsWith("/") || op.path.startsWith("//") || /[#\s]/.test(op.path)) {
      problems.push({
        field: `${at}.path`,
        rule: "format",
        message: "path is the route's path and query on this service, starting with one / (no host, no fragment, no spaces).",
      });
    } else if (isBatchPath(op.path)) {
      problems.push({ field: `${at}.path`, rule: "nestedBatch", message: "A batch may not hold another batch." });
    }
    for (const name of Object.keys(op.headers ?? {})) {
      if (!ALLOWED_HEADERS.has(name.toLowerCase())) {
        problems.push({
          field: `${at}.headers.${name}`,
          rule: "headerNotAllowed",
          message:
            `An operation may carry only ${OPERATION_HEADERS.join(", ")}; the batch's token speaks for every ` +
            "operation and its body is always JSON.",
        });
      }
    }
    if ((op.method === "GET" || op.method === "DELETE") && op.body !== undefined) {
      problems.push({ field: `${at}.body`, rule: "noBody", message: `A ${op.method} operation takes no body.` });
    }
    problems.push(...referenceProblems(op, at, earlier));
    earlier.add(op.id);
  });
  return problems;
}

/** Whether a path names POST /$batch in any of the spellings the router would match (case, escapes, a trailing /). */
function isBatchPath(path: string): boolean {
  const pathname = path.split("?")[0]!;
  let decoded = pathname;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    // Not percent-decodable: the router will not match it to anything.
  }
  return decoded.replace(/\/+$/, "").toLowerCase() === "/$batch";
}

/**
 * An answer a retry may mend: a failure of the service (5xx), a rate limit (429), a write that kept
 * losing to others or a key still in use (409 with Retry-After). Its batch is not kept for replays.
 */
function transient(status: number, headers: Headers): boolean {
  return status >= 500 || status === 429 || (status === 409 && headers.has("retry-after"));
}

async function fingerprintOf(index: number, op: BatchOperation): Promise<string> {
  const text = JSON.stringify([index, op.method, op.path, op.headers ?? {}, op.body ?? null]);
  return hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
}

function problemResult(c: Context<AppEnv>, id: string, path: string, error: ApiError): BatchResult {
  const { body, status } = problemParts(error, c.get("requestId"), path);
  return { id, ran: false, status, headers: { "content-type": "application/problem+json" }, body: JSON.parse(body) as unknown };
}

function bodyOf(text: string, contentType: string | undefined): unknown {
  if (text === "") return null;
  if (contentType && /[/+]json\b/i.test(contentType)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

function picked(headers: Headers): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of RESULT_HEADERS) {
    const value = headers.get(name);
    if (value !== null) kept[name] = value;
  }
  return kept;
}

type Omitted = NonNullable<BatchResult["bodyOmitted"]>;

interface ReadAnswer {
  status: number;
  headers: Record<string, string>;
  text: string;
  omitted?: Omitted;
  transient: boolean;
}

/**
 * One operation's answer: its status, the headers that matter and its body as text, read up to
 * `budget` bytes (what is left of the batch's {@link MAX_ANSWER_BYTES}); a larger body, a binary one
 * or an event stream is cancelled unread and given as omitted.
 */
async function readAnswer(response: Response, budget: number): Promise<ReadAnswer> {
  const headers = picked(response.headers);
  const type = response.headers.get("content-type") ?? "";
  const answer = { status: response.status, headers, text: "", transient: transient(response.status, response.headers) };
  const omitted = (why: Omitted): ReadAnswer => ({ ...answer, omitted: why });
  if (!response.body) return answer;
  if (/^text\/event-stream/i.test(type)) return response.body.cancel().then(() => omitted("stream"));
  if (!/[/+]json\b|^text\//i.test(type)) return response.body.cancel().then(() => omitted("binary"));
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > budget) {
      await reader.cancel();
      return omitted("tooLarge");
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return { ...answer, text: new TextDecoder().decode(bytes) };
}

/** The request of one operation, as the app receives it. */
function requestOf(c: Context<AppEnv>, op: BatchOperation, index: number): Request {
  const url = new URL(c.req.url);
  const target = new URL(op.path, url.origin);
  const headers = new Headers();
  for (const [name, value] of Object.entries(op.headers ?? {})) headers.set(name, value);
  const authorization = c.req.header("authorization");
  if (authorization) headers.set("authorization", authorization);
  // The batch's reason is each operation's that gives none (its audit records say why).
  const reason = c.req.header(AUDIT_REASON_HEADER);
  if (reason !== undefined && !headers.has(AUDIT_REASON_HEADER)) headers.set(AUDIT_REASON_HEADER, reason);
  // One request id per operation, the batch's own first: their log lines are found together.
  const suffix = `.${index + 1}`;
  headers.set("x-request-id", c.get("requestId").slice(0, 128 - suffix.length) + suffix);
  let body: string | undefined;
  if (op.body !== undefined) {
    body = JSON.stringify(op.body);
    headers.set("content-type", "application/json");
  }
  return new Request(target, { method: op.method, headers, body });
}

/** Runs the batch's operations in order; throws a 400 or 413 before running any when the batch itself is not valid. */
export async function runBatch(c: Context<AppEnv>, dispatch: Dispatch, batch: BatchRequest): Promise<BatchResult[]> {
  const { operations, onFailure } = batch;
  if (operations.length > MAX_OPERATIONS) {
    throw new ApiError("PayloadTooLarge", `The batch holds ${operations.length} operations; at most ${MAX_OPERATIONS} are taken at once.`, {
      errors: [{ field: "body.operations", rule: "maxItems", message: `At most ${MAX_OPERATIONS} operations.` }],
    });
  }
  const problems = batchProblems(operations);
  if (problems.length > 0)
    throw new ApiError("ValidationFailed", problems.map((p) => `${p.field}: ${p.message}`).join("; "), { errors: problems });

  const memory = batchOperations(c);
  let ctx: HonoExecutionContext | undefined;
  try {
    ctx = c.executionCtx;
  } catch {
    // Driven without an execution context (app.request in a script): the operations run without one too.
  }
  const answers = new Map<string, Answer>();
  const results: BatchResult[] = [];
  const budget = { left: MAX_ANSWER_BYTES };
  let stop: { id: string; status: number } | null = null;
  for (const [index, op] of operations.entries()) {
    const at = `body.operations.${index}`;
    let result: BatchResult;
    if (stop) {
      result = problemResult(
        c,
        op.id,
        op.path,
        new ApiError("FailedDependency", `Not run: operation '${stop.id}' answered ${stop.status} and the batch's onFailure is stop.`),
      );
    } else {
      // The client went away: stop here. What ran is kept (with an Idempotency-Key), and its retry runs the rest.
      if (c.req.raw.signal?.aborted) {
        answerIsProvisional(c);
        throw new BodyReadError(new Error("The client disconnected mid-batch."));
      }
      result = await runOne(c, { dispatch, ctx, memory, budget }, op, index, at, answers);
      if (onFailure === "stop" && result.status >= 400) stop = { id: op.id, status: result.status };
    }
    answers.set(op.id, { ran: result.ran, status: result.status, headers: result.headers, body: result.body });
    results.push(result);
  }
  return results;
}

/** What every operation of one batch shares. */
interface Run {
  dispatch: Dispatch;
  ctx: HonoExecutionContext | undefined;
  memory: OperationMemory | null;
  /** What is left of {@link MAX_ANSWER_BYTES}. */
  budget: { left: number };
}

/** Where a kept answer notes why its body was omitted (no header is named so). */
const OMITTED = ":omitted";

async function runOne(
  c: Context<AppEnv>,
  run: Run,
  sent: BatchOperation,
  index: number,
  at: string,
  answers: ReadonlyMap<string, Answer>,
): Promise<BatchResult> {
  const { memory, budget } = run;
  let op: BatchOperation;
  try {
    op = resolved(sent, at, answers);
  } catch (error) {
    if (error instanceof ApiError) return problemResult(c, sent.id, sent.path, error);
    throw error;
  }
  const fingerprint = memory ? await fingerprintOf(index, sent) : "";
  if (memory) {
    const claim = await memory.begin(sent.id, fingerprint);
    if (claim.outcome === "replay") {
      const { [OMITTED]: omitted, ...headers } = claim.response.headers;
      budget.left -= utf8Length(claim.response.body);
      return resultOf(sent.id, {
        status: claim.response.status,
        headers,
        text: claim.response.body,
        omitted: omitted as Omitted | undefined,
      });
    }
    if (claim.outcome === "mismatch") {
      return problemResult(
        c,
        sent.id,
        sent.path,
        new ApiError(
          "IdempotencyKeyReused",
          `Operation '${sent.id}' ran under this batch's Idempotency-Key as a different request; send the batch under a new key.`,
        ),
      );
    }
    if (claim.outcome === "inProgress") {
      // Another run of this batch is at this operation: this one stops, keeping nothing, and is retried.
      answerIsProvisional(c);
      throw new ApiError(
        "IdempotencyKeyInProgress",
        `Operation '${sent.id}' of a batch with this Idempotency-Key is still running; retry shortly.`,
        {
          headers: { "retry-after": "1" },
        },
      );
    }
  }
  const scoped = operationEnv(c.env);
  let answer: ReadAnswer;
  try {
    answer = await readAnswer(await run.dispatch(requestOf(c, op, index), scoped.env, run.ctx), Math.max(0, budget.left));
  } catch (error) {
    await memory?.release(sent.id, fingerprint);
    throw error;
  }
  budget.left -= utf8Length(answer.text);
  const secrets = scoped.holdsSecrets();
  if (secrets) answerHoldsSecrets(c);
  if (answer.transient) {
    // Not kept: the batch's retry runs this operation again.
    answerIsProvisional(c);
    await memory?.release(sent.id, fingerprint);
  } else if (memory) {
    const headers = answer.omitted ? { ...answer.headers, [OMITTED]: answer.omitted } : answer.headers;
    try {
      await memory.complete(sent.id, fingerprint, { status: answer.status, headers, body: answer.text }, secrets);
    } catch (error) {
      // The write is done and its answer goes out; only a retry of this batch would run it again (as after a crash).
      c.get("log").error("batch operation's answer not kept for retries", { operation: sent.id, ...errorFields(error) });
    }
  }
  return resultOf(sent.id, answer);
}

const utf8Length = (text: string) => new TextEncoder().encode(text).byteLength;

function resultOf(id: string, answer: Pick<ReadAnswer, "status" | "headers" | "text" | "omitted">): BatchResult {
  return {
    id,
    ran: true,
    status: answer.status,
    headers: answer.headers,
    body: bodyOf(answer.text, answer.headers["content-type"]),
    ...(answer.omitted ? { bodyOmitted: answer.omitted } : {}),
  };
}
