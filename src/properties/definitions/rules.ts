/**
 * The closed vocabularies of property definitions (spec 2.1) and the limits this API sets where the
 * interface names none. One place, so the schemas, the validators and the docs agree.
 */

/** Formats of a property definition; the value rules of the interface also name `entity`. */
export const FORMATS = ["text", "boolean", "integer", "decimal", "date", "classification", "entity"] as const;
export type Format = (typeof FORMATS)[number];

export const UNITS = [
  "ampere",
  "candela",
  "kelvin",
  "kilogram",
  "metre",
  "mole",
  "second",
  "centimetre",
  "gram",
  "kilowatt",
  "megawatt",
  "litre",
  "cubicMetre",
  "coulomb",
  "radian",
] as const;
export type Unit = (typeof UNITS)[number];

/**
 * The entity kinds a definition can be linked to. The interface shows only `Deviation` and
 * `deviationType` ("the list is defined per microservice"); the rest are the kinds of this API that
 * carry properties. Spelled as the material spells them (note the casing of `deviationType`).
 */
export const APPLICATION_RULES = [
  "Deviation",
  "deviationType",
  "WorkItem",
  "WorkTemplate",
  "Activity",
  "ActivityTemplate",
  "Model",
  "Monitor",
  "File",
  "Asset",
] as const;
export type ApplicationRule = (typeof APPLICATION_RULES)[number];

/**
 * The interface's material also spells the rule `deviatioType`; it is accepted on input and stored
 * (and returned) as `deviationType`, so clients of the old spelling keep working.
 */
export const APPLICATION_RULE_ALIASES: Readonly<Record<string, ApplicationRule>> = { deviatioType: "deviationType" };

/** Every spelling accepted on input. */
export const APPLICATION_RULE_INPUTS = [...APPLICATION_RULES, ...Object.keys(APPLICATION_RULE_ALIASES)] as [string, ...string[]];

export function normaliseApplicationRule(rule: string): ApplicationRule | undefined {
  if ((APPLICATION_RULES as readonly string[]).includes(rule)) return rule as ApplicationRule;
  return APPLICATION_RULE_ALIASES[rule];
}

/** Entity kinds an entity-format property can point at. Only object owners (identities) exist. */
export const ENTITY_TYPES = ["identity"] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

/** Formats whose values carry a unit. */
export const NUMERIC_FORMATS: readonly Format[] = ["integer", "decimal"];

export const LIMITS = {
  nameLength: 100,
  regexLength: 500,
  regexErrorMessageLength: 500,
  /** Bytes of UTF-8. */
  valueExpressionBytes: 10 * 1024,
  instructionLength: 10_000,
  /** Characters of one text value; bounds the work a regex match can do. */
  textValueLength: 10_000,
  /** Owners in one multiselect entity value. */
  multiselectItems: 500,
} as const;

/**
 * Property names are referenced by bare name in value expressions and in the `properties` filter and
 * `order` syntax (space-separated terms, dots for classification element fields), so a name is a
 * JavaScript identifier without `$`: a letter or `_`, then letters, digits or `_`.
 */
export const NAME_PATTERN = /^[\p{L}_][\p{L}\p{N}_]*$/u;

/** Words that cannot name a variable in an expression (`properties` is the sandbox's object of all values). */
export const RESERVED_NAMES: ReadonlySet<string> = new Set(
  (
    "break case catch class const continue debugger default delete do else enum export extends false finally for function if " +
    "import in instanceof new null return super switch this throw true try typeof var void while with yield let static " +
    "implements interface package private protected public await arguments eval undefined NaN Infinity properties"
  ).split(" "),
);
