/**
 * Issue 21 §4: an owner who is not in the directory of users (who has never called) is recorded as
 * given, on every resource that takes an owner, and is not added to the directory. The same rule for
 * each: the owner's id as sent, its name as sent (null when none was sent).
 */
import { describe, expect, it } from "vitest";
import { configBody } from "../dataprocessing/support";
import { definition } from "../monitors/support";
import { awaitSync, libraryForm, STANDARD } from "../search/support";
import { createDataType, fileForm, postForm } from "../support/factories/upload";
import { call } from "../support/http";

const stranger = () => ({ id: `never-called-${crypto.randomUUID()}`, name: "Owen Outsider" });
const tag = () => crypto.randomUUID().slice(0, 8);
type Owner = { id: string; name: string | null };

async function created(res: { status: number; text: string; body: { id: string; objectOwner: Owner } }) {
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** Each resource that takes an owner: create it for `owner`, and answer what a GET of it shows. */
const resources: Record<string, (owner: Owner) => Promise<{ created: Owner; read: Owner }>> = {
  async Deviations(owner) {
    const body = await created(await call("/Deviations", { method: "POST", body: { description: "flange", objectOwner: owner } }));
    return { created: body.objectOwner, read: (await call(`/Deviations/${body.id}`)).body.objectOwner };
  },
  async WorkTemplates(owner) {
    const body = await created(await call("/WorkTemplates", { method: "POST", body: { displayName: `wt ${tag()}`, objectOwner: owner } }));
    return { created: body.objectOwner, read: (await call(`/WorkTemplates/${body.id}`)).body.objectOwner };
  },
  async ActivityTemplates(owner) {
    const body = await created(
      await call("/ActivityTemplates", { method: "POST", body: { displayName: `at ${tag()}`, objectOwner: owner } }),
    );
    return { created: body.objectOwner, read: (await call(`/ActivityTemplates/${body.id}`)).body.objectOwner };
  },
  async Activities(owner) {
    const template = await created(await call("/ActivityTemplates", { method: "POST", body: { displayName: `at ${tag()}` } }));
    const body = await created(await call("/Activities", { method: "POST", body: { basedOn: { id: template.id }, objectOwner: owner } }));
    return { created: body.objectOwner, read: (await call(`/Activities/${body.id}`)).body.objectOwner };
  },
  async WorkItems(owner) {
    const body = await created(await call("/WorkItems", { method: "POST", body: { displayName: `wi ${tag()}`, objectOwner: owner } }));
    return { created: body.objectOwner, read: (await call(`/WorkItems/${body.id}`)).body.objectOwner };
  },
  async JobConfigurations(owner) {
    const body = await created(await call("/JobConfigurations", { method: "POST", body: configBody({ objectOwner: owner }) }));
    return { created: body.objectOwner, read: (await call(`/JobConfigurations/${body.id}`)).body.objectOwner };
  },
  async Models(owner) {
    const def = await definition("ACR");
    const body = await created(
      await call("/Models", {
        method: "POST",
        body: {
          name: `model ${tag()}`,
          modelDefinitionName: def.name,
          modelDefinitionVersion: def.version,
          cpuCores: 1,
          memory: 1,
          objectOwner: owner,
        },
      }),
    );
    return { created: body.objectOwner, read: (await call(`/Models/${body.id}`)).body.objectOwner };
  },
  async Monitors(owner) {
    const def = await definition("ACR");
    const model = await created(
      await call("/Models", {
        method: "POST",
        body: { name: `model ${tag()}`, modelDefinitionName: def.name, modelDefinitionVersion: def.version, cpuCores: 1, memory: 1 },
      }),
    );
    const body = await created(
      await call("/Monitors", { method: "POST", body: { name: `monitor ${tag()}`, modelId: model.id, objectOwner: owner } }),
    );
    return { created: body.objectOwner, read: (await call(`/Monitors/${body.id}`)).body.objectOwner };
  },
  async Files(owner) {
    // The multipart form takes the id and, optionally, the name.
    const dataType = await createDataType();
    const form = fileForm([
      ["DataTypeId", dataType.id],
      ["ObjectOwnerId", owner.id],
      ...(owner.name === null ? [] : ([["ObjectOwnerName", owner.name]] as [string, string][])),
      ["File", { name: "owned.csv", content: "a\n" }],
    ]);
    const body = await created(await postForm(form));
    return { created: body.objectOwner, read: (await call(`/Files/${body.id}`)).body.objectOwner };
  },
  async "Files/Uploads"(owner) {
    const dataType = await createDataType();
    const started = await call("/Files/Uploads", {
      method: "POST",
      body: { dataTypeId: dataType.id, name: "owned.csv", objectOwner: owner },
    });
    expect(started.status, started.text).toBe(201);
    const { uploadId, fileId } = started.body as { uploadId: string; fileId: string };
    expect((await call(`/Files/Uploads/${uploadId}/Parts/1`, { method: "PUT", rawBody: new TextEncoder().encode("a\n") })).status).toBe(
      200,
    );
    const done = await created(await call(`/Files/Uploads/${uploadId}/Completion`, { method: "POST" }));
    return { created: done.objectOwner, read: (await call(`/Files/${fileId}`)).body.objectOwner };
  },
  async Indices(owner) {
    // The form takes the owner's id only (spec 2.10): the name of an owner who is not the caller is null.
    const library = `import { IndexBuilder } from "integrity-edge/search";
export default class Static extends IndexBuilder {
  mapping() { return { title: { type: "text", displayName: "Title" } }; }
  async *entries() { yield { id: "a", title: "owned" }; }
}`;
    const since = new Date(Date.now() - 1).toISOString();
    const res = await call("/Indices", {
      method: "POST",
      rawBody: libraryForm({ Name: `idx-${tag()}`, DisplayName: "Owned", ObjectOwnerId: owner.id }, library),
      headers: { "api-version": "1.1" },
    });
    const body = await created(res);
    await awaitSync(body.id, since);
    return { created: body.objectOwner, read: (await call(`/Indices/${body.id}`)).body.objectOwner };
  },
  async Queries(owner) {
    const body = await created(
      await call("/Queries", {
        method: "POST",
        body: { name: `q ${tag()}`, index: { id: STANDARD.deviations }, queryObject: { text: "flange" }, objectOwner: owner },
      }),
    );
    return { created: body.objectOwner, read: (await call(`/Queries/${body.id}`)).body.objectOwner };
  },
};

/** Resources whose form or body carries the owner's id only. */
const ID_ONLY = new Set(["Indices"]);

describe("an owner who is not in the directory of users is recorded as given, on every resource", () => {
  for (const [resource, create] of Object.entries(resources)) {
    it(resource, async () => {
      const owner = stranger();
      const expected = ID_ONLY.has(resource) ? { id: owner.id, name: null } : owner;
      const { created: answered, read } = await create(owner);
      expect(answered).toEqual(expected);
      expect(read).toEqual(expected);
      // Naming an owner does not put them in the directory: only their own calls do.
      expect((await call(`/Users/${owner.id}`)).status).toBe(404);
    });
  }

  it("Files: an owner's id alone (as the original client sends ObjectOwnerId) is stored with no name", async () => {
    const owner = { id: `never-called-${crypto.randomUUID()}`, name: null };
    const { created: answered, read } = await resources.Files!(owner);
    expect(answered).toEqual(owner);
    expect(read).toEqual(owner);
  });
});
