// Template copy bench (issue 3): a PUT that copies a revision in use against a PUT that edits a
// revision in place, as ratios of median latency from one run:
// 1. PUT /WorkTemplates on a work template with 50 activity templates (WorkTemplateActivityTemplate
//    rows) and 2 sections: copy (a work item is based on the latest revision) vs in place;
// 2. PUT /ActivityTemplates on an activity template with 500 input templates: copy (an activity is
//    based on the latest revision) vs in place.
// Both PUTs send the same kind of body: the header fields only (the dependent lists are kept), so the
// copy's extra cost is exactly the copy of the revision and its dependents. Before each copy the
// latest revision is frozen with SQL (a work_item_templates or activities row), outside the timing.
// Copy and in-place requests alternate, so both see the same machine load.
//
// Its own Miniflare (the app on a direct socket, never `wrangler dev`), so `--only templates` runs it alone.
// Env: BENCH_TEMPLATE_RUNS (40 per variant), BENCH_TEMPLATE_WARMUP (5).
import { join } from "node:path";
import { startAppMiniflare } from "./app-miniflare.mjs";
import { applyMigrations } from "./db.mjs";
import { median, round } from "./load.mjs";

const RUNS = Number(process.env.BENCH_TEMPLATE_RUNS ?? 40);
const WARMUP = Number(process.env.BENCH_TEMPLATE_WARMUP ?? 5);
export const TEMPLATE_SHAPE = { activityTemplates: 50, sections: 2, inputTemplates: 500 };
const GENERAL = "00000000-0000-4000-8000-000000000001";

async function request(base, path, { method = "GET", token, json } = {}) {
  const response = await fetch(new URL(path, base), {
    method,
    headers: { authorization: `Bearer ${token}`, ...(json ? { "content-type": "application/json" } : {}) },
    body: json ? JSON.stringify(json) : undefined,
  });
  const text = await response.text();
  if (response.status < 200 || response.status > 299) throw new Error(`${method} ${path}: HTTP ${response.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

async function timed(fn) {
  const start = process.hrtime.bigint();
  const result = await fn();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, result };
}

/** Header-only PUT body of a read (absent dependent lists are kept). */
function headerBody(read, displayName) {
  const { activityTemplates: _a, sectionTemplates: _s, inputTemplates: _i, ...body } = read;
  return { ...body, displayName };
}

async function freezeWorkTemplate(db, id, revision) {
  const workItem = crypto.randomUUID();
  const now = new Date().toISOString();
  await db.batch([
    db
      .prepare(
        "INSERT INTO work_items (id, display_name, status, type_id, owner_id, tags, etag, created_at, updated_at) " +
          "VALUES (?1, 'bench', 'new', ?2, 'bench', '[]', 'e', ?3, ?3)",
      )
      .bind(workItem, GENERAL, now),
    db
      .prepare(
        "INSERT INTO work_item_templates (work_item_id, work_template_id, work_template_revision, position, created_at) " +
          "VALUES (?1, ?2, ?3, 0, ?4)",
      )
      .bind(workItem, id, revision, now),
  ]);
}

async function freezeActivityTemplate(db, id, revision) {
  const now = new Date().toISOString();
  await db
    .prepare(
      "INSERT INTO activities (id, based_on_id, based_on_revision, display_name, status, owner_id, etag, created_at, " +
        "updated_at) VALUES (?1, ?2, ?3, 'bench', 'new', 'bench', 'e', ?4, ?4)",
    )
    .bind(crypto.randomUUID(), id, revision, now)
    .run();
}

/** Alternates copy and in-place PUTs; returns the median (and p90) latency of each and their ratio. */
async function measurePair({ url, token, path, copyId, inPlaceId, freeze, readPath }) {
  const copy = [];
  const inPlace = [];
  let copyRead = await request(url, `${readPath}/${copyId}`, { token });
  let inPlaceRead = await request(url, `${readPath}/${inPlaceId}`, { token });
  const runCopy = async (i) => {
    await freeze(copyId, copyRead.revision);
    await settle();
    const c = await timed(() => request(url, path, { method: "PUT", token, json: headerBody(copyRead, `copy ${i}`) }));
    if (c.result.revision !== copyRead.revision + 1)
      throw new Error(`expected a copy as revision ${copyRead.revision + 1}, got ${c.result.revision}`);
    copyRead = c.result;
    return c.ms;
  };
  const runInPlace = async (i) => {
    await settle();
    const p = await timed(() => request(url, path, { method: "PUT", token, json: headerBody(inPlaceRead, `in place ${i}`) }));
    if (p.result.revision !== 1) throw new Error(`expected an in-place edit of revision 1, got ${p.result.revision}`);
    inPlaceRead = p.result;
    return p.ms;
  };
  for (let i = 0; i < WARMUP + RUNS; i++) {
    // The order alternates, and each request starts after a pause: a write's outbox relay runs
    // after its response (waitUntil) and would otherwise slow whichever request comes next.
    const [c, p] = i % 2 === 0 ? [await runCopy(i), await runInPlace(i)] : [NaN, await runInPlace(i)];
    const copyMs = i % 2 === 0 ? c : await runCopy(i);
    if (i >= WARMUP) {
      copy.push(copyMs);
      inPlace.push(p);
    }
  }
  const p90 = (values) => round([...values].sort((a, b) => a - b)[Math.floor(values.length * 0.9)], 2);
  const copyMs = round(median(copy), 2);
  const inPlaceMs = round(median(inPlace), 2);
  return {
    runs: RUNS,
    copyMs,
    inPlaceMs,
    copyP90Ms: p90(copy),
    inPlaceP90Ms: p90(inPlace),
    ratio: round(copyMs / inPlaceMs, 2),
    target: 3,
  };
}

export async function runTemplatesSection({ root, benchDir, appModules, credentials, step }) {
  const stateDir = join(benchDir, "templates-state");
  const { mf, url, db } = await startAppMiniflare({ root, stateDir, appModules, credentials });
  try {
    const token = credentials.token;
    step("templates: migrations and seeding through the API");
    await applyMigrations(db, root);
    const inputs = Array.from({ length: TEMPLATE_SHAPE.inputTemplates }, (_, i) => ({
      name: `input_${i}`,
      displayName: `Input ${i}`,
      format: i % 2 ? "decimal" : "text",
      required: i % 5 === 0,
    }));
    const bigActivity = async (name) =>
      (
        await request(url, "/ActivityTemplates", {
          method: "POST",
          token,
          json: { displayName: name, referenceId: name, inputTemplates: inputs },
        })
      ).id;
    const activityIds = [];
    for (let i = 0; i < TEMPLATE_SHAPE.activityTemplates; i++) {
      activityIds.push(
        (
          await request(url, "/ActivityTemplates", {
            method: "POST",
            token,
            json: { displayName: `Activity ${i}`, inputTemplates: inputs.slice(0, 10) },
          })
        ).id,
      );
    }
    const sections = Array.from({ length: TEMPLATE_SHAPE.sections }, (_, i) => ({ id: crypto.randomUUID(), displayName: `Section ${i}` }));
    const bigWork = async (name) =>
      (
        await request(url, "/WorkTemplates", {
          method: "POST",
          token,
          json: {
            displayName: name,
            tags: ["bench"],
            sectionTemplates: sections.map((s) => ({ ...s, id: crypto.randomUUID() })),
            activityTemplates: activityIds.map((activityTemplateId) => ({ activityTemplateId })),
          },
        })
      ).id;

    step(
      `templates: PUT /WorkTemplates, ${TEMPLATE_SHAPE.activityTemplates} activity templates: copy vs in place (${RUNS} each, alternating)`,
    );
    const work = await measurePair({
      url,
      token,
      path: "/WorkTemplates",
      readPath: "/WorkTemplates",
      copyId: await bigWork("copy"),
      inPlaceId: await bigWork("in place"),
      freeze: (id, revision) => freezeWorkTemplate(db, id, revision),
    });
    console.log(`  copy ${work.copyMs} ms, in place ${work.inPlaceMs} ms (median): ratio ${work.ratio} (target <= 3)`);

    step(`templates: PUT /ActivityTemplates, ${TEMPLATE_SHAPE.inputTemplates} input templates: copy vs in place`);
    const activity = await measurePair({
      url,
      token,
      path: "/ActivityTemplates",
      readPath: "/ActivityTemplates",
      copyId: await bigActivity("copy"),
      inPlaceId: await bigActivity("in place"),
      freeze: (id, revision) => freezeActivityTemplate(db, id, revision),
    });
    console.log(`  copy ${activity.copyMs} ms, in place ${activity.inPlaceMs} ms (median): ratio ${activity.ratio} (target <= 3)`);
    return { shape: TEMPLATE_SHAPE, workTemplate: work, activityTemplate: activity };
  } finally {
    await mf.dispose().catch(() => undefined);
  }
}
