/**
 * Every (sub-)app is made here, so the validation hook that turns zod issues into problem details
 * is set once for all routes.
 */
import { OpenAPIHono, type Hook } from "@hono/zod-openapi";
import type { AppEnv } from "./env";
import { ApiError, type FieldProblem } from "./pkg/errors";
import { illFormedStrings } from "./pkg/unicode";

const TARGET_NAMES: Record<string, string> = { json: "body", query: "query", param: "path", header: "header", form: "body" };

/** Turns zod issues into field problems: where (`body.regex`), which rule, and what is wrong. */
export const validationHook: Hook<unknown, AppEnv, string, unknown> = (result) => {
  const target = TARGET_NAMES[result.target] ?? result.target;
  if (result.success) {
    // Valid by the schema, but every string must also be well-formed Unicode (src/pkg/unicode.ts).
    const bad = illFormedStrings(result.data);
    if (bad.length === 0) return;
    const errors: FieldProblem[] = bad.map((path) => ({
      field: [target, ...path.map(String)].join("."),
      rule: "wellFormedUnicode",
      message: "The text is not well-formed Unicode (it holds a lone UTF-16 surrogate).",
    }));
    throw new ApiError("ValidationFailed", errors.map((e) => `${e.field}: ${e.message}`).join("; "), { errors });
  }
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

