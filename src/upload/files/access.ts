/**
 * Who may see a file (spec 2.9: the metadata "determines user access"). The rule, in one place:
 *
 * 1. Only files whose bytes are all stored (`state = 'ready'`) exist for clients.
 * 2. Its object owner and its uploader always see it.
 * 3. Anyone else sees it only once metadata ties it to an asset (equipment, main system, plant or
 *    organization): an unattached upload is a private draft. There is no asset access model yet, so
 *    attaching a file publishes it to every holder of the route's permission; when one exists, the
 *    asset check goes into `assetCondition` and `mayAccessAsset` and nothing else changes.
 *
 * Reads need `files_read`, writes `files_write` on top. Setting metadata (who may see the file) is
 * reserved to the owner and the uploader. A file a caller may not see is a 404, never a 403.
 */
import type { Principal } from "../../pkg/auth";
import type { Condition } from "../../pkg/query";

export interface Viewer {
  id: string;
  name: string;
}

export function viewerOf(principal: Principal): Viewer {
  return { id: principal.id, name: principal.name };
}

export interface AccessFacts {
  state: string;
  ownerId: string;
  createdBy: string | null;
  objectType: string | null;
  objectId: string | null;
}

/** Placeholder for an asset access model: every caller may access every asset. */
function mayAccessAsset(_viewer: Viewer, _objectType: string, _objectId: string | null): boolean {
  return true;
}

export function isPersonal(viewer: Viewer, file: Pick<AccessFacts, "ownerId" | "createdBy">): boolean {
  return file.ownerId === viewer.id || file.createdBy === viewer.id;
}

export function maySee(viewer: Viewer, file: AccessFacts): boolean {
  if (file.state !== "ready") return false;
  if (isPersonal(viewer, file)) return true;
  return file.objectType !== null && mayAccessAsset(viewer, file.objectType, file.objectId);
}

/** The same rule as SQL over the files alias `f`, for lists. */
export function visibleCondition(viewer: Viewer): Condition {
  return (values) => {
    const me = values.value(viewer.id);
    return `(f.state = 'ready' AND (f.owner_id = ${me} OR f.created_by = ${me} OR ${assetCondition()}))`;
  };
}

function assetCondition(): string {
  return "f.object_type IS NOT NULL";
}
