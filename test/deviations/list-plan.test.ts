/**
 * The asset and field filters of GET /Deviations run on indexes (issue 3: "store designations so
 * that every filter of 4.2 runs on indexes"): SQLite's plan for the page statement searches
 * designations, assets and the deviation columns by index and scans none of them.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { compileDeviationList, DeviationListQuery } from "../../src/deviations/list";

const id = () => crypto.randomUUID();

async function planOf(query: Record<string, string>): Promise<string[]> {
  const compiled = await compileDeviationList(env.DB, DeviationListQuery.parse(query));
  const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${compiled.sql}`)
    .bind(...compiled.params)
    .all<{ detail: string }>();
  return results.map((r) => r.detail);
}

describe("GET /Deviations filters use indexes", () => {
  it.each([
    ["equipmentIds", { equipmentIds: `${id()},${id()}` }],
    ["mainSystemIds", { mainSystemIds: id() }],
    ["designObjectIds", { designObjectIds: id() }],
    ["plantNames", { plantNames: "North plant,South plant" }],
  ])("%s searches the designations index", async (_name, query) => {
    const plan = await planOf(query);
    const designationSteps = plan.filter((d) => /\bdesignations\b/.test(d));
    expect(designationSteps.length, plan.join("\n")).toBeGreaterThan(0);
    for (const step of designationSteps)
      expect(step).toMatch(/^SEARCH designations USING (COVERING )?INDEX (designations_asset_idx|sqlite_autoindex_designations_1)/);
    expect(
      plan.some((d) => /^SCAN (designations|assets)\b/.test(d)),
      plan.join("\n"),
    ).toBe(false);
  });

  it("plantNames finds the plants by an index on their kind and folded name key", async () => {
    const plan = await planOf({ plantNames: "North plant" });
    expect(plan.find((d) => /\bassets\b/.test(d))).toMatch(
      /^SEARCH assets USING (COVERING )?INDEX (assets_plant_name_uq|assets_kind_name_idx \(kind=\? AND name_key=\?\))/,
    );
  });

  it.each([
    ["statuses", { statuses: "new,active" }, "deviations_status_idx"],
    ["objectOwnerIds", { objectOwnerIds: "auth0|a,auth0|b" }, "deviations_owner_idx"],
    ["typeIds", { typeIds: id() }, "deviations_type_idx"],
    ["riskIds", { riskIds: "R-1" }, "deviations_risk_idx"],
  ])("%s alone is an index search on the deviations", async (_name, query, index) => {
    const plan = await planOf(query);
    expect(
      plan.some((d) => d.startsWith("SEARCH d USING") && d.includes(index)),
      plan.join("\n"),
    ).toBe(true);
  });
});
