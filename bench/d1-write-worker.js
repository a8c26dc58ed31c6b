// D1's own write rate for docs/scale.md (bench/lib/scale.mjs): inserts in a loop inside workerd, so
// no HTTP or proxy round trip is counted, for `seconds`, one statement per call (`batch=1`) or
// `batch` statements per db.batch(). Rows of 400 bytes with one secondary index, about a deviation
// row. Answers the rows written and the time it took.
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const seconds = Math.min(Number(url.searchParams.get("seconds") ?? 5), 60);
    const batch = Math.max(1, Math.min(Number(url.searchParams.get("batch") ?? 1), 100));
    await env.DB.batch([
      env.DB.prepare("CREATE TABLE IF NOT EXISTS probe (id INTEGER PRIMARY KEY, entity_id TEXT NOT NULL, payload TEXT NOT NULL)"),
      env.DB.prepare("CREATE INDEX IF NOT EXISTS probe_entity ON probe (entity_id)"),
    ]);
    const payload = "x".repeat(400);
    const insert = () => env.DB.prepare("INSERT INTO probe (entity_id, payload) VALUES (?1, ?2)").bind(crypto.randomUUID(), payload);
    let rows = 0;
    const started = Date.now();
    while (Date.now() - started < seconds * 1000) {
      if (batch === 1) await insert().run();
      else await env.DB.batch(Array.from({ length: batch }, insert));
      rows += batch;
    }
    return Response.json({ rows, seconds: (Date.now() - started) / 1000 });
  },
};
