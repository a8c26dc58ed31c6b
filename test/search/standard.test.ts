import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { indexPendingEvents, resync, search, STANDARD } from "./support";

const tag = () => crypto.randomUUID().slice(0, 8);

describe("standard indices", () => {
  it("exist from the first start with their mappings, in both versions", async () => {
    const list = await call("/Indices", { headers: { "api-version": "1.0" } });
    expect(list.status, list.text).toBe(200);
    const names = list.body.map((i: { name: string }) => i.name);
    for (const name of ["platform-risks", "platform-deviations", "platform-equipment", "platform-main-systems", "platform-channels", "platform-work-items", "platform-structure-node-reference", "platform-plants", "platform-main-system-objects", "platform-activities", "platform-activity-date-inputs", "platform-activity-number-inputs", "platform-activity-text-inputs"]) {
      expect(names).toContain(name);
    }
    const deviations = list.body.find((i: { name: string }) => i.name === "platform-deviations");
    expect(deviations).toMatchObject({ type: "standard", source: "platform" });
    expect(deviations.mapping.description).toMatchObject({ type: "text", alwaysShow: true });
    expect(deviations.mapping.objectOwner).toMatchObject({ isIdentity: true });
    const risks = list.body.find((i: { name: string }) => i.name === "platform-risks");
    expect(risks).toMatchObject({ source: "library" });
    expect(risks.description).toMatch(/another service/);
  });

  it("finds a deviation by words, prefixes and phrases, ignoring case and accents, and highlights them", async () => {
    const t = tag();
    const created = await call("/Deviations", { method: "POST", body: { referenceId: `SRCH-${t}`, description: `Corrosión found on the PUMP housing ${t}` } });
    expect(created.status, created.text).toBe(201);
    await indexPendingEvents();
    for (const text of [`corrosion ${t}`, `CORROSIÓN ${t}`, `hous* ${t}`, `"pump housing" ${t}`]) {
      const res = await search(STANDARD.deviations, { text });
      expect(res.status, res.text).toBe(200);
      expect(res.body.results.map((r: { id: string }) => r.id), text).toEqual([created.body.id]);
    }
    const res = await search(STANDARD.deviations, { text: `pump ${t}` });
    expect(res.body.results[0].fields).toMatchObject({ referenceId: `SRCH-${t}`, description: `Corrosión found on the PUMP housing ${t}` });
    expect(res.body.results[0].highlights.description).toContain("<mark>PUMP</mark>");
    expect((await search(STANDARD.deviations, { text: `"housing pump" ${t}` })).body.total).toBe(0);
  });
});
