/**
 * Input values of an activity: each is checked by its input template's format (text, boolean,
 * integer, decimal, date; dates stored as ISO 8601 UTC) with the same checker as property values.
 * Inputs start empty (nobody has filled them in yet); a required input that has a value cannot be
 * cleared. Values travel as JSON text.
 */
import { ApiError, type FieldProblem } from "../../pkg/errors";
import { checkValue } from "../../properties/values";
import type { Format } from "../../properties/definitions/rules";

export interface InputSlot {
  input_template_id: string;
  format: string;
  required: number;
  /** The stored value (JSON text) before this write, or null. */
  value: string | null;
}

/** Checks the given values against the slots; returns the new values (JSON text or null) by input template id. */
export function checkInputValues(
  slots: readonly InputSlot[],
  given: readonly { id: string; value: unknown }[],
  field = "body.inputs",
): Map<string, string | null> {
  const byId = new Map(slots.map((s) => [s.input_template_id, s]));
  const values = new Map<string, string | null>();
  const problems: FieldProblem[] = [];
  given.forEach((input, i) => {
    const slot = byId.get(input.id);
    if (!slot) {
      problems.push({
        field: `${field}.${i}.id`,
        rule: "exists",
        message: `'${input.id}' is not an input of this activity (its activity template revision).`,
      });
      return;
    }
    if (values.has(input.id)) {
      problems.push({ field: `${field}.${i}.id`, rule: "duplicate", message: `The input '${input.id}' is given more than once.` });
      return;
    }
    if (input.value === null || input.value === undefined) {
      if (slot.required === 1 && slot.value !== null)
        problems.push({ field: `${field}.${i}.value`, rule: "required", message: "A required input cannot be cleared." });
      values.set(input.id, null);
      return;
    }
    const checked = checkValue({ format: slot.format as Format, regex: null, regexErrorMessage: null, isMultiselect: false }, input.value);
    if (checked.ok) values.set(input.id, JSON.stringify(checked.value));
    else problems.push({ field: `${field}.${i}.value`, rule: checked.rule, message: checked.message });
  });
  if (problems.length > 0)
    throw new ApiError("ValidationFailed", problems.map((p) => `${p.field}: ${p.message}`).join("; "), { errors: problems });
  return values;
}
