/**
 * The contract every resource keeps, in one small kit:
 *   - a read is a `Versioned<T>`: the value and the ETag token of its row;
 *   - a write names the version it read: `assertVersion` refuses at once when the caller's If-Match
 *     names another (412), and the write statement's own WHERE names that version, so a write that
 *     raced in between is a 412 too (`commitVersioned` checks the statement changed its row);
 *   - the outbox event goes in the same batch as the change (`guardedOutboxStatements`), so an event is
 *     written exactly when its change is;
 *   - a whole-object PUT takes the resource's own read shape back (`updateBodyOf`): read-only fields
 *     are accepted and ignored, marked readOnly in the OpenAPI document, and any other key is a 400;
 *   - a write that lost a race to another writer is read and applied again (`retryWrite`), so writes
 *     without If-Match are last-writer-wins and never see 412.
 */
import { z } from "@hono/zod-openapi";
import { runBatch, type WriteContext } from "./db";
import { ApiError } from "./errors";
import { preconditionFailed } from "./etag";

/** A value as stored, with the ETag token of its row. */
export interface Versioned<T> {
  value: T;
  etag: string;
}

/**
 * Refuses (412) a write whose If-Match names another version than the one read. Returns that
 * version, for the write statement's `WHERE ... AND etag = ?` (the check inside the statement).
 */
export function assertVersion(ctx: Pick<WriteContext, "expectedEtag">, currentEtag: string): string {
  if (ctx.expectedEtag !== undefined && ctx.expectedEtag !== currentEtag) throw preconditionFailed();
  return currentEtag;
}

/**
 * Runs a versioned write's batch: its first statement updates or deletes the entity row `WHERE id =
 * ? AND etag = ?` (the version from `assertVersion`), the others follow it (the guarded outbox event
 * among them). A first statement that changed no row means the row moved on or went away meanwhile:
 * 412, and D1 applied nothing a guarded event depends on. `onUnique` maps a unique violation.
 */
export async function commitVersioned(
  ctx: Pick<WriteContext, "db">,
  statements: D1PreparedStatement[],
  onUnique?: () => ApiError,
): Promise<D1Result[]> {
  const results = await runBatch(ctx.db, statements, onUnique);
  // At least one: D1 counts the rows a delete's ON DELETE CASCADE removed along with it.
  if ((results[0]?.meta.changes ?? 0) < 1) throw preconditionFailed();
  return results;
}

/** How often {@link retryWrite} tries a write unless told otherwise. */
const WRITE_ATTEMPTS = 10;

const racedTooOften = () =>
  new ApiError(
    "Conflict",
    "Other writers changed the resource while this write was applied; send it again (or read it and send If-Match).",
    {
      headers: { "retry-after": "1" },
    },
  );

/** What a write of {@link retryWrite} answers when its own guards failed: read again and write again. */
export const READ_AGAIN: unique symbol = Symbol("read again");

/**
 * The one write retry of the service. A write reads what it changes and guards its batch by what it
 * read, so a concurrent writer in between makes the batch change nothing; `write` then answers
 * {@link READ_AGAIN} (its own guards failed: a template revision it instantiates changed, say) or throws
 * 412 (its versioned statement changed no row, see {@link commitVersioned}). Either way it is read and
 * applied again, after a short random pause that grows with each attempt, except that a 412 stands
 * when the caller sent If-Match: the caller named the version it meant, and a fresh read now finds
 * another one (RFC 9110: without a precondition, the last writer wins and no 412 is ever answered).
 * When other writers keep winning, the answer is `exhausted()` (by default a 409 with Retry-After).
 * Only `write` runs again: the request is not dispatched a second time (authentication, limits and
 * side effects of the request run once).
 */
export async function retryWrite<T>(
  ctx: Pick<WriteContext, "expectedEtag">,
  write: (attempt: number) => Promise<T | typeof READ_AGAIN>,
  options: { attempts?: number; exhausted?: () => ApiError } = {},
): Promise<T> {
  const attempts = options.attempts ?? WRITE_ATTEMPTS;
  for (let attempt = 1; ; attempt++) {
    try {
      const done = await write(attempt);
      if (done !== READ_AGAIN) return done;
    } catch (error) {
      const lostRace = error instanceof ApiError && error.code === "PreconditionFailed" && ctx.expectedEtag === undefined;
      if (!lostRace) throw error;
    }
    if (attempt >= attempts) throw (options.exhausted ?? racedTooOften)();
    await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 15 * attempt));
  }
}

/** What a read-only field of a PUT body is: anything, optional, documented as such. */
function readOnlyField(description?: string) {
  return z
    .unknown()
    .optional()
    .openapi({
      readOnly: true,
      description: `Read-only${description ? ` (${description})` : ""}: accepted as the GET returned it and ignored.`,
    });
}

/**
 * Another spelling of a writable field that clients send (the spec's own, or an original client's):
 * `of` is the canonical field the answer uses, `schema` what the spelling takes, `convert` how its
 * value becomes the canonical one's (e.g. `{ id }` to the id).
 */
export interface Spelling {
  of: string;
  schema: z.ZodType;
  convert?: (value: unknown) => unknown;
}

interface BodyOptions {
  /** The resource's read shape: its other fields are accepted and ignored (a whole-object PUT). */
  read?: z.ZodObject<z.ZodRawShape>;
  /** Why a read-only field is read-only, where that helps (e.g. "typeId counts"). */
  readOnlyNotes?: Record<string, string>;
  spellings?: Record<string, Spelling>;
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The schema without its default (an absent value stays absent). */
function withoutDefault(schema: z.ZodType): z.ZodType {
  return schema instanceof z.ZodDefault ? (schema.unwrap() as z.ZodType) : schema;
}

/**
 * A request body of a resource: its `writable` fields (with `id` first for a whole-object PUT, when
 * `read` is given), every other field of the read shape accepted and ignored, and other spellings of
 * writable fields taken as the canonical ones (the same value under both is fine; different values
 * are a 400 naming the spelling). Any other key is a 400 naming it. The parsed value holds the
 * canonical writable fields only.
 */
export function resourceBody<W extends z.ZodRawShape>(writable: W, name: string, options: BodyOptions = {}) {
  const spellings = options.spellings ?? {};
  const aliased = new Set(Object.values(spellings).map((s) => s.of));
  const readOnlyKeys = options.read
    ? Object.keys(options.read.shape).filter((key) => !(key in writable) && !(key in spellings) && key !== "id")
    : [];
  // A whole-object PUT names its resource by `id` (a UUID unless `writable` says otherwise).
  const shape: Record<string, z.ZodType> = { ...(options.read ? { id: z.uuid() } : {}) };
  // A field with another spelling may come under either name (neither takes its default here, or a
  // default would disagree with the other spelling): which is required, or defaulted, is settled below.
  for (const [key, field] of Object.entries(writable))
    shape[key] = aliased.has(key) ? withoutDefault(field as z.ZodType).optional() : (field as z.ZodType);
  for (const [key, spelling] of Object.entries(spellings)) {
    shape[key] = withoutDefault(spelling.schema)
      .optional()
      .openapi({ description: `Another spelling of ${spelling.of}; answers use ${spelling.of}.` });
  }
  for (const key of readOnlyKeys) shape[key] = readOnlyField(options.readOnlyNotes?.[key]);
  return z
    .object(shape)
    .strict()
    .openapi(name)
    .transform((body, ctx) => {
      const kept: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(body)) if (!readOnlyKeys.includes(key) && !(key in spellings)) kept[key] = value;
      for (const [key, spelling] of Object.entries(spellings)) {
        const given = (body as Record<string, unknown>)[key];
        if (given === undefined) continue;
        const value = spelling.convert ? spelling.convert(given) : given;
        if (kept[spelling.of] !== undefined && !sameValue(kept[spelling.of], value)) {
          ctx.addIssue({
            code: "custom",
            path: [key],
            message: `${key} is another spelling of ${spelling.of}, and the two name different values; send one.`,
            params: { rule: "conflict" },
          });
          continue;
        }
        kept[spelling.of] = value;
      }
      // A canonical field no spelling filled: what it says when absent (its default, or required).
      for (const key of aliased) {
        if (kept[key] !== undefined) continue;
        const absent = (writable[key] as z.ZodType).safeParse(undefined);
        if (absent.success) kept[key] = absent.data;
        else ctx.addIssue({ code: "custom", path: [key], message: `${key} is required.`, params: { rule: "required" } });
      }
      return kept as z.output<z.ZodObject<W>> & { id: string };
    });
}

/** The body of a whole-object `PUT /{Resource}` (id in the body): `resourceBody` with the read shape. */
export function updateBodyOf<R extends z.ZodRawShape, W extends z.ZodRawShape>(
  read: z.ZodObject<R>,
  writable: W,
  name: string,
  readOnlyNotes: Record<string, string> = {},
  spellings: Record<string, Spelling> = {},
) {
  return resourceBody(writable, name, { read: read as unknown as z.ZodObject<z.ZodRawShape>, readOnlyNotes, spellings });
}
