/**
 * The value rules by format (spec 2.1, "Value rules by format"): one checker used for linked values,
 * for the results of value expressions and for the default value of a definition, so all three agree.
 */
import { formatDateValue, parseDateValue } from "../../pkg/query/dates";
import { checkPattern } from "../../pkg/regex";
import { LIMITS, type Format } from "../definitions/rules";

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** An object owner: the value of an entity-format property whose entityType is identity. */
export interface Owner {
  id: string;
  name: string;
}

/** What the checker needs to know about a definition. */
export interface ValueRules {
  format: Format;
  regex: string | null;
  regexErrorMessage: string | null;
  isMultiselect: boolean;
  /** Every element name of the linked classification, nested ones included (classification format). */
  classificationElements?: ReadonlySet<string>;
}

/** Rules a value can break; also the `rule` of the field problem. */
export type ValueRule = "type" | "regex" | "classificationElement" | "duplicate" | "maxLength";

export type ValueCheck = { ok: true; value: JsonValue } | { ok: false; rule: ValueRule; message: string };

const fail = (rule: ValueRule, message: string): ValueCheck => ({ ok: false, rule, message });

/** True for the values that count as "no value": null, and an empty multiselect. */
export function isEmptyValue(value: unknown): boolean {
  return value === null || value === undefined || (Array.isArray(value) && value.length === 0);
}

/**
 * Checks a non-empty value against its definition and returns it in its canonical API form (dates as
 * ISO 8601 UTC, owners reduced to `{id, name}`). Values are not coerced across JSON types: `"12"` is
 * not an integer and `"true"` is not a boolean, so a client bug is reported rather than guessed at.
 */
export function checkValue(rules: ValueRules, value: unknown): ValueCheck {
  switch (rules.format) {
    case "text":
      return checkText(rules, value);
    case "boolean":
      return typeof value === "boolean" ? { ok: true, value } : fail("type", `Expected true or false, got ${describe(value)}.`);
    case "integer":
      return typeof value === "number" && Number.isSafeInteger(value)
        ? { ok: true, value }
        : fail("type", `Expected a whole number between -(2^53-1) and 2^53-1, got ${describe(value)}.`);
    case "decimal":
      return typeof value === "number" && Number.isFinite(value)
        ? { ok: true, value }
        : fail("type", `Expected a number, got ${describe(value)}.`);
    case "date":
      return checkDate(value);
    case "classification":
      return checkClassification(rules, value);
    case "entity":
      return rules.isMultiselect ? checkOwners(value) : checkOwner(value);
  }
}

function checkText(rules: ValueRules, value: unknown): ValueCheck {
  if (typeof value !== "string") return fail("type", `Expected text, got ${describe(value)}.`);
  if (value.length > LIMITS.textValueLength) return fail("maxLength", `Text values are limited to ${LIMITS.textValueLength} characters.`);
  if (rules.regex !== null) {
    // Tested unanchored and without flags, as .NET's Regex.IsMatch does in the original platform (`^`
    // and `$` anchor when the author wants a full match), on RE2 so that no pattern can stall the isolate.
    const pattern = checkPattern(rules.regex, "plain");
    // Only a regex saved before patterns were checked for RE2 can fail here.
    if (!pattern.ok) return fail("regex", `The property's regex cannot be used (${pattern.message}); its definition must be corrected.`);
    if (!pattern.pattern.test(value))
      return fail("regex", rules.regexErrorMessage ?? `The value does not match the pattern ${rules.regex}.`);
  }
  return { ok: true, value };
}

function checkDate(value: unknown): ValueCheck {
  const epoch = typeof value === "string" ? parseDateValue(value) : undefined;
  if (epoch === undefined) {
    return fail("type", `Expected a date with time of day, as MM/dd/yyyy HH:mm[:ss] (UTC) or ISO 8601, got ${describe(value)}.`);
  }
  return { ok: true, value: formatDateValue(epoch) };
}

function checkClassification(rules: ValueRules, value: unknown): ValueCheck {
  if (typeof value !== "string") return fail("type", `Expected the name of a classification element, got ${describe(value)}.`);
  if (!rules.classificationElements?.has(value)) {
    return fail("classificationElement", `'${value}' is not an element of the property's classification.`);
  }
  return { ok: true, value };
}

function asOwner(value: unknown): Owner | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const { id, name } = value as Record<string, unknown>;
  if (typeof id !== "string" || id.trim() === "" || typeof name !== "string") return undefined;
  return { id, name };
}

const OWNER_EXPECTED = "an object owner {id, name} with a non-empty id";

function checkOwner(value: unknown): ValueCheck {
  const owner = asOwner(value);
  return owner ? { ok: true, value: { ...owner } } : fail("type", `Expected ${OWNER_EXPECTED}, got ${describe(value)}.`);
}

function checkOwners(value: unknown): ValueCheck {
  if (!Array.isArray(value))
    return fail("type", `Expected an array of object owners (the property is multiselect), got ${describe(value)}.`);
  if (value.length > LIMITS.multiselectItems) return fail("maxLength", `At most ${LIMITS.multiselectItems} owners can be selected.`);
  const owners: JsonValue[] = [];
  const seen = new Set<string>();
  for (const [index, item] of value.entries()) {
    const owner = asOwner(item);
    if (!owner) return fail("type", `Item ${index} is not ${OWNER_EXPECTED}.`);
    if (seen.has(owner.id)) return fail("duplicate", `Owner ${owner.id} is selected twice.`);
    seen.add(owner.id);
    owners.push({ ...owner });
  }
  return { ok: true, value: owners };
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `text '${value.length > 40 ? `${value.slice(0, 39)}…` : value}'`;
  if (typeof value === "number") return `the number ${value}`;
  return typeof value === "object" ? "an object" : `${typeof value} ${String(value)}`;
}
