/** The index as routes answer it, and the body of PUT /Indices. */
import { z } from "@hono/zod-openapi";
import { updateBodyOf } from "../pkg/resource";

export const Owner = z.object({ id: z.string().min(1).max(200), name: z.string().max(200).nullable().optional() });
export const SyncSchema = z
  .object({
    syncId: z.string(),
    status: z.string(),
    message: z.string(),
    documents: z.number().int(),
    reason: z.string(),
    startedAt: z.string(),
    endedAt: z.string(),
  })
  .openapi("IndexSynchronization");
export const FieldSchema = z.object({
  type: z.string(),
  displayName: z.string(),
  alwaysShow: z.boolean().optional(),
  isIdentity: z.boolean().optional(),
});
export const IndexSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    displayName: z.string(),
    description: z.string().nullable(),
    objectOwner: z.object({ id: z.string(), name: z.string().nullable() }),
    triggerSchedule: z.string().nullable(),
    type: z.enum(["standard", "custom"]),
    source: z
      .enum(["platform", "library"])
      .openapi({ description: "platform: built from this service's data and its events; library: fed by a library file." }),
    status: z.string().openapi({
      description:
        "Pending (never synchronised), Synchronizing, Ready or Failed (the last synchronisation failed; the previous documents stay).",
    }),
    documentCount: z.number().int(),
    lastSynchronization: SyncSchema.nullable(),
    nextSynchronizationAt: z
      .string()
      .nullable()
      .openapi({ description: "When the next scheduled synchronisation is due (custom: triggerSchedule, UTC; standard: daily)." }),
    libraryFileName: z.string().nullable(),
    mapping: z.record(z.string(), FieldSchema).nullable(),
    createdDate: z.string(),
    modifiedDate: z.string(),
  })
  .openapi("Index");

export const UpdateIndexSchema = updateBodyOf(
  IndexSchema,
  {
    name: z.string().trim().min(1).max(100),
    displayName: z.string().trim().min(1).max(200),
    objectOwner: Owner,
    triggerSchedule: z.string().max(100).nullable().optional(),
    type: z.enum(["standard", "custom"]),
  },
  "UpdateIndex",
);
