/**
 * The shapes the query engine shares with its callers: what it needs to know about a property
 * definition, and how it asks for them.
 */

export type PropertyFormat = "text" | "boolean" | "integer" | "decimal" | "date" | "classification" | "entity";

/** What the engine needs from a property definition to type a filter value and pick a column. */
export interface PropertyInfo {
  name: string;
  format: PropertyFormat;
  /** The classification a classification-format property takes its element names from. */
  classificationId?: string | null;
  isMultiselect: boolean;
}

/**
 * Looks up property definitions by name (exact, case-sensitive). Names that are not defined (or not
 * applicable to the list's entity kind) are simply absent from the map; the engine reports them.
 */
export type CatalogLookup = (names: string[]) => Promise<Map<string, PropertyInfo>>;

/** The column of property_values that holds a format's values. */
export function valueColumn(format: PropertyFormat): "value_num" | "value_text" {
  switch (format) {
    case "boolean":
    case "integer":
    case "decimal":
    case "date":
      return "value_num";
    case "text":
    case "classification":
    case "entity":
      return "value_text";
  }
}

/** The catalog of a list whose entities carry no properties: every `properties.` term names nothing. */
export const noProperties: CatalogLookup = async () => new Map();
