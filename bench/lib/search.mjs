// Search bench (issue 10): platform-deviations over 10,000 and 100,000 deviations in one Miniflare.
// 1. Seeds deviations in D1 (descriptions of 6 words drawn from 3,000 pseudo-words, skewed like natural
//    text: the index is the product of three uniform draws, so low-numbered words are common; a third
//    active), then times the full synchronisation (PUT .../Resynchronization until the index is Ready).
// 2. In alternating rounds at each size: a two-word query with one filter (take 20), a prefix query
//    (take 20), and GET /Deviations with one filter (statuses=active, take 20).
// 3. The event-to-searchable latency: a deviation POSTed over HTTP, searched until found (the outbox
//    relay, the events queue and the index's Durable Object), 10 times.
// Targets: each query at 100,000 at most 2x its time at 10,000; each search at most 2x GET /Deviations.
import { join } from "node:path";
import { startAppMiniflare } from "./app-miniflare.mjs";
import { applyMigrations } from "./db.mjs";
import { measureRounds, round } from "./load.mjs";

const SYLLABLES = ["ka", "ro", "mi", "tu", "ne", "sa", "lo", "vi", "de", "pa", "ri", "go", "ba", "fe", "zu"];
export const VOCABULARY = [];
for (const a of SYLLABLES) for (const b of SYLLABLES) for (const c of SYLLABLES) if (VOCABULARY.length < 3000) VOCABULARY.push(a + b + c);
const DEVIATIONS_INDEX = "00000000-0000-4000-8000-000000000002";
const GENERAL = "00000000-0000-4000-8000-000000000001";
// Two common words (each in ~3-4% of deviations, both in ~0.13%) with a filter; a 4-letter prefix that
// expands to 15 words.
export const SEARCH_QUERIES = {
  twoWords: { text: `${VOCABULARY[5]} ${VOCABULARY[10]}`, filter: "status eq 'active'", take: 20 },
  prefix: { text: `${VOCABULARY[777].slice(0, 4)}*`, take: 20 },
};

async function seed(db, from, count) {
  const n = VOCABULARY.length;
  const word = () =>
    `json_extract(?3, '$[' || ((abs(random()) % ${n}) * (abs(random()) % ${n}) / ${n} * (abs(random()) % ${n}) / ${n}) || ']')`;
  const description = Array.from({ length: 6 }, word).join(" || ' ' || ");
  await db
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
       INSERT INTO deviations (id, reference_id, description, status, type_id, owner_id, owner_name, etag, created_at, updated_at)
       SELECT printf('00000000-0000-4000-a000-%012d', i), printf('DEV-S%07d', i), ${description}, CASE i % 3 WHEN 0 THEN
       'active' ELSE 'new' END, ?4,
              'owner-' || (i % 50), 'Owner ' || (i % 50), 'bench', strftime('%Y-%m-%dT%H:%M:%S.000Z', 1609459200 + i * 60,
              'unixepoch'), strftime('%Y-%m-%dT%H:%M:%S.000Z', 1609459200 + i * 60, 'unixepoch') FROM n`,
    )
    .bind(from, from + count - 1, JSON.stringify(VOCABULARY), GENERAL)
    .run();
}

export async function runSearchSection({ root, benchDir, appModules, credentials, step }) {
  const { mf, url } = await startAppMiniflare({ root, stateDir: join(benchDir, "search-state"), appModules, credentials });
  const db = await mf.getD1Database("DB", "app");
  const auth = { authorization: `Bearer ${credentials.token}` };
  const json = { ...auth, "content-type": "application/json" };
  try {
    await applyMigrations(db, root);
    // A connection kept alive across the long seeding may have been closed by the server: one retry,
    // with the cause printed, so a real failure still stops the run.
    const index = async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await (await fetch(new URL(`/Indices/${DEVIATIONS_INDEX}`, url), { headers: auth })).json();
        } catch (error) {
          if (attempt >= 2) throw error;
          console.log(`  (GET /Indices/{id} failed once: ${error.cause?.code ?? error.cause?.message ?? error.message}; retrying)`);
        }
      }
    };
    async function fullSync() {
      const before = (await index()).lastSynchronization?.syncId;
      const t0 = performance.now();
      const res = await fetch(new URL("/Indices/platform-deviations/Resynchronization", url), {
        method: "PUT",
        headers: { ...auth, "api-version": "1.0" },
      });
      if (res.status !== 202) throw new Error(`resynchronisation: ${res.status} ${await res.text()}`);
      const { syncId } = await res.json();
      for (;;) {
        const now = await index();
        if (now.lastSynchronization?.syncId === syncId && now.status !== "Synchronizing") {
          if (now.status !== "Ready") throw new Error(`synchronisation failed: ${JSON.stringify(now.lastSynchronization)}`);
          return { ms: round(performance.now() - t0, 0), documents: now.documentCount, previous: before ?? null };
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    const sizes = [];
    let seeded = 0;
    // SEARCH_BENCH_SIZES=2000,20000 runs smaller sizes while investigating.
    const totals = process.env.SEARCH_BENCH_SIZES ? process.env.SEARCH_BENCH_SIZES.split(",").map(Number) : [10_000, 100_000];
    for (const total of totals) {
      step(
        `search: seeding ${(total - seeded).toLocaleString("en")} deviations (${total.toLocaleString("en")} in all) and ` +
          `synchronising platform-deviations`,
      );
      for (let from = seeded + 1; from <= total; from += 10_000) await seed(db, from, Math.min(10_000, total - from + 1));
      seeded = total;
      const sync = await fullSync();
      console.log(`  full synchronisation of ${sync.documents.toLocaleString("en")} deviations: ${(sync.ms / 1000).toFixed(1)} s`);
      sizes.push({ deviations: total, fullSyncMs: sync.ms });
      if (sync.documents !== total + 0) throw new Error(`expected ${total} documents, the index has ${sync.documents}`);
      const matches = {};
      for (const [name, q] of Object.entries(SEARCH_QUERIES)) {
        const res = await fetch(new URL(`/Indices/${DEVIATIONS_INDEX}/Search`, url), {
          method: "POST",
          headers: json,
          body: JSON.stringify(q),
        });
        if (res.status !== 200) throw new Error(`${name}: ${res.status} ${await res.text()}`);
        matches[name] = (await res.json()).total;
      }
      console.log(`  matches at ${total.toLocaleString("en")}: two words + filter ${matches.twoWords}, prefix ${matches.prefix}`);
      step(`search: measuring at ${total.toLocaleString("en")} (alternating rounds)`);
      const [twoWords, prefix, list] = await measureRounds([
        {
          label: `search two words + filter (${total / 1000}k)`,
          url: new URL(`/Indices/${DEVIATIONS_INDEX}/Search`, url),
          method: "POST",
          headers: json,
          body: JSON.stringify(SEARCH_QUERIES.twoWords),
        },
        {
          label: `search prefix (${total / 1000}k)`,
          url: new URL(`/Indices/${DEVIATIONS_INDEX}/Search`, url),
          method: "POST",
          headers: json,
          body: JSON.stringify(SEARCH_QUERIES.prefix),
        },
        {
          label: `GET /Deviations?statuses=active&take=20 (${total / 1000}k)`,
          url: new URL("/Deviations?statuses=active&take=20", url),
          headers: auth,
        },
      ]);
      Object.assign(sizes[sizes.length - 1], { matches, twoWords, prefix, list });
    }
    step("search: event-to-searchable latency (POST /Deviations, then search until found), 10 times");
    const latencies = [];
    for (let i = 0; i < 10; i++) {
      const word = `latency${i}x${Date.now().toString(36)}`;
      const t0 = performance.now();
      const res = await fetch(new URL("/Deviations", url), {
        method: "POST",
        headers: json,
        body: JSON.stringify({ description: `${word} probe` }),
      });
      if (res.status !== 201) throw new Error(`POST /Deviations: ${res.status}`);
      for (;;) {
        const found = await (
          await fetch(new URL(`/Indices/${DEVIATIONS_INDEX}/Search`, url), {
            method: "POST",
            headers: json,
            body: JSON.stringify({ text: word }),
          })
        ).json();
        if (found.total === 1) break;
        if (performance.now() - t0 > 30_000) throw new Error("a change was not searchable within 30 s");
        await new Promise((r) => setTimeout(r, 20));
      }
      latencies.push(round(performance.now() - t0, 0));
    }
    latencies.sort((a, b) => a - b);
    const [small, large] = sizes;
    const ratio = (a, b) => round(a.reqPerSec / b.reqPerSec, 2);
    const result = {
      sizes: sizes.map((s) => ({
        deviations: s.deviations,
        fullSyncMs: s.fullSyncMs,
        matches: s.matches,
        twoWords: s.twoWords,
        prefix: s.prefix,
        list: s.list,
      })),
      scale: { twoWords: ratio(small.twoWords, large.twoWords), prefix: ratio(small.prefix, large.prefix), target: 2 },
      againstList: sizes.map((s) => ({
        deviations: s.deviations,
        twoWords: ratio(s.list, s.twoWords),
        prefix: ratio(s.list, s.prefix),
        target: 2,
      })),
      eventToSearchableMs: { median: latencies[Math.floor(latencies.length / 2)], max: latencies[latencies.length - 1], all: latencies },
    };
    console.log(`  100k vs 10k (time ratio, target <= 2): two words + filter ${result.scale.twoWords}, prefix ${result.scale.prefix}`);
    for (const a of result.againstList)
      console.log(
        `  search vs GET /Deviations at ${a.deviations.toLocaleString("en")} (time ratio, target <= 2): two words + ` +
          `filter ${a.twoWords}, prefix ${a.prefix}`,
      );
    console.log(`  event to searchable: median ${result.eventToSearchableMs.median} ms, max ${result.eventToSearchableMs.max} ms`);
    return result;
  } finally {
    await mf.dispose().catch(() => undefined);
  }
}
