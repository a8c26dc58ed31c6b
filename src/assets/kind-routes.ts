/**
 * The asset catalogue under the original product's paths, one per kind (its client's Plant,
 * MainSystem, Equipment and Organization objects call `plants`, `mainsystems`, `equipment` and
 * `organizations`; paths match without regard to case). Each path is the catalogue narrowed to its
 * kind: lists as `/Assets?kinds=...`, and an id of another kind is a 404 on every method, as if the
 * asset were not there. Writes create and change assets of the path's kind; `kind` may be left out
 * of their bodies.
 */
import type { Database } from "../db/statements";
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { writeContext } from "../pkg/db";
import { ApiError } from "../pkg/errors";
import { jsonWithEtag } from "../pkg/etag";
import { defineRoute, IdParam, IfMatchHeader, json, withTotalCount, answerPage } from "../pkg/openapi";
import { PERMISSIONS } from "../pkg/permissions";
import type { AssetKind } from "./designations";
import { AssetListQuery, listAssets } from "./list";
import { AssetSchema, CreateAssetSchema, UpdateAssetSchema, type Asset } from "./schema";
import { createAsset, deleteAsset, getAsset, updateAsset } from "./store";

const tags = ["Assets"];
const read = { permission: PERMISSIONS.assetsRead, area: "workManagement" } as const;
const write = { permission: PERMISSIONS.assetsWrite, area: "workManagement" } as const;

/**
 * The paths of each kind: the original client's plural first, then the singular spellings this
 * service answered before (kept, so integrations written against them go on working).
 */
export const KIND_PATHS: readonly { kind: AssetKind; paths: readonly string[]; component: string }[] = [
  { kind: "plant", paths: ["Plants"], component: "Plant" },
  { kind: "mainSystem", paths: ["MainSystems", "MainSystem"], component: "MainSystem" },
  { kind: "equipment", paths: ["Equipment"], component: "Equipment" },
  { kind: "organization", paths: ["Organizations", "Organization"], component: "Organization" },
];

const { kinds: _kinds, ...kindQueryShape } = AssetListQuery.shape;
const KindListQuery = z.object(kindQueryShape);

/** A body without `kind` is one of the path's kind; a body naming another kind is refused by the schema's own rules. */
const withKind = (kind: AssetKind) => (body: unknown) =>
  body !== null && typeof body === "object" && !Array.isArray(body) && (body as { kind?: unknown }).kind === undefined
    ? { ...body, kind }
    : body;

/** The asset, when it is of `kind`; another kind is a 404 like an unknown id. */
async function assetOfKind(db: Database, id: string, kind: AssetKind): Promise<{ value: Asset; etag: string }> {
  const found = await getAsset(db, id);
  if (found.value.kind !== kind) throw new ApiError("NotFound", `Asset ${found.value.id} is a ${found.value.kind}, not a ${kind}.`);
  return found;
}

export function kindRoutes(app: OpenAPIHono<AppEnv>): void {
  for (const { kind, paths, component } of KIND_PATHS) {
    const Schema = AssetSchema.openapi(component);
    const CreateBody = z.preprocess(withKind(kind), CreateAssetSchema);
    const UpdateBody = z.preprocess(withKind(kind), UpdateAssetSchema);
    for (const [index, name] of paths.entries()) {
      const path = `/${name}`;
      const also = index === 0 ? "" : ` (also /${paths[0]})`;
      // The singular spellings' operationIds end in "Alias" (GET /MainSystem: listMainSystemAlias).
      const alias = index === 0 ? {} : { operationIdSuffix: "Alias" };
      app.openapi(
        defineRoute(
          { ...read, ...alias },
          {
            method: "get",
            path,
            tags,
            summary: `List assets of kind ${kind}${also}`,
            description: `The original product's path; the same as GET /Assets?kinds=${kind}.`,
            request: { query: KindListQuery },
            responses: {
              200: withTotalCount(json(z.array(Schema), `One page of ${kind} assets.`)),
            },
          },
        ),
        async (c) => answerPage(c, await listAssets(c.env.DB, { ...c.req.valid("query"), kinds: kind })),
      );
      app.openapi(
        defineRoute(
          { ...read, ...alias, errors: [404] },
          {
            method: "get",
            path: `${path}/{id}`,
            tags,
            summary: `Get an asset of kind ${kind}${also}`,
            description: "An asset of another kind is a 404.",
            request: { params: IdParam },
            responses: { 200: json(Schema, "The asset, with its ETag."), 304: { description: "Not modified (If-None-Match)." } },
          },
        ),
        async (c) => {
          const found = await assetOfKind(c.env.DB, c.req.valid("param").id, kind);
          return jsonWithEtag(c, found.value, found.etag);
        },
      );
      app.openapi(
        defineRoute(
          { ...write, ...alias },
          {
            method: "post",
            path,
            tags,
            summary: `Create an asset of kind ${kind}${also}`,
            description:
              `The same as POST /Assets with kind ${kind}; \`kind\` may be left out (another kind is a 400). Parent rules as ` +
              `for POST /Assets.`,
            request: { body: { required: true, content: { "application/json": { schema: CreateBody } } } },
            responses: { 201: json(Schema, "The created asset.") },
          },
        ),
        async (c) => {
          const body = c.req.valid("json");
          if (body.kind !== kind) throw kindMismatch(kind, body.kind);
          const created = await createAsset(writeContext(c), body);
          c.header("location", `${path}/${created.value.id}`);
          return jsonWithEtag(c, created.value, created.etag, 201);
        },
      );
      app.openapi(
        defineRoute(
          { ...write, ...alias, errors: [404, 409, 412] },
          {
            method: "put",
            path,
            tags,
            summary: `Replace an asset of kind ${kind} (the id is in the body)${also}`,
            description:
              `The same as PUT /Assets for an asset of kind ${kind}; an id of another kind is a 404. \`kind\` may be left ` +
              `out; kind and parent cannot change.`,
            request: { headers: IfMatchHeader, body: { required: true, content: { "application/json": { schema: UpdateBody } } } },
            responses: { 200: json(Schema, "The updated asset.") },
          },
        ),
        async (c) => {
          const body = c.req.valid("json");
          await assetOfKind(c.env.DB, body.id, kind);
          const updated = await updateAsset(writeContext(c), body);
          return jsonWithEtag(c, updated.value, updated.etag);
        },
      );
      app.openapi(
        defineRoute(
          { ...write, ...alias, errors: [404, 409, 412] },
          {
            method: "delete",
            path: `${path}/{id}`,
            tags,
            summary: `Delete an asset of kind ${kind} that nothing uses${also}`,
            description: "As DELETE /Assets/{id}; an asset of another kind is a 404.",
            request: { params: IdParam, headers: IfMatchHeader },
            responses: { 204: { description: "Deleted." } },
          },
        ),
        async (c) => {
          const { id } = c.req.valid("param");
          await assetOfKind(c.env.DB, id, kind);
          await deleteAsset(writeContext(c), id);
          return c.body(null, 204);
        },
      );
      if (kind === "mainSystem") designObjectsRoute(app, path, also);
    }
  }
}

function kindMismatch(kind: AssetKind, given: string): ApiError {
  const message = `This path creates assets of kind ${kind}, not ${given} (POST /Assets creates any kind).`;
  return new ApiError("ValidationFailed", `body.kind: ${message}`, { errors: [{ field: "body.kind", rule: "assetKind", message }] });
}

const DesignObjectSchema = AssetSchema.openapi("DesignObject");

/** `GET {mainsystems}/{id}/DesignObjects`: the design objects of a main system (its client's get_design_objects). */
function designObjectsRoute(app: OpenAPIHono<AppEnv>, path: string, also: string): void {
  app.openapi(
    defineRoute(
      { ...read, errors: [404], operationIdSuffix: also ? "Alias" : "" },
      {
        method: "get",
        path: `${path}/{id}/DesignObjects`,
        tags,
        summary: `The design objects of a main system${also ? " (also /MainSystems/{id}/DesignObjects)" : ""}`,
        description:
          "Its child assets of kind designObject, as GET /Assets?kinds=designObject&parentIds={id}. An id that is not a " +
          "main system is a 404.",
        request: { params: IdParam, query: KindListQuery.omit({ parentIds: true }) },
        responses: {
          200: withTotalCount(json(z.array(DesignObjectSchema), "One page of the main system's design objects.")),
        },
      },
    ),
    async (c) => {
      const { id } = c.req.valid("param");
      const mainSystem = await assetOfKind(c.env.DB, id, "mainSystem");
      return answerPage(
        c,
        await listAssets(c.env.DB, {
          ...c.req.valid("query"),
          kinds: "designObject",
          parentIds: mainSystem.value.id,
        }),
      );
    },
  );
}
