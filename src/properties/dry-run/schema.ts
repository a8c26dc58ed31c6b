import { z } from "@hono/zod-openapi";
import { ProblemSchema } from "../../pkg/openapi";
import { APPLICATION_RULE_INPUTS, FORMATS, LIMITS } from "../definitions/rules";

export const MAX_DRY_RUN_PROPERTIES = 500;

const PropertyInput = z
  .object({ name: z.string().min(1).max(LIMITS.nameLength), value: z.unknown().optional() })
  .strict()
  .openapi("LinkedPropertyInput");

export const DryRunRequestSchema = z
  .object({
    entityTypeId: z.uuid().optional().openapi({ description: "Validate `properties` against the definitions linked to this entity type." }),
    applicationRule: z
      .enum(APPLICATION_RULE_INPUTS)
      .optional()
      .openapi({ description: "With entityTypeId: use only linked definitions of this rule." }),
    expression: z.string().optional().openapi({ description: "Evaluate this valueExpression body with `properties` as its variables." }),
    format: z.enum(FORMATS).optional().openapi({ description: "With expression: check the result against this format." }),
    properties: z.array(PropertyInput).max(MAX_DRY_RUN_PROPERTIES).default([]),
  })
  .strict()
  .superRefine((body, ctx) => {
    const forms = [body.entityTypeId !== undefined, body.expression !== undefined].filter(Boolean).length;
    if (forms !== 1) {
      ctx.addIssue({ code: "custom", path: [], params: { rule: "oneOf" }, message: "Give exactly one of entityTypeId and expression." });
    }
    if (body.applicationRule !== undefined && body.entityTypeId === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["applicationRule"],
        params: { rule: "notAllowed" },
        message: "applicationRule goes with entityTypeId.",
      });
    }
    if (body.format !== undefined && body.expression === undefined) {
      ctx.addIssue({ code: "custom", path: ["format"], params: { rule: "notAllowed" }, message: "format goes with expression." });
    }
  })
  .openapi("PropertyDryRun", {
    description:
      "Either `{ entityTypeId, properties }`: resolve linked values as a write would (types, regex, defaults, required, value " +
      "expressions), or `{ expression, properties, format? }`: evaluate one value expression with the sample properties in scope.",
  });

export type DryRunRequest = z.infer<typeof DryRunRequestSchema>;

const FieldProblemSchema = ProblemSchema.shape.errors.unwrap().element;

export const DryRunResultSchema = z
  .object({
    valid: z.boolean(),
    properties: z
      .array(z.object({ name: z.string(), value: z.unknown() }))
      .optional()
      .openapi({ description: "Entity type form, when valid: every linked property with its resolved value, in link order." }),
    value: z.unknown().optional().openapi({ description: "Expression form, when valid: the result (checked against format when given)." }),
    code: z
      .enum(["ValidationFailed", "ExpressionFailed"])
      .optional()
      .openapi({ description: "When not valid: the error code a write would answer." }),
    errors: z.array(FieldProblemSchema).optional().openapi({ description: "When not valid: every problem, as a write would list them." }),
  })
  .openapi("PropertyDryRunResult");

export type DryRunResult = z.infer<typeof DryRunResultSchema>;
