/**
 * Issue 21 §3: the api-version each of the original product's services sent (ZEVIT-AIH-SDK 0.5.13:
 * assets 1.4, files 1.3 and 1.2, data processing 1.2, monitors 1.0, maintenance 1.0, identity 1.0) is
 * accepted on the routes that service served and answered as the route's current version; any
 * other version stays UnsupportedApiVersion. The route part is generated from the OpenAPI document.
 */
import { describe, expect, it } from "vitest";
import { ORIGINAL_SERVICES, originalServiceFor } from "../../src/pkg/original-services";
import { knownVersions } from "../../src/pkg/versioning";
import { call } from "../support/http";

interface Operation {
  "x-api-versions"?: string[];
  security?: unknown[];
}

const doc = (await call("/openapi.json", { anonymous: true })).body as { paths: Record<string, Record<string, Operation>> };
const concrete = (path: string) => path.replace(/\{[^}]+\}/g, "0b9f3c5e-8a4f-4d6c-9a51-2c1f0e6a7b10");
const resource = (path: string) => path.split("/")[1] ?? "";
const served = new Set(ORIGINAL_SERVICES.flatMap((s) => s.resources.map((r) => r.toLowerCase())));
// Not the public routes (/health: `security: []`), which take no api-version.
const getRoutes = Object.keys(doc.paths).filter(
  (path) => doc.paths[path]!.get && doc.paths[path]!.get!.security?.length !== 0 && !path.startsWith("/swagger"),
);

/** Every GET route of a resource an original service served, with each version that service sent. */
const accepted = getRoutes.flatMap((path) =>
  ORIGINAL_SERVICES.filter((s) => s.resources.some((r) => r.toLowerCase() === resource(path).toLowerCase())).flatMap((s) =>
    s.versions.map((version) => ({ path, version, service: s.service })),
  ),
);

/** Every GET route paired with each known version that neither it nor an original service of its resource answers. */
const refused = getRoutes.flatMap((path) => {
  const own = doc.paths[path]!.get!["x-api-versions"];
  return knownVersions()
    .filter((version) => originalServiceFor(path, version) === undefined && !(own ?? []).includes(version))
    .map((version) => ({ path, version }));
});

describe("api-version values of the original services", () => {
  it("covers every resource the services served here", () => {
    const resources = new Set(getRoutes.map((p) => resource(p).toLowerCase()));
    for (const service of ORIGINAL_SERVICES) {
      for (const name of service.resources)
        if (name !== "Users") expect(resources, `${service.service}: ${name}`).toContain(name.toLowerCase());
    }
    expect(accepted.length).toBeGreaterThan(60);
  });

  it.each(accepted)("GET $path accepts $version ($service)", async ({ path, version }) => {
    const res = await call(concrete(path), { headers: { "api-version": version } });
    expect(res.text).not.toContain("UnsupportedApiVersion");
  });

  it.each(refused.filter(({ path, version }) => served.has(resource(path).toLowerCase()) || version === "1.4"))(
    "GET $path refuses $version",
    async ({ path, version }) => {
      const res = await call(concrete(path), { headers: { "api-version": version } });
      // A route whose own versions include it answers it; the rest are UnsupportedApiVersion.
      if (res.status === 400 && res.body.code === "UnsupportedApiVersion") return;
      expect(res.headers.get("api-supported-versions")?.split(", "), res.text).toContain(version);
    },
  );

  it("answers the mapped version as the route's current one and names the route's own versions", async () => {
    const res = await call("/Categories", { headers: { "api-version": "1.4" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("api-supported-versions")).toBe("1.0");
    expect((await call("/Files", { headers: { "api-version": "1.3" } })).headers.get("api-supported-versions")).toBe("1.0");
  });

  it("keeps a version another service sent, or one no service sent, UnsupportedApiVersion, and says what the route accepts", async () => {
    for (const [path, version] of [
      ["/Deviations", "1.4"], // assets never served deviations
      ["/Files", "1.4"],
      ["/Categories", "1.2"], // Signals' version: another product
      ["/Categories", "1.1"], // Designations' version: another product
      ["/JobDefinitions", "1.0"],
      ["/Plants", "1.3"],
      ["/Categories", "9.9"],
    ] as const) {
      const res = await call(path, { headers: { "api-version": version } });
      expect(res.status, `${path} ${version}`).toBe(400);
      expect(res.body.code).toBe("UnsupportedApiVersion");
    }
    const detail = (await call("/Categories", { headers: { "api-version": "9.9" } })).body.detail as string;
    expect(detail).toContain("supported: 1.0");
    expect(detail).toContain("1.4 (Assets");
  });

  it(
    "the client's shared-resource calls: Categories, Classifications and PropertyDefinitions with the assets " +
      "service's 1.4, the maintenance and monitors services' 1.0",
    async () => {
      const category = await call("/Categories", {
        method: "POST",
        body: { name: `v14 ${crypto.randomUUID().slice(0, 8)}` },
        headers: { "api-version": "1.4" },
      });
      expect(category.status, category.text).toBe(201);
      for (const version of ["1.4", "1.0"]) {
        for (const path of ["/Categories", "/Classifications", "/PropertyDefinitions", `/Categories/${category.body.id}`]) {
          expect((await call(path, { headers: { "api-version": version } })).status, `${path} ${version}`).toBe(200);
        }
      }
      const put = await call("/Categories", {
        method: "PUT",
        body: { id: category.body.id, name: `v14 renamed ${crypto.randomUUID().slice(0, 8)}` },
        headers: { "api-version": "1.4" },
      });
      expect(put.status, put.text).toBe(200);
      expect(
        (
          await call(`/Categories/${category.body.id}`, {
            method: "DELETE",
            headers: { "api-version": "1.4", "content-type": "application/json" },
          })
        ).status,
      ).toBe(204);
    },
  );
});
