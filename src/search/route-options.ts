/** What the search area's route files share: the permissions of reads and writes, the 1.1-only routes, the tags. */
import { PERMISSIONS } from "../pkg/permissions";

export const AREA = "search" as const;
export const read = { permission: PERMISSIONS.indexReadOwned, area: AREA } as const;
export const write = { permission: PERMISSIONS.indexWrite, area: AREA } as const;
export const v11 = ["1.1"] as const;
export const indexTags = ["Search indices"];
export const queryTags = ["Saved queries"];
