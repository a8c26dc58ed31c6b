import { describe, expect, it } from "vitest";
import { call, type TestUser } from "../support/http";
import { indexPendingEvents, STANDARD } from "./support";

const tag = () => crypto.randomUUID().slice(0, 8);
const user: Partial<TestUser> = {
  id: "q-user",
  name: "Quinn",
  permissions: ["index_read_owned", "query_read_owned", "query_write", "work_read"],
};
const other: Partial<TestUser> = {
  id: "q-other",
  name: "Other",
  permissions: ["index_read_owned", "query_read_owned", "query_write", "work_read"],
};

async function save(body: Record<string, unknown>, as = user) {
  return call("/Queries", {
    method: "POST",
    body: { name: `q ${tag()}`, index: { id: STANDARD.deviations }, queryObject: { text: "x" }, ...body },
    user: as,
  });
}

describe("saved queries", () => {
  it("are created, read, updated and deleted by their owner, with ETags", async () => {
    const created = await save({
      description: "open valves",
      metadata: { action: { isVisible: true, order: 2 }, colour: "blue" },
      queryObject: { text: "valve", filter: "status eq 'new'", order: "referenceId" },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      objectOwner: { id: "q-user", name: "Quinn" },
      index: { id: STANDARD.deviations, name: "platform-deviations" },
      metadata: { action: { isVisible: true, order: 2 } },
    });
    const read = await call(`/Queries/${created.body.id}`, { user });
    expect(read.body).toEqual(created.body);
    const etag = read.headers.get("etag")!;
    const put = await call("/Queries", {
      method: "PUT",
      body: { id: created.body.id, name: "renamed", index: { id: STANDARD.deviations }, queryObject: { text: "pump" } },
      headers: { "if-match": etag },
      user,
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toMatchObject({ name: "renamed", queryObject: { text: "pump" }, metadata: null });
    expect(
      (
        await call("/Queries", {
          method: "PUT",
          body: { id: created.body.id, name: "again", index: { id: STANDARD.deviations }, queryObject: {} },
          headers: { "if-match": etag },
          user,
        })
      ).status,
    ).toBe(412);
    expect((await call(`/Queries/${created.body.id}`, { method: "DELETE", user: other })).status).toBe(404);
    expect((await call(`/Queries/${created.body.id}`, { method: "DELETE", user })).status).toBe(204);
    expect((await call(`/Queries/${created.body.id}`, { user })).status).toBe(404);
  });

  it("validates the query object against the index's mapping and metadata.action", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ queryObject: { filter: "colour eq 'red'" } }, "body.queryObject.filter"],
      [{ queryObject: { order: "weight desc" } }, "body.queryObject.order"],
      [{ queryObject: { facets: ["nope"] } }, "body.queryObject.facets[0]"],
      [{ queryObject: { text: "x", extra: 1 } }, "body.queryObject"],
      [{ metadata: { action: { isVisible: "yes", order: 1 } } }, "body.metadata.action"],
      [{ metadata: { action: { isVisible: true, order: 1.5 } } }, "body.metadata.action"],
      [{ index: { id: crypto.randomUUID() } }, "body.index.id"],
      [{ name: "" }, "body.name"],
    ];
    for (const [body, field] of cases) {
      const res = await save(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(
        res.body.errors.map((e: { field: string }) => e.field),
        JSON.stringify(body),
      ).toContain(field);
    }
    const unknownField = await save({ queryObject: { filter: "colour eq 'red'" } });
    expect(unknownField.body.errors[0].message).toMatch(/'colour' is not a field of this index/);
  });

  it("are listed for their owner only unless query_read_all, and feed the My Actions page", async () => {
    const t = tag();
    const a = await save({ name: `b ${t}`, metadata: { action: { isVisible: true, order: 2 } } });
    const b = await save({ name: `a ${t}`, metadata: { action: { isVisible: true, order: 1 } } });
    const hidden = await save({ name: `c ${t}`, metadata: { action: { isVisible: false, order: 0 } } });
    const theirs = await save({ name: `d ${t}` }, other);
    const mine = await call(`/Queries?searchText=${t}`, { user });
    expect(mine.body.map((q: { id: string }) => q.id)).toEqual([b.body.id, a.body.id, hidden.body.id]);
    const actions = await call(`/Queries?searchText=${t}&isVisible=true&order=metadata.action.order`, { user });
    expect(actions.body.map((q: { id: string }) => q.id)).toEqual([b.body.id, a.body.id]);
    expect((await call(`/Queries/${theirs.body.id}`, { user })).status).toBe(404);
    const all = await call(`/Queries?searchText=${t}`, { user: { ...user, permissions: [...user.permissions!, "query_read_all"] } });
    expect(all.body).toHaveLength(4);
    expect((await call(`/Queries?colour=red`, { user })).status).toBe(400);
  });

  it("execute with index_read_owned and query_read_owned, each required, and return the search result", async () => {
    const t = tag();
    const dev = await call("/Deviations", { method: "POST", body: { referenceId: `EX-${t}`, description: `gasket ${t}` } });
    expect(dev.status).toBe(201);
    await indexPendingEvents();
    const saved = await save({ queryObject: { text: `gasket ${t}` } });
    const run = await call(`/Queries/${saved.body.id}/Execution`, { method: "POST", user });
    expect(run.status, run.text).toBe(200);
    expect(run.body).toMatchObject({ index: { id: STANDARD.deviations, name: "platform-deviations" }, total: 1 });
    expect(run.body.results[0].id).toBe(dev.body.id);
    const paged = await call(`/Queries/${saved.body.id}/Execution`, { method: "POST", body: { skip: 1 }, user });
    expect(paged.body).toMatchObject({ total: 1, skip: 1, results: [] });
    const noIndex = await call(`/Queries/${saved.body.id}/Execution`, {
      method: "POST",
      user: { ...user, permissions: ["query_read_owned", "work_read"] },
    });
    expect(noIndex.status).toBe(403);
    expect(noIndex.body.detail).toMatch(/index_read_owned/);
    const noQuery = await call(`/Queries/${saved.body.id}/Execution`, {
      method: "POST",
      user: { ...user, permissions: ["index_read_owned", "work_read"] },
    });
    expect(noQuery.status).toBe(403);
    expect(noQuery.body.detail).toMatch(/query_read_owned/);
    expect((await call(`/Queries/${saved.body.id}/Execution`, { method: "POST", user: other })).status).toBe(404);
    // The documents still follow the resources' permissions: without work_read nothing is found.
    const blind = await call(`/Queries/${saved.body.id}/Execution`, {
      method: "POST",
      user: { ...user, permissions: ["index_read_owned", "query_read_owned"] },
    });
    expect(blind.body.total).toBe(0);
  });
});
