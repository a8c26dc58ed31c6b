/**
 * One error family for the whole API. Every failure a client can see is an ApiError with a code from
 * the closed list below; `problemStatus` maps each code to its HTTP status in one exhaustive switch,
 * and `toProblem` renders it as RFC 9457 problem details.
 */

export type ErrorCode =
  | "BadRequest"
  | "ValidationFailed"
  | "InvalidQuery"
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "MethodNotAllowed"
  | "Conflict"
  | "InUse"
  | "PreconditionFailed"
  | "PayloadTooLarge"
  | "RangeNotSatisfiable"
  | "UnsupportedMediaType"
  | "UnsupportedApiVersion"
  | "IdempotencyKeyReused"
  | "IdempotencyKeyInProgress"
  | "ExpressionFailed"
  | "NotConfigured"
  | "HostUnavailable"
  | "TooManyRequests"
  | "Overloaded"
  | "CursorExpired"
  | "FailedDependency"
  | "Internal";

export function problemStatus(code: ErrorCode): number {
  switch (code) {
    case "BadRequest":
    case "ValidationFailed":
    case "InvalidQuery":
    case "UnsupportedApiVersion":
    case "ExpressionFailed":
      return 400;
    case "Unauthorized":
      return 401;
    case "Forbidden":
      return 403;
    case "NotFound":
      return 404;
    case "MethodNotAllowed":
      return 405;
    case "Conflict":
    case "InUse":
    case "IdempotencyKeyInProgress":
      return 409;
    case "PreconditionFailed":
      return 412;
    case "PayloadTooLarge":
      return 413;
    case "RangeNotSatisfiable":
      return 416;
    case "UnsupportedMediaType":
      return 415;
    case "IdempotencyKeyReused":
      return 422;
    case "Internal":
      return 500;
    case "NotConfigured":
      return 501;
    case "HostUnavailable":
    case "Overloaded":
      return 503;
    case "TooManyRequests":
      return 429;
    case "CursorExpired":
      return 410;
    case "FailedDependency":
      return 424;
  }
}

const titles: Record<ErrorCode, string> = {
  BadRequest: "Bad request",
  ValidationFailed: "The request is not valid",
  InvalidQuery: "The query is not valid",
  Unauthorized: "Authentication required",
  Forbidden: "Permission missing",
  NotFound: "Not found",
  MethodNotAllowed: "Method not allowed",
  Conflict: "Conflict",
  InUse: "The resource is in use",
  PreconditionFailed: "Precondition failed",
  PayloadTooLarge: "Payload too large",
  RangeNotSatisfiable: "Range not satisfiable",
  UnsupportedMediaType: "Unsupported media type",
  UnsupportedApiVersion: "Unsupported API version",
  IdempotencyKeyReused: "Idempotency key reused with a different request",
  IdempotencyKeyInProgress: "A request with this idempotency key is still in progress",
  ExpressionFailed: "A value expression failed",
  Internal: "Internal error",
  NotConfigured: "Not configured on this deployment",
  HostUnavailable: "The container host is not answering",
  TooManyRequests: "Too many requests",
  Overloaded: "The service is busy",
  CursorExpired: "The cursor has expired",
  FailedDependency: "Not run: an operation it depends on failed",
};

/** One problem with one part of the request: `field` says where (e.g. `body.regex`, `query.order`). */
export interface FieldProblem {
  field: string;
  rule: string;
  message: string;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly errors: FieldProblem[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, detail: string, options: { errors?: FieldProblem[]; headers?: Record<string, string> } = {}) {
    super(detail);
    this.name = "ApiError";
    this.code = code;
    this.status = problemStatus(code);
    this.errors = options.errors;
    this.headers = options.headers;
  }
}

/** A validation failure for one field: the common case, kept short at call sites. */
export function invalid(field: string, rule: string, message: string): ApiError {
  return new ApiError("ValidationFailed", message, { errors: [{ field, rule, message }] });
}

export function notFound(what: string, id: string): ApiError {
  return new ApiError("NotFound", `${what} ${id} does not exist.`);
}

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  requestId: string;
  instance?: string;
  errors?: FieldProblem[];
}

export const PROBLEM_TYPE_BASE = "urn:integrity-edge:problem:";

export function toProblem(error: ApiError, requestId: string, instance?: string): ProblemDetails {
  const problem: ProblemDetails = {
    type: PROBLEM_TYPE_BASE + error.code,
    title: titles[error.code],
    status: error.status,
    // A 500 never shows internals: the detail is fixed and the request id leads to the log line.
    detail: error.code === "Internal" ? "An unexpected error occurred. Quote the request id when reporting it." : error.message,
    code: error.code,
    requestId,
  };
  if (instance) problem.instance = instance;
  if (error.errors?.length) problem.errors = error.errors;
  return problem;
}

export function problemResponse(error: ApiError, requestId: string, instance?: string): Response {
  const { body, status, headers } = problemParts(error, requestId, instance);
  return new Response(body, { status, headers });
}

/** What {@link problemResponse} answers, as parts (for an answer made through Hono's context). */
export function problemParts(error: ApiError, requestId: string, instance?: string): { body: string; status: number; headers: Headers } {
  const headers = new Headers(error.headers);
  headers.set("content-type", "application/problem+json");
  headers.set("x-request-id", requestId);
  return { body: JSON.stringify(toProblem(error, requestId, instance)), status: error.status, headers };
}

/**
 * The request body failed while it was read: the client went away mid-upload (workerd's read rejects
 * with "Network connection lost."), or its bytes do not decode under its Content-Encoding. The body
 * readers (./multipart.ts, ./body-fingerprint.ts, the upload part hasher) throw it in place of the
 * runtime's error, so the error hook can tell a client's disconnect from a failure of ours without
 * reading messages: it is logged as a client disconnect, never as a 500 (docs/decisions.md,
 * "Overload").
 */
export class BodyReadError extends Error {
  constructor(readonly reason: unknown) {
    super(reason instanceof Error ? reason.message : String(reason));
    this.name = "BodyReadError";
  }
}

/** `error` from reading a request body, as the error to throw: our own (ApiError) as it is, else a BodyReadError. */
export function bodyFailure(error: unknown): unknown {
  return error instanceof ApiError || error instanceof BodyReadError ? error : new BodyReadError(error);
}
