/**
 * Issue 37, "Proof": the round trip. A planner exports a filtered list of deviations, changes a column in
 * the file, and imports it back: the changes land, and nothing else changes (no other field, no other
 * deviation, no new version of the rows not edited).
 */
import Papa from "papaparse";
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { createPropertyDefinition } from "../support/factories/properties";
import { createDeviationType } from "../support/factories/work";
import { commitCsv } from "./support";

const unique = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;

describe("export, edit, import back", () => {
  it("lands the edited cells and changes nothing else", async () => {
    const wallLoss = await createPropertyDefinition({ applicationRule: "Deviation", format: "decimal" });
    const note = await createPropertyDefinition({ applicationRule: "Deviation" });
    const type = await createDeviationType({ propertyDefinitions: [{ id: wallLoss.id }, { id: note.id }] });
    const ref = unique("RT");
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read bodies loosely
    const made: any[] = [];
    for (let i = 1; i <= 3; i++) {
      const res = await call("/Deviations", {
        method: "POST",
        body: {
          referenceId: `${ref}-${i}`,
          description: `Corrosion under insulation ${i}`,
          typeId: type.id,
          risk: { id: `R-${i}`, name: "Medium" },
          metadata: { source: "turnaround", line: i },
          properties: [
            { name: wallLoss.name, value: 1.5 * i },
            { name: note.name, value: `note ${i}` },
          ],
        },
      });
      expect(res.status, res.text).toBe(201);
      made.push(res.body);
    }
    const read = (id: string) => call(`/Deviations/${id}`);
    const before = await Promise.all(made.map(async (d) => (await read(d.id)).body));
    const untouchedEtag = (await read(made[2].id)).headers.get("etag");

    // The export of the filtered list, as a planner downloads it.
    const exported = await call(`/Deviations?searchText=${ref}&format=csv`);
    expect(exported.status, exported.text).toBe(200);
    const sheet = Papa.parse<Record<string, string>>(exported.text.replace(/^\uFEFF/, ""), { header: true, skipEmptyLines: true });
    sheet.data.sort((a, b) => a.referenceId!.localeCompare(b.referenceId!));
    expect(sheet.data.map((r) => r.referenceId)).toEqual([`${ref}-1`, `${ref}-2`, `${ref}-3`]);
    // Edited: row 1's description, row 2's wall loss; row 3 untouched.
    sheet.data[0]!.description = "Corrosion under insulation 1, wrapped again";
    sheet.data[1]![wallLoss.name] = "4.25";
    const edited = Papa.unparse({ fields: sheet.meta.fields!, data: sheet.data.map((r) => sheet.meta.fields!.map((f) => r[f] ?? "")) });

    const done = await commitCsv(edited, { fileName: "edited.csv" });
    expect(done).toMatchObject({ status: "completed", total: 3, created: 2, skipped: 1, failed: 0 });

    const after = await Promise.all(made.map(async (d) => (await read(d.id)).body));
    const versionless = (d: Record<string, unknown>) => ({ ...d, updatedAt: null });
    expect(versionless(after[0])).toEqual(versionless({ ...before[0], description: "Corrosion under insulation 1, wrapped again" }));
    expect(versionless(after[1])).toEqual(
      versionless({
        ...before[1],
        properties: before[1].properties.map((p: { name: string }) => (p.name === wallLoss.name ? { ...p, value: 4.25 } : p)),
      }),
    );
    // The row not edited was not written: the same representation, the same version.
    expect(after[2]).toEqual(before[2]);
    expect((await read(made[2].id)).headers.get("etag")).toBe(untouchedEtag);
    // Nothing else in the list changed: still the three deviations.
    const listed = await call(`/Deviations?searchText=${ref}`);
    expect(listed.body).toHaveLength(3);
  });
});
