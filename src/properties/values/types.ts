import type { Format } from "../definitions/rules";
import type { JsonValue, ValueRules } from "./format";

/** A linked property as the API reads and writes it on an entity. */
export interface LinkedProperty {
  name: string;
  value: JsonValue;
}

/** A property definition as value resolution needs it, in the order the entity type links it. */
export interface LinkedDefinition extends ValueRules {
  id: string;
  name: string;
  applicationRule: string;
  classificationId: string | null;
  required: boolean;
  /** In its canonical API form (validated when the definition was saved). */
  defaultValue: JsonValue;
  valueExpression: string | null;
}

/** A resolved value with what storing it needs: the definition id and how to type its columns. */
export interface ResolvedProperty extends LinkedProperty {
  definitionId: string;
  format: Format;
  isMultiselect: boolean;
}
