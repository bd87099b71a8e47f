import type { SelectQueryBuilder } from "kysely";

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
