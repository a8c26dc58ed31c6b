/**
 * The cross-field rules of a property definition (spec 2.1). Every broken rule is reported at once,
 * each naming its field (`body.unit`) and rule (`required`, `notAllowed`, `exclusive`, ...).
 */
import type { Database } from "../../db/statements";
import { ApiError, type FieldProblem } from "../../pkg/errors";
import { checkPattern } from "../../pkg/regex";
import { expressionShapeProblem, expressionSyntaxError } from "../values/expressions";
import { checkValue, isEmptyValue, type JsonValue } from "../values/format";
import { classificationElementNames } from "../values/store";
import {
  NAME_PATTERN,
  NUMERIC_FORMATS,
  RESERVED_NAMES,
  normaliseApplicationRule,
  type ApplicationRule,
  type EntityType,
  type Format,
  type Unit,
} from "./rules";
import type { CreatePropertyDefinition } from "./schema";
import { findCategoryRef, findClassificationRef } from "./store";

/** A definition's stored fields, after validation and normalisation. */
export interface DefinitionFields {
  name: string;
  format: Format;
  regex: string | null;
  regexErrorMessage: string | null;
  unit: Unit | null;
  classification: { id: string; name: string } | null;
  entityType: EntityType | null;
  isMultiselect: boolean;
  applicationRule: ApplicationRule;
  required: boolean;
  defaultValue: JsonValue;
  valueExpression: string | null;
  instruction: string | null;
  metadata: Record<string, unknown> | null;
  category: { id: string; name: string };
}

const blankToNull = (text: string | null | undefined) => (text === undefined || text === null || text === "" ? null : text);

/**
 * Validates a create or update body and returns the fields to store, or throws a 400 listing every
 * problem. On update, `currentName` is the stored name, which cannot change.
 */
export async function validateDefinition(db: Database, input: CreatePropertyDefinition, currentName?: string): Promise<DefinitionFields> {
  const problems: FieldProblem[] = [];
  const problem = (field: string, rule: string, message: string) => problems.push({ field: `body.${field}`, rule, message });
  const { format } = input;
  const fields: DefinitionFields = {
    name: input.name,
    format,
    regex: blankToNull(input.regex),
    regexErrorMessage: blankToNull(input.regexErrorMessage),
    unit: input.unit ?? null,
    classification: null,
    entityType: input.entityType ?? null,
    isMultiselect: input.isMultiselect ?? false,
    // The schema admits only known spellings, so normalising cannot fail.
    applicationRule: normaliseApplicationRule(input.applicationRule) as ApplicationRule,
    required: input.required ?? false,
    defaultValue: input.defaultValue === undefined || isEmptyValue(input.defaultValue) ? null : (input.defaultValue as JsonValue),
    valueExpression: blankToNull(input.valueExpression),
    instruction: input.instruction ?? null,
    metadata: input.metadata ?? null,
    category: { id: "", name: "" },
  };
  const classificationId = input.classification?.id ?? null;

  if (currentName !== undefined && fields.name !== currentName) {
    problem("name", "immutable", `The name of a property definition cannot be changed (it is '${currentName}').`);
  } else if (!NAME_PATTERN.test(fields.name)) {
    problem(
      "name",
      "pattern",
      "A name starts with a letter or _ and holds only letters, digits and _ (expressions and filters refer to it).",
    );
  } else if (RESERVED_NAMES.has(fields.name)) {
    problem("name", "reserved", `'${fields.name}' is a reserved word of JavaScript and cannot name a property.`);
  }

  let regexUsable = false;
  if (format !== "text") {
    const why = format === "classification" ? "A classification-format property cannot have" : "Only text properties can have";
    if (fields.regex !== null) problem("regex", "notAllowed", `${why} a regex.`);
    if (fields.regexErrorMessage !== null) problem("regexErrorMessage", "notAllowed", `${why} a regexErrorMessage.`);
  } else if (fields.regex !== null) {
    // Compiled for RE2 (linear time); what RE2 lacks (backreferences, lookaround) is refused by name.
    const checked = checkPattern(fields.regex, "plain");
    if (checked.ok) regexUsable = true;
    else problem("regex", checked.rule, `The regex cannot be used. ${checked.message}`);
  } else if (fields.regexErrorMessage !== null) {
    problem("regexErrorMessage", "notAllowed", "A regexErrorMessage needs a regex.");
  }

  if (NUMERIC_FORMATS.includes(format)) {
    if (fields.unit === null) problem("unit", "required", `A unit is required for the ${format} format.`);
  } else if (fields.unit !== null) {
    problem("unit", "notAllowed", "Only integer and decimal properties have a unit.");
  }

  let elements: ReadonlySet<string> | undefined;
  if (format === "classification") {
    fields.classification = classificationId === null ? null : await findClassificationRef(db, classificationId);
    if (classificationId === null) problem("classification", "required", "A classification is required for the classification format.");
    else if (!fields.classification) problem("classification.id", "exists", `Classification ${classificationId} does not exist.`);
    else elements = (await classificationElementNames(db, [classificationId])).get(classificationId);
  } else if (classificationId !== null) {
    problem("classification", "notAllowed", "Only classification properties have a classification.");
  }

  if (format === "entity") {
    if (fields.entityType === null)
      problem("entityType", "required", "An entityType is required for the entity format (identity: object owners).");
  } else {
    if (fields.entityType !== null) problem("entityType", "notAllowed", "Only entity properties have an entityType.");
    if (fields.isMultiselect) problem("isMultiselect", "notAllowed", "Only entity properties can be multiselect.");
  }

  if (fields.required && fields.defaultValue !== null) {
    const message = "A definition cannot have a default value and required = true together.";
    problem("required", "exclusive", message);
    problem("defaultValue", "exclusive", message);
  } else if (fields.defaultValue !== null && (format !== "text" || fields.regex === null || regexUsable)) {
    const checked = checkValue(
      {
        format,
        regex: regexUsable ? fields.regex : null,
        regexErrorMessage: fields.regexErrorMessage,
        isMultiselect: fields.isMultiselect,
        classificationElements: elements,
      },
      fields.defaultValue,
    );
    // A classification default is checked only when the classification was found (reported above otherwise).
    if (checked.ok) fields.defaultValue = checked.value;
    else if (format !== "classification" || elements) problem("defaultValue", checked.rule, checked.message);
  }

  if (fields.valueExpression !== null) {
    const shape = expressionShapeProblem(fields.valueExpression);
    const syntax = shape ? undefined : await expressionSyntaxError(fields.valueExpression);
    if (shape) problem("valueExpression", shape.rule, shape.message);
    else if (syntax) problem("valueExpression", "syntax", `The valueExpression does not parse: ${syntax}`);
  }

  const categoryId = input.category?.id ?? null;
  const category = await findCategoryRef(db, categoryId);
  if (category) fields.category = category;
  else problem("category.id", "exists", `Category ${categoryId} does not exist.`);

  if (problems.length > 0) {
    throw new ApiError("ValidationFailed", problems.map((p) => `${p.field}: ${p.message}`).join("; "), { errors: problems });
  }
  return fields;
}
