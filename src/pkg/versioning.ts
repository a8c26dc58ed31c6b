/**
 * API versions are chosen per request with the `api-version` header, per area of the interface, as
 * the original platform did. An absent header means the latest version of the area.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { ApiError } from "./errors";

export const API_AREAS = {
  properties: ["1.0"],
  workManagement: ["1.0"],
  media: ["1.0"],
  dataProcessing: ["1.2"],
  monitoring: ["1.0"],
  upload: ["1.0"],
  search: ["1.0", "1.1"],
  platform: ["1.0"],
  /** The directory of users (GET /Users), the original identity service's 1.0. */
  identity: ["1.0"],
} as const satisfies Record<string, readonly string[]>;

export type ApiArea = keyof typeof API_AREAS;

/**
 * Versions the original product's client sends that this service answers as one of its own
 * (original-client.md): files and data types 1.3 (older clients: data upload 1.2) are upload 1.0;
 * the asset catalogue's 1.4 is work management 1.0. The answer names the version it used in
 * `api-supported-versions` as usual.
 */
export const VERSION_ALIASES: Partial<Record<ApiArea, Record<string, string>>> = {
  upload: { "1.2": "1.0", "1.3": "1.0" },
  workManagement: { "1.4": "1.0" },
};

/** Every version a client may send: the areas' own and the aliases. */
export function knownVersions(): string[] {
  return [...new Set([...Object.values(API_AREAS).flat(), ...Object.values(VERSION_ALIASES).flatMap((a) => Object.keys(a ?? {}))])];
}

export function latestVersion(area: ApiArea): string {
  const versions = API_AREAS[area];
  return versions[versions.length - 1] as string;
}

/** Resolves the requested version for a route; `versions` narrows the area's list for one route. */
export function apiVersion(area: ApiArea, versions: readonly string[] = API_AREAS[area]): MiddlewareHandler<AppEnv> {
  const supported = versions.join(", ");
  const latest = versions[versions.length - 1] as string;
  return async (c, next) => {
    const sent = c.req.header("api-version")?.trim();
    const requested = sent ? (VERSION_ALIASES[area]?.[sent] ?? sent) : sent;
    if (requested && !versions.includes(requested)) {
      throw new ApiError(
        "UnsupportedApiVersion",
        `API version '${requested}' is not supported by ${c.req.method} ${c.req.routePath}; supported: ${supported}.`,
        { headers: { "api-supported-versions": supported } },
      );
    }
    c.set("apiVersion", requested || latest);
    c.header("api-supported-versions", supported);
    await next();
  };
}
