/**
 * API versions are chosen per request with the `api-version` header, per area of the interface, as
 * the original platform did. An absent header means the latest version of the area.
 */
import type { RouteStep } from "../env";
import { ApiError } from "./errors";
import { originalServiceFor, originalVersions, originalVersionsOf } from "./original-services";

export const API_AREAS = {
  properties: ["1.0"],
  workManagement: ["1.0"],
  media: ["1.0"],
  dataProcessing: ["1.2"],
  monitoring: ["1.0"],
  upload: ["1.0"],
  search: ["1.0", "1.1"],
  platform: ["1.0"],
  /** Measurements (issue 35): the original Signals service's 1.2, as its client sends it. */
  signals: ["1.2"],
  /** The directory of users (GET /Users), the original identity service's 1.0. */
  identity: ["1.0"],
} as const satisfies Record<string, readonly string[]>;

export type ApiArea = keyof typeof API_AREAS;

/** Every version a client may send: the areas' own and those of the original product's services (./original-services.ts). */
export function knownVersions(): string[] {
  return [...new Set([...Object.values(API_AREAS).flat(), ...originalVersions()])];
}

/**
 * Resolves the requested version for a route; `versions` narrows the area's list for one route. A
 * version the original product's service of this route sent (ORIGINAL_SERVICES: assets 1.4 on
 * /Plants and /Categories, files 1.3 and 1.2 on /Files, ...) is answered as the route's current one;
 * `api-supported-versions` names the route's own versions.
 */
export function apiVersion(area: ApiArea, versions: readonly string[] = API_AREAS[area]): RouteStep {
  const supported = versions.join(", ");
  const latest = versions[versions.length - 1] as string;
  return (c) => {
    const sent = c.req.header("api-version")?.trim();
    let requested = sent || latest;
    if (sent && !versions.includes(sent)) {
      if (originalServiceFor(c.req.routePath, sent) === undefined) {
        const originals = originalVersionsOf(c.req.routePath).filter((o) => !versions.includes(o.version));
        const also =
          originals.length > 0
            ? `; also accepted, as the original product's services sent them: ` +
              `${originals.map((o) => `${o.version} (${o.service})`).join(", ")}`
            : "";
        throw new ApiError(
          "UnsupportedApiVersion",
          `API version '${sent}' is not supported by ${c.req.method} ${c.req.routePath}; supported: ${supported}${also}.`,
          {
            headers: { "api-supported-versions": supported },
          },
        );
      }
      requested = latest;
    }
    c.set("apiVersion", requested);
    c.header("api-supported-versions", supported);
  };
}
