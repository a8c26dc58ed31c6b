/**
 * Issue 21 §3: the original product's paths, as its public client (ZEVIT-AIH-SDK 0.5.13) sends them:
 * the path spelled as the client spells it, its api-version header (or none where the client sends
 * none), JSON bodies as Python's json.dumps writes them, and what the client reads back.
 */
import { describe, expect, it } from "vitest";
import { call, type CallResult } from "../support/http";
import { createAsset, unique } from "../support/factories/work";
import { bearer, monitoredPlants } from "../monitors/support";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read bodies loosely, as call() does
type Res = CallResult<any>;

/** json.dumps with its default separators (", " and ": "), as the client encodes every body. */
export function pyJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pyJson).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${JSON.stringify(k)}: ${pyJson(v)}`)
      .join(", ")}}`;
  }
  return JSON.stringify(value);
}

/** The client's _get: only the api-version header (left out when the client passes none). */
export function clientGet(path: string, version?: string): Promise<Res> {
  return call(`/${path}`, { headers: version ? { "api-version": version } : {} });
}

/** The client's _post and _put: Content-Type application/json, api-version, the body through json.dumps. */
export function clientSend(method: "POST" | "PUT", path: string, data: unknown, version?: string): Promise<Res> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (version) headers["api-version"] = version;
  return call(`/${path}`, { method, rawBody: pyJson(data), headers });
}

/** The client's _delete: `{endpoint}/{id}`, Content-Type application/json and api-version, no body. */
export function clientDelete(path: string, version?: string): Promise<Res> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (version) headers["api-version"] = version;
  return call(`/${path}`, { method: "DELETE", headers });
}

describe("assets under the client's paths (plants, mainsystems, equipment, organizations; api-version 1.4)", () => {
  it("Organization and Plant: post, get one and all, put the whole object back, delete", async () => {
    const organization = await clientSend("POST", "organizations", { name: unique("org") }, "1.4");
    expect(organization.status, organization.text).toBe(201);
    expect(organization.body.kind).toBe("organization");
    const posted = await clientSend("POST", "plants", { name: unique("plant"), parentId: organization.body.id }, "1.4");
    expect(posted.status, posted.text).toBe(201);
    const id = posted.body.id as string;

    const one = await clientGet(`plants/${id}`, "1.4");
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id, kind: "plant", parentId: organization.body.id });
    const all = await clientGet(`plants?ids=${id},${organization.body.id}`, "1.4");
    expect(all.body.map((a: { id: string }) => a.id)).toEqual([id]);
    expect((await clientGet(`organizations/${organization.body.id}`, "1.4")).body.name).toBe(organization.body.name);

    // put(): the object as read, one field changed, sent back whole.
    const renamed = unique("renamed plant");
    const put = await clientSend("PUT", "plants", { ...one.body, name: renamed }, "1.4");
    expect(put.status, put.text).toBe(200);
    expect((await clientGet(`plants/${id}`, "1.4")).body.name).toBe(renamed);

    expect((await clientDelete(`plants/${id}`, "1.4")).status).toBe(204);
    expect((await clientGet(`plants/${id}`, "1.4")).status).toBe(404);
    expect((await clientDelete(`organizations/${organization.body.id}`, "1.4")).status).toBe(204);
  });

  it(
    "MainSystem and Equipment: writes under their paths, and get_design_objects (mainsystems/{id}/DesignObjects, no " + "api-version)",
    async () => {
      const plant = await createAsset("plant");
      const mainSystem = await clientSend("POST", "mainsystems", { name: unique("ms"), parentId: plant.id }, "1.4");
      expect(mainSystem.status, mainSystem.text).toBe(201);
      expect(mainSystem.body.kind).toBe("mainSystem");
      const equipment = await clientSend("POST", "equipment", { name: unique("pump"), parentId: mainSystem.body.id }, "1.4");
      expect(equipment.status, equipment.text).toBe(201);
      expect(equipment.body).toMatchObject({ kind: "equipment", plant: { id: plant.id } });
      const design = await createAsset("designObject", mainSystem.body.id);
      const otherDesign = await createAsset("designObject", plant.id);

      const listed = await clientGet(`mainsystems?ids=${mainSystem.body.id},${equipment.body.id}`, "1.4");
      expect(listed.body.map((a: { id: string }) => a.id)).toEqual([mainSystem.body.id]);

      // MainSystem.get_design_objects() sends `{endpoint}/{id}/DesignObjects` through _get without a version.
      const objects = await clientGet(`mainsystems/${mainSystem.body.id}/DesignObjects`);
      expect(objects.status, objects.text).toBe(200);
      expect(objects.body.map((a: { id: string }) => a.id)).toEqual([design.id]);
      expect(objects.body.map((a: { id: string }) => a.id)).not.toContain(otherDesign.id);
      expect((await clientGet(`mainsystems/${mainSystem.body.id}/DesignObjects`, "1.4")).status).toBe(200);
      expect((await clientGet(`MainSystems/${equipment.body.id}/DesignObjects`, "1.4")).status).toBe(404);

      const read = (await clientGet(`equipment/${equipment.body.id}`, "1.4")).body;
      const put = await clientSend("PUT", "equipment", { ...read, metadata: { tag: "P-101" } }, "1.4");
      expect(put.status, put.text).toBe(200);
      expect(put.body.metadata).toEqual({ tag: "P-101" });
      expect((await clientDelete(`equipment/${equipment.body.id}`, "1.4")).status).toBe(204);
    },
  );

  it("an id of another kind is a 404 on every method of a kind's path; a body of another kind is a 400", async () => {
    const plant = await createAsset("plant");
    const mainSystem = await createAsset("mainSystem", plant.id);
    const { etag: _etag, ...asRead } = mainSystem;
    expect((await clientGet(`plants/${mainSystem.id}`, "1.4")).status).toBe(404);
    expect((await clientSend("PUT", "plants", { ...asRead, name: "x" }, "1.4")).status).toBe(404);
    expect((await clientSend("PUT", "plants", { ...asRead, kind: undefined, name: "x" }, "1.4")).status).toBe(404);
    expect((await clientDelete(`plants/${mainSystem.id}`, "1.4")).status).toBe(404);
    expect((await clientGet(`mainsystems/${mainSystem.id}`, "1.4")).body.name).toBe(mainSystem.name);
    const wrongKind = await clientSend("POST", "plants", { name: unique("x"), kind: "organization" }, "1.4");
    expect(wrongKind.status).toBe(400);
    expect(wrongKind.body.errors).toContainEqual(expect.objectContaining({ field: "body.kind" }));
  });

  it("answers every spelling: plural, singular, any case", async () => {
    const plant = await createAsset("plant");
    const mainSystem = await createAsset("mainSystem", plant.id);
    for (const path of ["mainsystems", "MainSystems", "MAINSYSTEMS", "MainSystem", "mainsystem"]) {
      const res = await clientGet(`${path}/${mainSystem.id}`, "1.4");
      expect(res.status, path).toBe(200);
    }
    for (const path of ["organizations", "Organizations", "Organization", "plants", "Plants", "equipment", "EQUIPMENT"]) {
      expect((await clientGet(`${path}?take=1`, "1.4")).status, path).toBe(200);
    }
  });
});

describe("the client's other reads", () => {
  it(
    "ClassificationElement: GET Classifications/{id}/Elements (assets 1.4, maintenance and monitors 1.0) is the " + "element tree",
    async () => {
      const posted = await clientSend(
        "POST",
        "Classifications",
        { name: unique("severity"), elements: [{ name: "Low" }, { name: "High", children: [{ name: "Very high" }] }] },
        "1.4",
      );
      expect(posted.status, posted.text).toBe(201);
      for (const version of ["1.4", "1.0"]) {
        const elements = await clientGet(`Classifications/${posted.body.id}/Elements`, version);
        expect(elements.status, elements.text).toBe(200);
        expect(elements.body).toEqual(posted.body.elements);
        expect(elements.body.map((e: { name: string }) => e.name)).toEqual(["Low", "High"]);
        expect(elements.body[1].children.map((e: { name: string }) => e.name)).toEqual(["Very high"]);
      }
      expect((await clientGet(`Classifications/${crypto.randomUUID()}/Elements`, "1.4")).status).toBe(404);
    },
  );

  it("WorkTemplateActivity: GET workTemplates/{id}/activities (1.0) lists the work template's activity templates in order", async () => {
    const first = await clientSend("POST", "ActivityTemplates", { displayName: unique("Measure wall") }, "1.0");
    const second = await clientSend("POST", "ActivityTemplates", { displayName: unique("Photograph flange") }, "1.0");
    expect([first.status, second.status], first.text + second.text).toEqual([201, 201]);
    const template = await clientSend(
      "POST",
      "WorkTemplates",
      {
        displayName: unique("Tank inspection"),
        activityTemplates: [{ activityTemplateId: first.body.id }, { activityTemplateId: second.body.id }],
      },
      "1.0",
    );
    expect(template.status, template.text).toBe(201);
    const activities = await clientGet(`workTemplates/${template.body.id}/activities`, "1.0");
    expect(activities.status, activities.text).toBe(200);
    expect(activities.body.map((a: { activityTemplateId: string }) => a.activityTemplateId)).toEqual([first.body.id, second.body.id]);
    expect(activities.body).toEqual(template.body.activityTemplates);
    expect((await clientGet(`WorkTemplates/${template.body.id}/ActivityTemplates`, "1.0")).body).toEqual(activities.body);
    expect((await clientGet(`workTemplates/${crypto.randomUUID()}/activities`, "1.0")).status).toBe(404);
  });

  it("Media: GET Medias (no api-version, no query) is a bare array of media carrying id, name and type", async () => {
    const form = new FormData();
    form.append("File", new File([new TextEncoder().encode("inspection notes")], "notes.txt"));
    form.append("Type", "document");
    const posted = await call("/Medias", { method: "POST", rawBody: form });
    expect(posted.status, posted.text).toBe(201);
    const listed = await clientGet("Medias");
    expect(listed.status, listed.text).toBe(200);
    expect(Array.isArray(listed.body)).toBe(true);
    expect(listed.body).toContainEqual(expect.objectContaining({ id: posted.body.id, name: "notes.txt", type: "document" }));
    expect((await clientGet(`Medias/${posted.body.id}`)).body.id).toBe(posted.body.id);
  });
});

describe("MonitorJob.update_status: PUT MonitorJobs/{id}/{status} with the client's empty body", () => {
  /**
   * `_put(api, f"MonitorJobs/{id}/{status}", "")`: json.dumps("") is the two characters "" with Content-Type application/json,
   * and no api-version.
   */
  const updateStatus = (id: string, status: string, body = '""', headers: Record<string, string> = {}) =>
    call(`/MonitorJobs/${id}/${status}`, { method: "PUT", rawBody: body, headers: { "content-type": "application/json", ...headers } });

  it("takes the JSON string \"\" as an empty body, with the client's own token or the monitor's status token", async () => {
    const { monitor } = await monitoredPlants("External", 1);
    const run = await call(`/MonitorJobs/Execution/${monitor.id}`, { method: "POST" });
    expect(run.status, run.text).toBe(201);
    const progress = await updateStatus(run.body.id, "InProgress");
    expect(progress.status, progress.text).toBe(200);
    expect(progress.body.status).toBe("InProgress");
    const done = await updateStatus(run.body.id, "Succeeded", ' "" ', bearer(run.body.statusToken));
    expect(done.status, done.text).toBe(200);
    expect(done.body).toMatchObject({ status: "Succeeded", errorMessage: null });
  });

  it('still refuses a JSON string with content, and a "" body where a body is required', async () => {
    const { monitor } = await monitoredPlants("External", 1);
    const run = await call(`/MonitorJobs/Execution/${monitor.id}`, { method: "POST" });
    const text = await updateStatus(run.body.id, "InProgress", '"InProgress"');
    expect(text.status).toBe(400);
    expect((await call(`/MonitorJobs/${run.body.id}`)).body.status).toBe("Started");
    const required = await call("/Categories", { method: "PUT", rawBody: '""', headers: { "content-type": "application/json" } });
    expect(required.status).toBe(400);
    expect(required.body.code).toBe("ValidationFailed");
  });
});
