/** Values the monitors area reads back from its tables, narrowed to the unions its API shows. */

/** `value` as one of `values` (a column the area writes only from that list); anything else is a broken row, not a client's error. */
export function storedEnum<T extends string>(values: readonly T[], value: string, column: string): T {
  const found = values.find((v) => v === value);
  if (found === undefined) throw new Error(`${column} holds '${value}', which is none of ${values.join(", ")}`);
  return found;
}

/** `value` of a column the area always fills for such a row (an alarm's entry or exit names its job); NULL is a broken row. */
export function storedValue<T>(value: T | null, column: string): T {
  if (value === null) throw new Error(`${column} is NULL where the row always has a value`);
  return value;
}
