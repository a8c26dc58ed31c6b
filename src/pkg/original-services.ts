/**
 * The original product ran one service per area, each with its own `api-version`, and several of
 * them served the same shared resources (Categories, Classifications, PropertyDefinitions). Its
 * public client (ZEVIT-AIH-SDK 0.5.13) sends each service's version with every call. This table says,
 * per original service, the versions it answered and the resources (first path segments) it served
 * that exist here; `apiVersion` (./versioning.ts) accepts such a version on such a route and answers
 * it with the route's current version. Any other version stays UnsupportedApiVersion.
 *
 * Only the services of the areas this service implements are listed. Designations (1.1: Categories,
 * Classifications) and Risks (1.0) are other products; Signals is served here (issue 35) on its own
 * resources only: its versions are not accepted on the shared resources (Categories, PropertyDefinitions).
 */
export interface OriginalService {
  /** The service as the client names it (its package, and the host name part it calls). */
  service: string;
  /** The versions its clients send, newest first. */
  versions: readonly string[];
  /** First path segments of the routes it served that exist here (compared without regard to case). */
  resources: readonly string[];
}

const SHARED = ["Categories", "Classifications", "PropertyDefinitions"] as const;

export const ORIGINAL_SERVICES: readonly OriginalService[] = [
  {
    service: "Assets (assets)",
    versions: ["1.4"],
    resources: ["Plants", "MainSystems", "MainSystem", "Equipment", "Organizations", "Organization", "Assets", ...SHARED],
  },
  { service: "Files (du, data upload)", versions: ["1.3", "1.2"], resources: ["Files", "DataTypes"] },
  { service: "DataProcessing (dp)", versions: ["1.2"], resources: ["JobDefinitions", "JobConfigurations", "Jobs"] },
  { service: "Monitors (monitors)", versions: ["1.0"], resources: ["Models", "ModelDefinitions", "Monitors", "MonitorJobs", ...SHARED] },
  {
    service: "Maintenance (quality)",
    versions: ["1.0"],
    resources: [
      "Deviations",
      "WorkItems",
      "Activities",
      "ActivityTemplates",
      "ActivityTypes",
      "WorkTemplates",
      "Medias",
      "MediaReferences",
      ...SHARED,
    ],
  },
  { service: "Identity (idsvr)", versions: ["1.0"], resources: ["Users"] },
  // Its base class sent 1.0 before its resources pinned 1.2 (issue 35); its shared resources stay other products'.
  {
    service: "Signals (signals)",
    versions: ["1.0"],
    resources: ["Channels", "ChannelTypes", "DataOrigins", "ChannelAvailabilities", "signals"],
  },
];

const byResource = new Map<string, { service: string; version: string }[]>();
for (const { service, versions, resources } of ORIGINAL_SERVICES) {
  for (const resource of resources) {
    const key = resource.toLowerCase();
    byResource.set(key, [...(byResource.get(key) ?? []), ...versions.map((version) => ({ service, version }))]);
  }
}

/** The first segment of a route path (`/Classifications/:id/Elements` is `classifications`). */
function resourceOf(routePath: string): string {
  return (routePath.split("/").find((segment) => segment !== "") ?? "").toLowerCase();
}

/** The original service that sent `version` for the route at `routePath`, if one did. */
export function originalServiceFor(routePath: string, version: string): string | undefined {
  return byResource.get(resourceOf(routePath))?.find((entry) => entry.version === version)?.service;
}

/** The original versions accepted on a route, with their services, e.g. `1.4 (Assets)`. */
export function originalVersionsOf(routePath: string): { service: string; version: string }[] {
  return byResource.get(resourceOf(routePath)) ?? [];
}

/** Every version an original service sent. */
export function originalVersions(): string[] {
  return [...new Set(ORIGINAL_SERVICES.flatMap((s) => s.versions))];
}
