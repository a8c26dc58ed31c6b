/** A search request run against an index's Durable Object, as its caller (their permissions and user mark). */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import type { Principal } from "../pkg/auth";
import { ApiError } from "../pkg/errors";
import { planSearch, type SearchRequest, type SearchResult } from "./query";
import { userMark } from "./access";
import { standardIndex } from "./standard";
import { indexStub, mappingOf, type IndexRow } from "./store";

/** Who searches: their permissions (a token's claim cannot pass for someone's user mark) and their own user mark. */
export const searcherOf = (principal: Principal) => ({
  id: principal.id,
  name: principal.name ?? principal.id,
  permissions: [...[...principal.permissions].filter((p) => !p.startsWith("user:")), userMark(principal.id)],
});

export async function runSearch(c: Context<AppEnv>, index: IndexRow, request: SearchRequest, path = "body") {
  const mapping = mappingOf(index);
  if (!mapping) throw new ApiError("Conflict", `Index '${index.name}' has not synchronised yet; it has no fields to search.`);
  const plan = planSearch(mapping, request, path);
  // Every document of a standard index carries its resource's read permission: a caller without it
  // sees none of them (as the resource's own endpoint would refuse them all). Documents a library
  // wrote carry those of the clients it used; the index's Durable Object keeps each caller to theirs.
  const required = standardIndex(index.id)?.source?.permission;
  if (required && !c.get("principal").permissions.has(required)) {
    return {
      index: { id: index.id, name: index.name },
      total: 0,
      skip: plan.skip,
      take: plan.take,
      results: [],
      ...(plan.facets.length > 0 ? { facets: Object.fromEntries(plan.facets.map((f) => [f, []])) } : {}),
    };
  }
  const result = (await indexStub(c.env, index.id).search(plan, mapping, searcherOf(c.get("principal")))) as unknown as Omit<
    SearchResult,
    "index"
  >;
  return { index: { id: index.id, name: index.name }, ...result };
}
