// A typed client generated from the OpenAPI document, as the README shows it ("A typed client"):
//   npx openapi-typescript http://127.0.0.1:8787/openapi.json --default-non-nullable false -o api.d.ts
// `npm start` in this folder does that and runs main.ts; the smoke run (scripts/check-client.mjs)
// generates api.d.ts beside a copy of this file from its server's document, type-checks it, checks that
// wrong calls do not compile, and runs it against that server.
import createClient from "openapi-fetch";
import type { components, paths } from "./api.js";

/** A new deviation's body, as the API takes it. */
type NewDeviation = components["schemas"]["CreateDeviation"];

/** Creates a deviation and reads it back, through the generated types. */
export async function createAndReadDeviation(baseUrl: string, token: string) {
  const api = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });

  const created = await api.POST("/Deviations", {
    // `satisfies` makes TypeScript check the literal's keys: openapi-fetch infers the body from the call,
    // and an inferred object literal is not checked for keys it should not have (a misspelt one compiles).
    body: { description: "Corrosion under insulation near the pump" } satisfies NewDeviation,
    params: { header: { "Idempotency-Key": `create-deviation-${crypto.randomUUID()}` } },
  });
  if (!created.data) throw new Error(`POST /Deviations answered ${created.response.status}: ${JSON.stringify(created.error)}`);

  const read = await api.GET("/Deviations/{id}", { params: { path: { id: created.data.id } } });
  if (!read.data) throw new Error(`GET /Deviations/{id} answered ${read.response.status}: ${JSON.stringify(read.error)}`);

  // Typed: the deviation's own fields (a misspelt one is a compile error).
  const { id, referenceId, description, status } = read.data;
  return { id, referenceId, description, status, etag: read.response.headers.get("etag") };
}
