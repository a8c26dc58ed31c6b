/** The asset catalogue's shapes (organizations, plants, main systems, equipment, design objects). */
import { z } from "@hono/zod-openapi";
import { updateBodyOf } from "../pkg/resource";
import { MetadataSchema } from "../properties/entity-types/schema";
import { ASSET_KINDS, type AssetKind } from "./designations";

/**
 * Which kinds may be an asset's parent. An empty list: no parent allowed; `optional` says whether
 * the asset may also have none.
 */
export const PARENT_RULES: Readonly<Record<AssetKind, { parents: readonly AssetKind[]; optional: boolean }>> = {
  organization: { parents: [], optional: true },
  plant: { parents: ["organization"], optional: true },
  mainSystem: { parents: ["plant"], optional: false },
  equipment: { parents: ["mainSystem", "plant"], optional: false },
  designObject: { parents: ["plant", "mainSystem"], optional: false },
};

const AssetLinkSchema = z.object({ id: z.uuid(), kind: z.enum(ASSET_KINDS), name: z.string() }).openapi("AssetLink");

export const AssetSchema = z
  .object({
    id: z.uuid(),
    kind: z.enum(ASSET_KINDS),
    name: z.string(),
    parentId: z.uuid().nullable(),
    parent: AssetLinkSchema.nullable().openapi({ description: "The parent asset; null for an organization or a plant without one." }),
    plant: z
      .object({ id: z.uuid(), name: z.string() })
      .nullable()
      .openapi({ description: "The plant the asset belongs to (itself for a plant; null for an organization)." }),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("Asset");

export type Asset = z.infer<typeof AssetSchema>;

const fields = {
  kind: z.enum(ASSET_KINDS).openapi({ description: "Cannot be changed after creation." }),
  name: z.string().trim().min(1).max(200).openapi({ description: "Plant names are unique (case-insensitive)." }),
  parentId: z
    .uuid()
    .nullable()
    .default(null)
    .openapi({
      description:
        "The parent asset; cannot be changed. organization: none; plant: an organization or none; mainSystem: a plant; " +
        "equipment: a main system or a plant; designObject: a plant or a main system.",
    }),
  metadata: MetadataSchema,
};

export const CreateAssetSchema = z.object(fields).strict().openapi("CreateAsset");
export const UpdateAssetSchema = updateBodyOf(
  AssetSchema,
  {
    ...fields,
    parentId: z.uuid().nullable().optional().openapi({ description: "Cannot be changed; when absent the current parent is kept." }),
  },
  "UpdateAsset",
  { parent: "parentId counts" },
);

export type AssetInput = z.infer<typeof CreateAssetSchema>;
export type AssetUpdate = z.infer<typeof UpdateAssetSchema>;
