/**
 * Issue 13: requests exactly as the original product's public client sends them
 * (../shared/spec/original-client.md, summarised per test), against the real Worker.
 */
import { describe, expect, it } from "vitest";
import { createDataType, fileForm, postForm, rawCall } from "../support/factories/upload";
import { call } from "../support/http";
import { createConfig } from "../dataprocessing/support";

describe("files, as the original client calls them", () => {
  it(
    "POST /Files with Id (empty), DataTypeId, ObjectOwnerId and File; GET /Files?dataTypeId=; GET /files/{id}/Data " + "in lower case",
    async () => {
      const wanted = await createDataType();
      const other = await createDataType();
      const form = (dataTypeId: string, name: string) =>
        fileForm([
          ["Id", ""],
          ["DataTypeId", dataTypeId],
          ["ObjectOwnerId", "integration-user"],
          ["File", { name, content: `a,b\n${name}\n`, type: "text/csv" }],
        ]);
      const posted = await postForm(form(wanted.id, "wanted.csv"));
      expect(posted.status, posted.text).toBe(201);
      expect(posted.body.id).toMatch(/^[0-9a-f-]{36}$/);
      expect((await postForm(form(other.id, "other.csv"))).status).toBe(201);

      const listed = await call(`/Files?dataTypeId=${wanted.id}`);
      expect(listed.status).toBe(200);
      expect(Array.isArray(listed.body)).toBe(true);
      expect(listed.body.map((f: { name: string }) => f.name)).toEqual(["wanted.csv"]);

      const data = await rawCall(`/files/${posted.body.id}/Data`);
      expect(data.status).toBe(200);
      expect(new TextDecoder().decode(data.bytes)).toBe("a,b\nwanted.csv\n");
    },
  );
});

describe("data processing, as the original client calls it", () => {
  it(
    "POST /Jobs/Execution/{id} with an empty body answers { jobId }; GET /Jobs?configurationId= lists the config's " +
      "jobs; GET /Jobs/{id}",
    async () => {
      const definitions = await call("/JobDefinitions");
      expect(definitions.status).toBe(200);
      const config = await createConfig();
      const run = await call(`/Jobs/Execution/${config.id}`, { method: "POST", headers: { "api-version": "1.2" } });
      expect(run.status, run.text).toBe(201);
      expect(typeof run.body.jobId).toBe("string");
      const jobs = await call(`/Jobs?configurationId=${config.id}`);
      expect(jobs.body.map((j: { id: string }) => j.id)).toEqual([run.body.jobId]);
      expect(["Started", "InProgress"]).toContain((await call(`/Jobs/${run.body.jobId}`)).body.status);
    },
  );

  it("matches paths in any case, with one canonical spelling in the OpenAPI document", async () => {
    expect((await call("/jobdefinitions")).status).toBe(200);
    expect((await call("/JOBCONFIGURATIONS?take=1")).status).toBe(200);
    const doc = await call("/openapi.json", { anonymous: true });
    expect(Object.keys(doc.body.paths)).toContain("/JobDefinitions");
    expect(Object.keys(doc.body.paths)).not.toContain("/jobdefinitions");
    // A wrong method on a lower-case path is still a 405 naming the allowed ones.
    const wrong = await call("/jobdefinitions", { method: "DELETE" });
    expect(wrong.status).toBe(405);
  });

  it("reads older configs' docker-style run options", async () => {
    const config = await createConfig({ runOptions: "-e THRESHOLD=0.8 -e MODE=nightly" });
    expect(config.runOptions).toEqual({ THRESHOLD: "0.8", MODE: "nightly" });
  });
});

describe("conventions of the original client", () => {
  it("serves swagger/{version}/swagger.json with components.schemas for the versions it sends", async () => {
    for (const version of ["1.2", "1.3", "1.0", "1.4"]) {
      const res = await call(`/swagger/${version}/swagger.json`, { anonymous: true });
      expect(res.status, version).toBe(200);
      expect(Object.keys(res.body.components.schemas)).toEqual(expect.arrayContaining(["JobConfiguration", "Problem"]));
    }
    expect((await call("/swagger/9.9/swagger.json", { anonymous: true })).status).toBe(404);
  });

  it("answers the api-version values it sends per area, and UnsupportedApiVersion otherwise", async () => {
    expect((await call("/DataTypes", { headers: { "api-version": "1.3" } })).status).toBe(200);
    expect((await call("/Files", { headers: { "api-version": "1.2" } })).status).toBe(200);
    expect((await call("/Assets", { headers: { "api-version": "1.4" } })).status).toBe(200);
    expect((await call("/JobDefinitions", { headers: { "api-version": "1.2" } })).status).toBe(200);
    const wrong = await call("/JobDefinitions", { headers: { "api-version": "1.0" } });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain("UnsupportedApiVersion");
  });

  it("reads a bare JSON array from lists and an id from creates", async () => {
    const created = await call("/Categories", { method: "POST", body: { name: `compat ${crypto.randomUUID()}` } });
    expect(typeof created.body.id).toBe("string");
    const list = await call("/Categories");
    expect(Array.isArray(list.body)).toBe(true);
  });

  it("uploads a media with the File and Type fields and downloads its bytes", async () => {
    const form = new FormData();
    form.append("File", new File([new TextEncoder().encode("report text")], "report.txt", { type: "text/plain" }));
    form.append("Type", "document");
    const posted = await call("/Medias", { method: "POST", rawBody: form });
    expect(posted.status, posted.text).toBe(201);
    expect(posted.body).toMatchObject({ id: expect.any(String), name: "report.txt", type: "document" });
    const data = await rawCall(`/medias/${posted.body.id}/Data`);
    expect(new TextDecoder().decode(data.bytes)).toBe("report text");
  });
});

describe("work management and assets, as the original client calls them", () => {
  it("changes a file's status with PUT /Files and the whole object carrying userStatus", async () => {
    const dataType = await createDataType();
    const posted = await postForm(
      fileForm([
        ["DataTypeId", dataType.id],
        ["File", { name: "x.csv", content: "a\n" }],
      ]),
    );
    const whole = (await call(`/Files/${posted.body.id}`)).body;
    const res = await call("/Files", { method: "PUT", body: { ...whole, userStatus: "processed" } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe("processed");
    expect((await call("/Files", { method: "PUT", body: { ...whole, status: undefined } })).status).toBe(400);
  });

  it("reads the asset catalogue through equipment, plants, MainSystem and Organization", async () => {
    const plant = await call("/Assets", {
      method: "POST",
      body: { name: `compat plant ${crypto.randomUUID().slice(0, 6)}`, kind: "plant" },
    });
    const equipment = await call("/Assets", {
      method: "POST",
      body: { name: `compat pump ${crypto.randomUUID().slice(0, 6)}`, kind: "equipment", parentId: plant.body.id },
    });
    const plants = await call(`/plants?ids=${plant.body.id},${equipment.body.id}`);
    expect(plants.body.map((a: { id: string }) => a.id)).toEqual([plant.body.id]);
    const pumps = await call(`/equipment?ids=${plant.body.id},${equipment.body.id}`);
    expect(pumps.body.map((a: { id: string }) => a.id)).toEqual([equipment.body.id]);
    expect((await call(`/Equipment/${equipment.body.id}`)).body.id).toBe(equipment.body.id);
    expect((await call(`/Plants/${equipment.body.id}`)).status).toBe(404);
    expect((await call("/MainSystem")).status).toBe(200);
    expect((await call("/Organization")).status).toBe(200);
  });

  it("reads ActivityTemplates/{id}/inputs, workItems/{id}/activities and activities/{id}/inputs", async () => {
    const { seedActivityTemplate } = await import("../support/factories/templates-sql");
    const template = await seedActivityTemplate({
      inputs: [{ name: "thickness", displayName: "Wall thickness", format: "decimal" }] as never,
    });
    const inputs = await call(`/ActivityTemplates/${template.id}/inputs`);
    expect(inputs.status, inputs.text).toBe(200);
    expect(inputs.body.map((i: { name: string }) => i.name)).toEqual(["thickness"]);
    const workItem = await call("/WorkItems", { method: "POST", body: { displayName: `compat ${crypto.randomUUID().slice(0, 6)}` } });
    expect(workItem.status, workItem.text).toBe(201);
    const activity = await call("/Activities", { method: "POST", body: { basedOn: { id: template.id }, workItemId: workItem.body.id } });
    expect(activity.status, activity.text).toBe(201);
    const listed = await call(`/workItems/${workItem.body.id}/activities`);
    expect(listed.body.map((a: { id: string }) => a.id)).toEqual([activity.body.id]);
    const activityInputs = await call(`/activities/${activity.body.id}/inputs`);
    expect(activityInputs.status).toBe(200);
    expect(activityInputs.body).toEqual(activity.body.inputs);
  });
  it("creates MediaReferences and links them with activities/{id}/mediaReferences/{mediaReferenceId}", async () => {
    const { uploadMedia } = await import("../media/support/media");
    const { seedActivityTemplate } = await import("../support/factories/templates-sql");
    const media = await uploadMedia(new TextEncoder().encode("inspection report"), {
      name: "report.txt",
      type: "document",
      mimeType: "text/plain",
    });
    const reference = await call("/MediaReferences", { method: "POST", body: { mediaId: media.id, displayName: "Report" } });
    expect(reference.status, reference.text).toBe(201);
    expect(reference.body.id).toBeTruthy();
    expect((await call("/MediaReferences")).body.map((r: { id: string }) => r.id)).toContain(reference.body.id);
    const template = await seedActivityTemplate({});
    const activity = await call("/Activities", { method: "POST", body: { basedOn: { id: template.id } } });
    expect(activity.status, activity.text).toBe(201);
    const linked = await call(`/activities/${activity.body.id}/mediaReferences/${reference.body.id}`, { method: "POST" });
    expect(linked.status, linked.text).toBe(201);
    const listed = await call(`/activities/${activity.body.id}/mediaReferences`);
    expect(listed.status).toBe(200);
    expect(listed.body.map((r: { id: string }) => r.id)).toEqual([reference.body.id]);
  });

  it(
    "answers a media id given where a media reference id belongs by saying so and naming the route that makes the " +
      "reference (issue 24)",
    async () => {
      const { uploadMedia } = await import("../media/support/media");
      const { seedActivityTemplate } = await import("../support/factories/templates-sql");
      const media = await uploadMedia(new TextEncoder().encode("photo of the flange"), {
        name: "flange.txt",
        type: "document",
        mimeType: "text/plain",
      });
      const activity = await call("/Activities", { method: "POST", body: { basedOn: { id: (await seedActivityTemplate({})).id } } });
      expect(activity.status, activity.text).toBe(201);
      const linked = await call(`/activities/${activity.body.id}/mediaReferences/${media.id}`, { method: "POST" });
      expect(linked.status).toBe(404);
      expect(linked.body.code).toBe("NotFound");
      expect(linked.body.detail).toContain(`${media.id} is a media, not a media reference`);
      expect(linked.body.detail).toContain("POST /MediaReferences");
      expect(linked.body.errors).toEqual([expect.objectContaining({ field: "path.mediaReferenceId", rule: "mediaNotReference" })]);
      const unlinked = await call(`/activities/${activity.body.id}/mediaReferences/${media.id}`, { method: "DELETE" });
      expect(unlinked.status).toBe(404);
      expect(unlinked.body.detail).toContain("is a media, not a media reference");
      // An id that is neither keeps the plain 404.
      const neither = await call(`/activities/${activity.body.id}/mediaReferences/${crypto.randomUUID()}`, { method: "POST" });
      expect(neither.status).toBe(404);
      expect(neither.body.detail).not.toContain("is a media");
    },
  );
});
