// The baseline of bench A: the least a Worker can do to answer "GET one row by id" from the same D1
// database: no router, no authentication, no validation, no logging; one prepared SELECT and JSON.
// The full Worker's throughput is reported as a ratio of this one's.

/** Resource path segment -> table. Fixed strings only: nothing from the request reaches the SQL text. */
const TABLES = {
  PropertyDefinitions: "property_definitions",
  // Fallback target of bench A while GET /PropertyDefinitions/{id} does not exist yet.
  Categories: "categories",
};

export default {
  async fetch(request, env) {
    const [, resource, id, extra] = new URL(request.url).pathname.split("/");
    const table = Object.hasOwn(TABLES, resource) ? TABLES[resource] : undefined;
    if (request.method !== "GET" || !table || !id || extra !== undefined) return new Response("not found", { status: 404 });
    const row = await env.DB.prepare(`SELECT * FROM ${table} WHERE id = ?1`).bind(id).first();
    if (!row) return new Response("not found", { status: 404 });
    return Response.json(row);
  },
};
