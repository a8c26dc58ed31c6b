/**
 * What an input template may say about the channel its values feed (issue 35, "Inspection feeds the
 * series"): a channel by id, or a channel type resolved on the asset the activity's work item
 * designates, and the unit its values are in. Checked when the template is saved, as far as the
 * template alone can tell (the asset is the work item's, known only when a value is entered: that
 * part is the feed's, src/measurements/feed/reconcile.ts).
 */
import { z } from "@hono/zod-openapi";
import type { Database } from "../../db/statements";
import type { FieldProblem } from "../../pkg/errors";
import { QUANTITIES, unitsOf, type Quantity } from "../catalogue/schema";
import { catalogueRows } from "../catalogue/store";
import { channelsByKeys } from "../channels/store";

/** Formats whose values can be readings. */
export const FEEDING_FORMATS: readonly string[] = ["decimal", "integer"];

export const InputReadingSchema = z
  .object({
    channelId: z.uuid().nullable().openapi({ description: "The channel every activity's value of this input feeds." }),
    channelTypeId: z.uuid().nullable().openapi({
      description: "Or a channel type: the one channel of this type on the asset the activity (else its work item) designates.",
    }),
    unit: z.string().openapi({ description: "The unit the inspector's values are in; the channel must measure in it." }),
  })
  .openapi("InputReading");
export type InputReading = z.infer<typeof InputReadingSchema>;

export const InputReadingInputSchema = z
  .object({
    channelId: z.uuid().nullable().optional(),
    channelTypeId: z.uuid().nullable().optional(),
    unit: z.string().optional().openapi({ description: "Default: the channel's unit, or the channel type's first (GET /ChannelTypes)." }),
  })
  .strict()
  .nullable()
  .default(null)
  .openapi("InputReadingInput", {
    description:
      "Makes the input's values readings (a decimal or integer input): each value an inspector enters becomes a reading of " +
      "the channel, with the activity as its source; changing or clearing the value voids that reading (docs/decisions.md, " +
      "'Inspection feeds the series'). Null: the input feeds nothing.",
  });
export type InputReadingInput = z.infer<typeof InputReadingInputSchema>;

/**
 * Checks the `reading` of each input template and answers what to store (JSON text or null) by
 * position, with a problem per misfit: a format that holds no number, neither or both of a channel and
 * a channel type, one that does not exist, a unit the channel (or every channel of the type) cannot take.
 */
export async function checkInputReadings(
  db: Database,
  items: readonly { format: string; reading: InputReadingInput | undefined }[],
  field: (index: number) => string,
): Promise<{ texts: (string | null)[]; problems: FieldProblem[] }> {
  const problems: FieldProblem[] = [];
  const wanted = items.map((i) => i.reading ?? null);
  const channelIds = wanted.flatMap((r) => (r?.channelId ? [r.channelId] : []));
  const typeIds = wanted.flatMap((r) => (r?.channelTypeId ? [r.channelTypeId] : []));
  if (channelIds.length === 0 && typeIds.length === 0 && wanted.every((r) => r === null))
    return { texts: wanted.map(() => null), problems };
  const [channels, types] = await Promise.all([channelsByKeys(db, channelIds, []), catalogueRows(db, typeIds)]);
  const channelById = new Map(channels.map((c) => [c.row.id, c]));
  const texts = wanted.map((reading, i): string | null => {
    if (reading === null) return null;
    const at = `${field(i)}.reading`;
    const problem = (suffix: string, rule: string, message: string) => {
      problems.push({ field: suffix ? `${at}.${suffix}` : at, rule, message });
      return null;
    };
    if (!FEEDING_FORMATS.includes(items[i]!.format))
      return problem("", "format", `Only a decimal or integer input feeds a channel; this one is ${items[i]!.format}.`);
    const channelId = reading.channelId?.toLowerCase() ?? null;
    const typeId = reading.channelTypeId?.toLowerCase() ?? null;
    if ((channelId === null) === (typeId === null))
      return problem("channelId", "oneOf", "Name either a channel (channelId) or a channel type (channelTypeId), not both.");
    if (channelId !== null) {
      const channel = channelById.get(channelId);
      if (!channel) return problem("channelId", "exists", `Channel ${channelId} does not exist.`);
      const unit = reading.unit ?? channel.row.unit;
      if (unit !== channel.row.unit)
        return problem("unit", "unit", `Channel ${channel.row.channelNumber} measures in ${channel.row.unit}, not ${unit}.`);
      return JSON.stringify({ channelId, channelTypeId: null, unit });
    }
    const type = types.get(typeId!);
    if (!type || type.kind !== "channelType") return problem("channelTypeId", "exists", `Channel type ${typeId} does not exist.`);
    const quantity: Quantity = (QUANTITIES as readonly string[]).includes(type.quantity ?? "") ? (type.quantity as Quantity) : "other";
    const units = unitsOf(quantity);
    const unit = reading.unit ?? units[0]!;
    if (!units.includes(unit)) return problem("unit", "unit", `A ${type.name} channel measures in ${units.join(", ")}, not ${unit}.`);
    return JSON.stringify({ channelId: null, channelTypeId: typeId, unit });
  });
  return { texts, problems };
}

export function parseInputReading(text: string | null): InputReading | null {
  return text === null ? null : (JSON.parse(text) as InputReading);
}
