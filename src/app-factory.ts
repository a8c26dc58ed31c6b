/**
 * Every (sub-)app is made here, so the validation hook that turns zod issues into problem details
 * is set once for all routes.
 */
import { OpenAPIHono, type Hook } from "@hono/zod-openapi";
import type { AppEnv } from "./env";
import { ApiError, type FieldProblem } from "./pkg/errors";

const TARGET_NAMES: Record<string, string> = { json: "body", query: "query", param: "path", header: "header", form: "body" };

/** Turns zod issues into field problems: where (`body.regex`), which rule, and what is wrong. */
export const validationHook: Hook<unknown, AppEnv, string, unknown> = (result) => {
  if (result.success) return;
  const target = TARGET_NAMES[result.target] ?? result.target;
  const errors: FieldProblem[] = result.error.issues.map((issue) => ({
    field: [target, ...issue.path.map(String)].join("."),
    rule: issue.code === "custom" ? String((issue as { params?: { rule?: string } }).params?.rule ?? "custom") : issue.code,
    message: issue.message,
  }));
  throw new ApiError("ValidationFailed", errors.map((e) => `${e.field}: ${e.message}`).join("; "), { errors });
};

export function newApp(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}

