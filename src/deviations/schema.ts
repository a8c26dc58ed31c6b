/** Deviations (spec 2.3): shapes read and written by /Deviations. */
import { z } from "@hono/zod-openapi";
import { updateBodyOf } from "../pkg/resource";
import { AssetRefInputSchema, AssetRefSchema } from "../assets/designations";
import { PersonSchema, StatusSchema } from "../work/common";
import { MetadataSchema } from "../properties/entity-types/schema";
import { DEFAULT_ENTITY_TYPE_ID } from "../properties/entity-types/schema";

/** Most relationships one deviation has. */
export const MAX_RELATIONSHIPS = 200;

export const RiskSchema = z
  .object({
    id: z.string().trim().min(1).max(200).openapi({ description: "The risk's id in the risk service (free reference, not validated)." }),
    name: z.string().trim().max(500).nullable().default(null),
  })
  .strict()
  .openapi("RiskReference");

export const AssetReferenceSchema = z
  .object({
    mainSystem: AssetRefSchema.nullable(),
    designObject: AssetRefSchema.nullable(),
    equipment: AssetRefSchema.nullable(),
    plant: z
      .object({ id: z.uuid(), name: z.string() })
      .nullable()
      .openapi({ description: "Derived from the designated assets; read-only." }),
  })
  .openapi("DeviationAssetReference");

/**
 * Where a deviation comes from (spec 1.1: "found during inspection or by monitoring"): `inspection`
 * for one made through the API, `monitoring` for one a monitor's alarm raised (issue 25), with the
 * monitor, the controller, the monitor job and the alarm, and `measurement` for one a channel's alarm
 * raised (issue 35), with the channel, the controller and the batch of readings. Read-only.
 */
export const DeviationOriginSchema = z
  .object({
    kind: z.enum(["inspection", "monitoring", "measurement"]),
    monitor: z.object({ id: z.uuid(), monitorId: z.string(), name: z.string() }).nullable(),
    channel: z.object({ id: z.uuid(), channelNumber: z.number().int(), name: z.string() }).nullable(),
    controller: z.string().nullable(),
    monitorJobId: z.uuid().nullable(),
    readingsBatchId: z.uuid().nullable(),
    alarmId: z.uuid().nullable(),
  })
  .openapi("DeviationOrigin", {
    description:
      "inspection: made through the API; monitoring: raised by a monitor's alarm (the monitor, controller, monitor " +
      "job and alarm); measurement: raised by a channel's alarm (the channel, controller, batch of readings and alarm). Read-only.",
  });
export type DeviationOrigin = z.infer<typeof DeviationOriginSchema>;
export const INSPECTION_ORIGIN: DeviationOrigin = {
  kind: "inspection",
  monitor: null,
  channel: null,
  controller: null,
  monitorJobId: null,
  readingsBatchId: null,
  alarmId: null,
};

export const DeviationSchema = z
  .object({
    id: z.uuid(),
    referenceId: z.string(),
    description: z.string().nullable(),
    status: z.string(),
    type: z.object({ id: z.uuid(), name: z.string() }),
    objectOwner: z.object({ id: z.string(), name: z.string().nullable() }),
    risk: z.object({ id: z.string(), name: z.string().nullable() }).nullable(),
    assetReference: AssetReferenceSchema,
    properties: z
      .array(z.object({ name: z.string(), value: z.unknown() }))
      .openapi({ description: "Every Deviation property linked to the type, in link order." }),
    relationships: z.array(z.object({ id: z.uuid(), referenceId: z.string() })).openapi({ description: "Related deviations (symmetric)." }),
    workItemIds: z
      .array(z.uuid())
      .openapi({ description: "Linked work items; read-only (link with POST /Deviations/{id}/WorkItems/{workItemId})." }),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    origin: DeviationOriginSchema,
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("Deviation");

export type Deviation = z.infer<typeof DeviationSchema>;

const ref = AssetRefInputSchema.nullable().default(null);

const AssetReferenceInputSchema = z
  .object({
    mainSystem: ref,
    designObject: ref,
    equipment: ref,
    plant: z.unknown().optional().openapi({ description: "Read-only; ignored (derived)." }),
  })
  .strict()
  .openapi("DeviationAssetReferenceInput");

const RelationshipInput = z
  .object({ id: z.uuid(), referenceId: z.string().optional().openapi({ description: "Read-only; ignored." }) })
  .strict();

const fields = {
  referenceId: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .optional()
    .openapi({
      description:
        "Unique (case-insensitive). On create, when absent: DEV- and the first 8 hex digits of the id, upper-case. On " +
        "PUT, when absent: kept.",
    }),
  description: z.string().max(10_000).nullable().default(null),
  status: StatusSchema.default("new"),
  typeId: z
    .uuid()
    .optional()
    .openapi({
      description:
        `A deviation type (GET /DeviationTypes). Default on create: General (${DEFAULT_ENTITY_TYPE_ID}); on PUT, when ` + `absent: kept.`,
    }),
  objectOwner: PersonSchema.nullable().optional().openapi({ description: "Default on create: the caller; on PUT, when absent: kept." }),
  risk: RiskSchema.nullable().default(null),
  assetReference: AssetReferenceInputSchema.default({ mainSystem: null, designObject: null, equipment: null }),
  properties: z
    .array(z.object({ name: z.string().min(1).max(100), value: z.unknown().optional() }).strict())
    .max(200)
    .default([])
    .openapi({ description: "Values of the Deviation properties linked to the type: [{name, value}]." }),
  relationships: z
    .array(RelationshipInput)
    .max(MAX_RELATIONSHIPS)
    .default([])
    .openapi({
      description:
        `Related deviations by id (symmetric: the other side lists this one too); no self-links, no duplicates; at most ` +
        `${MAX_RELATIONSHIPS}.`,
    }),
  metadata: MetadataSchema,
};

export const CreateDeviationSchema = z.object(fields).strict().openapi("CreateDeviation");
export const UpdateDeviationSchema = updateBodyOf(DeviationSchema, fields, "UpdateDeviation", {
  type: "typeId counts",
  origin: "set when the deviation is made",
});

export type DeviationInput = z.infer<typeof CreateDeviationSchema>;
export type DeviationUpdate = z.infer<typeof UpdateDeviationSchema>;
