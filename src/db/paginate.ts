import type { SelectQueryBuilder } from "kysely";
import { z } from "zod";
import { Problem } from "../http/problem.js";

export interface PageRequest {
  limit: number;
  offset: number;
}

export interface Page<Row> {
  total: number;
  items: Row[];
}

// biome-ignore lint/suspicious/noExplicitAny: helpers shared by every table's list query
type AnyQuery = SelectQueryBuilder<any, any, object>;

/** Narrows a list query to rows where any of the columns contains `search` (case-insensitive). */
export function matching<Q>(query: Q, columns: readonly string[], search: string | undefined): Q {
  if (!search) return query;
  const like = `%${search.toLowerCase()}%`;
  return (query as unknown as AnyQuery).where((eb) =>
    eb.or(columns.map((column) => eb(eb.fn("lower", [column]), "like", like))),
  ) as unknown as Q;
}

/** Counts the query's rows and reads one page of them in the given order. */
export async function paged<Row>(
  query: unknown,
  order: readonly [column: string, direction: "asc" | "desc"][],
  page: PageRequest,
): Promise<Page<Row>> {
  const q = query as AnyQuery;
  const total = await q.select((eb) => eb.fn.countAll<number | string>().as("n")).executeTakeFirstOrThrow();
  let rows = q.selectAll();
  for (const [column, direction] of order) rows = rows.orderBy(column, direction);
  const items = (await rows.limit(page.limit).offset(page.offset).execute()) as Row[];
  return { total: Number(total.n), items };
}

// ---------------------------------------------------------------------------------------------
// Keyset pages (issue #21 item 5): a public list never answers more than PAGE_MAX rows, and a page
// after the first is named by a stable cursor (the sort key of the last row it followed), so a row
// written meanwhile neither repeats nor skips a row on the next page, and no OFFSET scan grows with
// the depth of the page.

/** Rows of a public list page when the caller names no `limit` (docs/limits.md "Pages"). */
export const PAGE_DEFAULT = 20;
/** The most rows one page of a public list answers (`limit` above it → 400). */
export const PAGE_MAX = 100;
/** The longest cursor accepted (a cursor is the base64url of a small JSON array). */
export const CURSOR_MAX_CHARS = 512;

/** The query parameters of a paginated list: `limit` (1–100, default 20) and `cursor`. */
export const pageQuerySchema = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(PAGE_MAX)
    .optional()
    .describe(`rows per page, 1-${PAGE_MAX}; default ${PAGE_DEFAULT}`),
  cursor: z
    .string()
    .max(CURSOR_MAX_CHARS)
    .regex(/^[A-Za-z0-9_-]*$/)
    .optional()
    .describe("the `next_cursor` of the previous page; omitted: the first page"),
});

export const nextCursorSchema = z
  .string()
  .nullable()
  .describe("pass it as `cursor` to read the next page; null on the last page");

export interface KeysetRequest {
  limit?: number | undefined;
  cursor?: string | undefined;
}

export interface KeysetPage<Row> {
  items: Row[];
  limit: number;
  next_cursor: string | null;
}

/** 400 `invalid_cursor`: a cursor this list did not hand out. */
export function invalidCursor(): Problem {
  return new Problem(400, "invalid_cursor", "The cursor is not one this list handed out; start again without it.");
}

export function encodeCursor(values: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(values), "utf8").toString("base64url");
}

/** The cursor's sort-key values (as many as `parts`), or 400 `invalid_cursor`. */
export function decodeCursor(cursor: string, parts: number): (string | number)[] {
  let values: unknown;
  try {
    values = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalidCursor();
  }
  if (
    !Array.isArray(values) ||
    values.length !== parts ||
    !values.every((v) => typeof v === "string" || (typeof v === "number" && Number.isSafeInteger(v)))
  ) {
    throw invalidCursor();
  }
  return values as (string | number)[];
}

/** The page size a request asks for, within 1–PAGE_MAX (default PAGE_DEFAULT). */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return PAGE_DEFAULT;
  return Math.min(PAGE_MAX, Math.max(1, Math.trunc(limit)));
}

/**
 * Reads one keyset page of `query` in the given order (the last column must make the order total,
 * e.g. the primary key): the rows after the cursor's key, at most `limit`, and the cursor of the
 * next page (null when none follows). Reads limit + 1 rows to know whether another page exists.
 */
export async function keysetPage<Row>(
  query: unknown,
  order: readonly [column: string, direction: "asc" | "desc"][],
  request: KeysetRequest,
  keyOf: (row: Row) => (string | number)[],
): Promise<KeysetPage<Row>> {
  const limit = pageLimit(request.limit);
  let q = (query as AnyQuery).selectAll();
  if (request.cursor !== undefined && request.cursor !== "") {
    const after = decodeCursor(request.cursor, order.length);
    const [first, direction] = order[0] as [string, "asc" | "desc"];
    // the first column's bound alone lets an index on the order's columns serve the page as a range
    q = q.where(first, direction === "desc" ? "<=" : ">=", after[0]);
    q = q.where((eb) =>
      eb.or(
        order.map(([column, direction], k) =>
          eb.and([
            ...order.slice(0, k).map(([c], j) => eb(c, "=", after[j])),
            eb(column, direction === "desc" ? "<" : ">", after[k]),
          ]),
        ),
      ),
    );
  }
  for (const [column, direction] of order) q = q.orderBy(column, direction);
  const rows = (await q.limit(limit + 1).execute()) as Row[];
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, limit, next_cursor: rows.length > limit && last ? encodeCursor(keyOf(last)) : null };
}

/** A text cut to at most `max` characters (whole code points) with "…" when cut. */
export function excerpt(text: string, max: number): { text: string; truncated: boolean } {
  const points = Array.from(text);
  if (points.length <= max) return { text, truncated: false };
  return {
    text: `${points
      .slice(0, Math.max(0, max - 1))
      .join("")
      .trimEnd()}…`,
    truncated: true,
  };
}
