// A typed client generated from the OpenAPI document, as the README shows it ("A typed client"):
//   npx openapi-typescript http://127.0.0.1:8787/openapi.json --default-non-nullable false -o api.d.ts
// The smoke run (scripts/check-client.mjs) generates api.d.ts beside a copy of this file from the
// running server's document, type-checks both, and runs this against that server.
import createClient from "openapi-fetch";
import type { paths } from "./api";

/** Creates a deviation and reads it back, through the generated types. */
export async function createAndReadDeviation(baseUrl: string, token: string) {
  const api = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });

  const created = await api.POST("/Deviations", {
    body: { description: "Corrosion under insulation near the pump" },
    params: { header: { "Idempotency-Key": `create-deviation-${crypto.randomUUID()}` } },
  });
  if (!created.data) throw new Error(`POST /Deviations answered ${created.response.status}: ${JSON.stringify(created.error)}`);

  const read = await api.GET("/Deviations/{id}", { params: { path: { id: created.data.id } } });
  if (!read.data) throw new Error(`GET /Deviations/{id} answered ${read.response.status}: ${JSON.stringify(read.error)}`);

  // Typed: the deviation's own fields (a misspelt one is a compile error).
  const { id, referenceId, description, status } = read.data;
  return { id, referenceId, description, status, etag: read.response.headers.get("etag") };
}
