import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { loadClassificationElements } from "../../src/properties/classifications/elements";
import { ClassificationSchema } from "../../src/properties/classifications/schema";
import { call } from "../support/http";
import {
  classificationBody,
  createClassification,
  outboxActions,
  seedClassificationValue,
  seedPropertyDefinition,
  severityElements,
  uniqueName,
  type ElementInput,
} from "../support/factories/types";

/** A chain of `depth` nested elements: e0 > e1 > ... */
function chain(depth: number, prefix = "level"): ElementInput[] {
  let children: ElementInput[] = [];
  for (let i = depth - 1; i >= 0; i--) children = [{ name: `${prefix}-${i}`, children }];
  return children;
}

/** `count` elements spread over two levels: groups of 10, each a parent of 9 children. */
function wideTree(count: number): ElementInput[] {
  const roots: ElementInput[] = [];
  for (let made = 0; made < count;) {
    const root: ElementInput = { name: `group-${made}`, code: `G${made}`, grade: made / 10, children: [] };
    made++;
    for (let k = 0; k < 9 && made < count; k++, made++) root.children!.push({ name: `item-${made}`, order: made, color: "#abc" });
    roots.push(root);
  }
  return roots;
}

const countElements = (elements: ElementInput[]): number => elements.reduce((n, e) => n + 1 + countElements(e.children ?? []), 0);

describe("classifications: create, read, replace, delete", () => {
  it("creates a classification with a nested tree and reads it back with its ETag", async () => {
    const body = classificationBody();
    const res = await call("/Classifications", { method: "POST", body });
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBe(`/Classifications/${res.body.id}`);
    expect(res.headers.get("etag")).toMatch(/^"[^"]+"$/);
    expect(ClassificationSchema.safeParse(res.body).success).toBe(true);
    expect(res.body).toMatchObject({ name: body.name, format: "valueHierarchy", description: "How bad it is." });
    expect(res.body.elements).toEqual([
      { name: "Low", displayName: null, code: null, applierCode: null, color: "#4CAF50", order: 1, grade: 1, children: [] },
      {
        name: "Medium",
        displayName: null,
        code: null,
        applierCode: null,
        color: "#FFC107",
        order: 2,
        grade: 2.5,
        children: [
          { name: "Medium-Pitting", displayName: null, code: "MP", applierCode: null, color: null, order: null, grade: null, children: [] },
        ],
      },
      { name: "High", displayName: null, code: null, applierCode: null, color: "#F44336", order: 3, grade: 5, children: [] },
    ]);

    const read = await call(`/Classifications/${res.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
    expect(read.headers.get("etag")).toBe(res.headers.get("etag"));
    const again = await call(`/Classifications/${res.body.id}`, { headers: { "if-none-match": res.headers.get("etag")! } });
    expect(again.status).toBe(304);
  });

  it("accepts format valueHierarchy explicitly and defaults elements to an empty tree", async () => {
    const res = await call("/Classifications", { method: "POST", body: { name: uniqueName("Empty"), format: "valueHierarchy" } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ format: "valueHierarchy", elements: [], description: null });
  });

  it("replaces the whole tree on PUT, keeps sibling order, and accepts a read sent back as is", async () => {
    const created = await createClassification();
    const elements = [{ name: "High", children: [{ name: "Critical", displayName: "Critical!", applierCode: "C1" }] }, { name: "Low" }];
    const res = await call("/Classifications", { method: "PUT", body: { id: created.id, name: created.name, elements } });
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).not.toBe(created.etag);
    expect(res.body.elements.map((e: ElementInput) => e.name)).toEqual(["High", "Low"]);
    expect(res.body.elements[0].children[0]).toMatchObject({ name: "Critical", displayName: "Critical!", applierCode: "C1" });
    const stored = await env.DB.prepare("SELECT count(*) AS n FROM classification_elements WHERE classification_id = ?1")
      .bind(created.id)
      .first<{ n: number }>();
    expect(stored?.n).toBe(3);

    const read = await call(`/Classifications/${created.id}`);
    const sentBack = await call("/Classifications", { method: "PUT", body: read.body, headers: { "if-match": read.headers.get("etag")! } });
    expect(sentBack.status).toBe(200);
    expect(sentBack.body.elements).toEqual(read.body.elements);
  });

  it("deletes a classification and its elements", async () => {
    const created = await createClassification();
    const res = await call(`/Classifications/${created.id}`, { method: "DELETE", headers: { "if-match": created.etag } });
    expect(res.status).toBe(204);
    expect((await call(`/Classifications/${created.id}`)).status).toBe(404);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM classification_elements WHERE classification_id = ?1")
      .bind(created.id)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
  });

  it("round-trips 300 elements (inserts chunked under D1's parameter limit)", async () => {
    const elements = wideTree(300);
    expect(countElements(elements)).toBe(300);
    const created = await call("/Classifications", { method: "POST", body: { name: uniqueName("Large"), elements } });
    expect(created.status).toBe(201);
    const read = await call(`/Classifications/${created.body.id}`);
    expect(read.body.elements).toHaveLength(30);
    expect(countElements(read.body.elements)).toBe(300);
    expect(read.body.elements[29].children[8]).toMatchObject({ name: "item-299", order: 299, color: "#abc" });
    expect(read.body.elements[3]).toMatchObject({ name: "group-30", code: "G30", grade: 3 });
    const replaced = await call("/Classifications", {
      method: "PUT",
      body: { id: created.body.id, name: created.body.name, elements: wideTree(299) },
    });
    expect(replaced.status).toBe(200);
    expect(countElements((await call(`/Classifications/${created.body.id}`)).body.elements)).toBe(299);
  });

  it("accepts the limits exactly: 10 levels and 2000 elements", async () => {
    expect((await call("/Classifications", { method: "POST", body: { name: uniqueName("Deep"), elements: chain(10) } })).status).toBe(201);
    const res = await call("/Classifications", { method: "POST", body: { name: uniqueName("Huge"), elements: wideTree(2000) } });
    expect(res.status).toBe(201);
    expect(countElements((await call(`/Classifications/${res.body.id}`)).body.elements)).toBe(2000);
  });
});

describe("classifications: validation", () => {
  const tooDeep = chain(11);
  const deepestPath = `body.elements.0${".children.0".repeat(10)}`;
  describe.each([
    ["a bad HEX colour", { elements: [{ name: "A", color: "#12345" }] }, "body.elements.0.color", "invalid_format"],
    [
      "a colour name",
      { elements: [{ name: "A", children: [{ name: "B", color: "red" }] }] },
      "body.elements.0.children.0.color",
      "invalid_format",
    ],
    [
      "an element name used twice in a nested tree",
      {
        elements: [
          { name: "A", children: [{ name: "B" }] },
          { name: "C", children: [{ name: "D" }, { name: "B" }] },
        ],
      },
      "body.elements.1.children.1.name",
      "unique",
    ],
    ["an element name used twice in another case", { elements: [{ name: "Low" }, { name: "LOW" }] }, "body.elements.1.name", "unique"],
    ["more than 10 levels", { elements: tooDeep }, deepestPath, "maxDepth"],
    ["more than 2000 elements", { elements: wideTree(2001) }, "body.elements", "maxElements"],
    ["an empty element name", { elements: [{ name: " " }] }, "body.elements.0.name", "too_small"],
    ["a fractional order", { elements: [{ name: "A", order: 1.5 }] }, "body.elements.0.order", "invalid_type"],
    ["an unknown element field", { elements: [{ name: "A", colour: "#fff" }] }, "body.elements.0", "unrecognized_keys"],
    ["an unknown format", { format: "flatList" }, "body.format", "invalid_value"],
    ["a missing name", { name: undefined }, "body.name", "invalid_type"],
  ])("POST with %s", (_label, overrides, field, rule) => {
    it(`is a 400 naming ${field} (${rule})`, async () => {
      const res = await call("/Classifications", { method: "POST", body: classificationBody(overrides) });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("ValidationFailed");
      expect(res.body.errors).toContainEqual(expect.objectContaining({ field, rule }));
    });
  });

  it("refuses a duplicate name regardless of case with 409 naming body.name, on POST and PUT", async () => {
    const first = await createClassification();
    const dup = await call("/Classifications", { method: "POST", body: classificationBody({ name: first.name.toUpperCase() }) });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe("Conflict");
    expect(dup.body.errors).toContainEqual(expect.objectContaining({ field: "body.name", rule: "unique" }));
    const other = await createClassification();
    const rename = await call("/Classifications", { method: "PUT", body: { id: other.id, name: first.name.toLowerCase() } });
    expect(rename.status).toBe(409);
    expect(rename.body.errors).toContainEqual(expect.objectContaining({ field: "body.name", rule: "unique" }));
  });

  it("answers 404 for an unknown id on GET, PUT and DELETE", async () => {
    const id = crypto.randomUUID();
    expect((await call(`/Classifications/${id}`)).status).toBe(404);
    expect((await call("/Classifications", { method: "PUT", body: { id, name: uniqueName("Nope") } })).status).toBe(404);
    expect((await call(`/Classifications/${id}`, { method: "DELETE" })).status).toBe(404);
  });
});

describe("classifications: in use", () => {
  it("refuses to delete a classification a property definition references (409 InUse)", async () => {
    const classification = await createClassification();
    await seedPropertyDefinition({ classificationId: classification.id });
    const res = await call(`/Classifications/${classification.id}`, { method: "DELETE" });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("InUse");
    expect((await call(`/Classifications/${classification.id}`)).status).toBe(200);
  });

  it("refuses to remove or rename an element a stored value names, naming the element", async () => {
    const classification = await createClassification();
    const definition = await seedPropertyDefinition({ classificationId: classification.id });
    await seedClassificationValue(definition, "Medium-Pitting");
    const removed = await call("/Classifications", {
      method: "PUT",
      body: { id: classification.id, name: classification.name, elements: [{ name: "Medium" }] },
    });
    expect(removed.status).toBe(409);
    expect(removed.body.code).toBe("InUse");
    expect(removed.body.errors).toEqual([expect.objectContaining({ field: "body.elements", rule: "inUse" })]);
    expect(removed.body.errors[0].message).toContain("'Medium-Pitting'");

    const renamed = severityElements();
    renamed[1]!.children = [{ name: "Medium pitting" }];
    const res = await call("/Classifications", {
      method: "PUT",
      body: { id: classification.id, name: classification.name, elements: renamed },
    });
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain("'Medium-Pitting'");
  });

  it("refuses to remove an element that is a definition's default value", async () => {
    const classification = await createClassification();
    const definition = await seedPropertyDefinition({ classificationId: classification.id, defaultValue: "High" });
    const res = await call("/Classifications", {
      method: "PUT",
      body: { id: classification.id, name: classification.name, elements: [{ name: "Low" }, { name: "Medium" }] },
    });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("InUse");
    expect(res.body.errors[0].message).toContain(definition.name);
  });

  it("allows removing elements nothing uses and moving used ones elsewhere in the tree", async () => {
    const classification = await createClassification();
    const definition = await seedPropertyDefinition({ classificationId: classification.id, defaultValue: "Low" });
    await seedClassificationValue(definition, "Medium-Pitting");
    const elements = [{ name: "Low", children: [{ name: "Medium-Pitting" }] }];
    const res = await call("/Classifications", { method: "PUT", body: { id: classification.id, name: classification.name, elements } });
    expect(res.status).toBe(200);
    expect(res.body.elements[0].children[0].name).toBe("Medium-Pitting");
  });
});

describe("classifications: concurrency", () => {
  it("answers 412 for a stale If-Match on PUT and DELETE and writes nothing", async () => {
    const created = await createClassification();
    const put = await call("/Classifications", {
      method: "PUT",
      body: { id: created.id, name: uniqueName("Stale"), elements: [] },
      headers: { "if-match": '"stale"' },
    });
    expect(put.status).toBe(412);
    expect(put.body.code).toBe("PreconditionFailed");
    const del = await call(`/Classifications/${created.id}`, { method: "DELETE", headers: { "if-match": '"stale"' } });
    expect(del.status).toBe(412);
    const read = await call(`/Classifications/${created.id}`);
    expect(read.body.elements).toHaveLength(3);
    expect(read.headers.get("etag")).toBe(created.etag);
  });

  it("accepts the current ETag on PUT and then refuses the old one", async () => {
    const created = await createClassification();
    const first = await call("/Classifications", {
      method: "PUT",
      body: { id: created.id, name: created.name, elements: [] },
      headers: { "if-match": created.etag },
    });
    expect(first.status).toBe(200);
    const second = await call("/Classifications", {
      method: "PUT",
      body: { id: created.id, name: created.name, elements: [] },
      headers: { "if-match": created.etag },
    });
    expect(second.status).toBe(412);
  });
});

describe("classifications: list", () => {
  it("lists classifications with their trees, by name, with ids, searchText, order and paging", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const a = await createClassification({ name: `A list ${tag}` });
    const b = await createClassification({ name: `b list ${tag}`, elements: [{ name: "Only" }] });
    const res = await call(`/Classifications?ids=${a.id},${b.id}`);
    expect(res.status).toBe(200);
    expect(res.body.map((c: { id: string }) => c.id)).toEqual([a.id, b.id]);
    expect(res.body[1].elements).toEqual([expect.objectContaining({ name: "Only", children: [] })]);
    expect(res.body[0].elements).toHaveLength(3);

    const desc = await call(`/Classifications?searchText=${tag}&order=name%20desc`);
    expect(desc.body.map((c: { id: string }) => c.id)).toEqual([b.id, a.id]);
    const page = await call(`/Classifications?searchText=${tag}&skip=1&take=1`);
    expect(page.body.map((c: { id: string }) => c.id)).toEqual([b.id]);
    expect(page.headers.get("x-total-count")).toBeNull();
    const counted = await call(`/Classifications?searchText=${tag}&skip=1&take=1&includeTotal=true`);
    expect(counted.headers.get("x-total-count")).toBe("2");
    const excluded = await call(`/Classifications?searchText=${tag}&excludeIds=${a.id}`);
    expect(excluded.body.map((c: { id: string }) => c.id)).toEqual([b.id]);
  });

  it("answers 400 InvalidQuery for an unknown order field", async () => {
    const res = await call("/Classifications?order=colour%20asc");
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("InvalidQuery");
    expect(res.body.errors[0]).toMatchObject({ field: "query.order", rule: "unknownField" });
  });
});

describe("classifications: events", () => {
  it("writes an outbox event for create, update and delete, but none for a refused write", async () => {
    const created = await createClassification();
    await call("/Classifications", {
      method: "PUT",
      body: { id: created.id, name: created.name, elements: [] },
      headers: { "if-match": '"stale"' },
    });
    await call("/Classifications", { method: "PUT", body: { id: created.id, name: created.name, elements: [{ name: "X" }] } });
    await call(`/Classifications/${created.id}`, { method: "DELETE" });
    expect(await outboxActions("classification", created.id)).toEqual(["created", "updated", "deleted"]);
    const row = await env.DB.prepare("SELECT payload FROM outbox WHERE entity_id = ?1 AND action = 'updated'")
      .bind(created.id)
      .first<{ payload: string }>();
    expect(JSON.parse(row!.payload)).toMatchObject({ id: created.id, name: created.name, elementCount: 1 });
  });
});

describe("classifications: security", () => {
  it("requires a token, properties_read to read and properties_write to write", async () => {
    expect((await call("/Classifications", { anonymous: true })).status).toBe(401);
    expect((await call("/Classifications", { user: { permissions: [] } })).status).toBe(403);
    const readOnly = { permissions: ["properties_read"] };
    expect((await call("/Classifications", { user: readOnly })).status).toBe(200);
    const post = await call("/Classifications", { method: "POST", body: classificationBody(), user: readOnly });
    expect(post.status).toBe(403);
    expect(post.body.code).toBe("Forbidden");
    const created = await createClassification();
    expect((await call(`/Classifications/${created.id}`, { method: "DELETE", user: readOnly })).status).toBe(403);
    expect((await call("/Classifications", { method: "PUT", body: { id: created.id, name: "x" }, user: readOnly })).status).toBe(403);
  });
});

describe("loadClassificationElements", () => {
  it("returns the flat list with paths, parents and depth, and finds an element by exact name", async () => {
    const created = await createClassification();
    const loaded = await loadClassificationElements(env.DB, created.id);
    expect(loaded?.elements.map((e) => e.path.join("/"))).toEqual(["Low", "Medium", "Medium/Medium-Pitting", "High"]);
    expect(loaded?.findElement("Medium-Pitting")).toMatchObject({ parentName: "Medium", depth: 2, code: "MP" });
    expect(loaded?.findElement("High")).toMatchObject({ parentName: null, depth: 1, color: "#F44336", grade: 5, order: 3 });
    expect(loaded?.findElement("high")).toBeUndefined();
  });

  it("returns null for an unknown classification", async () => {
    expect(await loadClassificationElements(env.DB, crypto.randomUUID())).toBeNull();
  });
});
