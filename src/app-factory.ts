/**
 * Every (sub-)app is made here, so the validation hook that turns zod issues into problem details
 * is set once for all routes.
 */
import { OpenAPIHono, type Hook } from "@hono/zod-openapi";
import type { AppEnv } from "./env";
import { ApiError, type FieldProblem } from "./pkg/errors";
import { illFormedStrings } from "./pkg/unicode";
import { fieldProblems } from "./pkg/validation-messages";

const TARGET_NAMES: Record<string, string> = { json: "body", query: "query", param: "path", header: "header", form: "body" };

/** Turns zod issues into field problems: where (`body.regex`), which rule, and what is wrong, in words about the API. */
export const validationHook: Hook<unknown, AppEnv, string, unknown> = (result, c) => {
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
  // Sentences about the API, not the validator's wording (src/pkg/validation-messages.ts).
  const { errors, detail } = fieldProblems(c, result.target, result.error.issues as never, (result as { data?: unknown }).data);
  throw new ApiError("ValidationFailed", detail, { errors });
};

export function newApp(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}
