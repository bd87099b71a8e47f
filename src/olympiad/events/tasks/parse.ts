import type { Value, ValueKind } from "./metrics.js";

/**
 * Reading prediction files and answer keys (docs/olympiad-tasks.md "Files"): CSV (RFC 4180, a
 * header row naming the id column and the value column) or JSON lines (one object per line with
 * those two keys). Every problem names its row (CSV: the record number, the header being row 1;
 * JSON lines: the line number) and its column, so a submitter can fix the file at once.
 */

export type FileFormat = "csv" | "jsonl";

export interface Issue {
  /** CSV: record number (header = 1); JSON lines: line number; null for a problem of the whole file */
  row: number | null;
  /** the column (CSV header name or JSON key), or null */
  column: string | null;
  problem: string;
}

export interface TableRow {
  row: number;
  id: string;
  value: Value;
}

export type Parsed = { ok: true; rows: TableRow[] } | { ok: false; issues: Issue[] };

export interface Columns {
  idColumn: string;
  valueColumn: string;
  kind: ValueKind;
}

/** Issues listed per answer (the first ones; the count says how many there were). */
export const MAX_ISSUES = 20;
export const MAX_ID_CHARS = 200;
export const MAX_LABEL_CHARS = 1000;
/** items of one ranking (MAP@k reads at most k of them) */
export const MAX_RANKING_ITEMS = 100;
/** |x| of a number value: well inside float64's exact integers, so errors stay finite */
export const MAX_ABS_NUMBER = 1e15;

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

class Collector {
  issues: Issue[] = [];
  total = 0;
  add(row: number | null, column: string | null, problem: string) {
    this.total++;
    if (this.issues.length < MAX_ISSUES) this.issues.push({ row, column, problem });
  }
}

/** RFC 4180 records with the number of the record (1-based); an unclosed quote is an issue. */
function csvRecords(text: string, out: Collector): string[][] {
  const records: string[][] = [];
  let field = "";
  let record: string[] = [];
  let quoted = false;
  let fieldStart = true;
  let i = 0;
  const endRecord = () => {
    record.push(field);
    records.push(record);
    record = [];
    field = "";
    fieldStart = true;
  };
  while (i < text.length) {
    const c = text[i] as string;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i++;
        const next = text[i];
        if (next !== undefined && next !== "," && next !== "\n" && next !== "\r") {
          out.add(records.length + 1, null, "text after a closing quote (a field's quotes must enclose all of it)");
          return records;
        }
        continue;
      }
      field += c;
      i++;
      continue;
    }
    if (c === '"' && fieldStart) {
      quoted = true;
      fieldStart = false;
      i++;
      continue;
    }
    if (c === ",") {
      record.push(field);
      field = "";
      fieldStart = true;
      i++;
      continue;
    }
    if (c === "\r" || c === "\n") {
      endRecord();
      i += c === "\r" && text[i + 1] === "\n" ? 2 : 1;
      continue;
    }
    field += c;
    fieldStart = false;
    i++;
  }
  if (quoted) {
    out.add(records.length + 1, null, "a quoted field is not closed");
    return records;
  }
  if (field !== "" || record.length > 0) endRecord();
  return records;
}

function readValue(raw: unknown, kind: ValueKind, row: number, column: string, out: Collector): Value | undefined {
  if (kind === "number") {
    const n = typeof raw === "number" ? raw : typeof raw === "string" && NUMBER.test(raw.trim()) ? Number(raw) : NaN;
    if (!Number.isFinite(n)) {
      out.add(row, column, `must be a number, got ${describe(raw)}`);
      return undefined;
    }
    if (Math.abs(n) > MAX_ABS_NUMBER) {
      out.add(row, column, `must be between -1e15 and 1e15, got ${describe(raw)}`);
      return undefined;
    }
    return n;
  }
  if (kind === "label") {
    const s = typeof raw === "number" && Number.isFinite(raw) ? String(raw) : raw;
    if (typeof s !== "string" || s === "") {
      out.add(row, column, `must be a non-empty text label, got ${describe(raw)}`);
      return undefined;
    }
    if (s.length > MAX_LABEL_CHARS) {
      out.add(row, column, `is longer than ${MAX_LABEL_CHARS} characters`);
      return undefined;
    }
    return s;
  }
  // ranking: a JSON array of ids, or (CSV) ids separated by spaces
  const items = Array.isArray(raw) ? raw : typeof raw === "string" ? raw.split(/\s+/u).filter((x) => x !== "") : null;
  if (items === null || !items.every((x) => typeof x === "string" && x !== "" && x.length <= MAX_ID_CHARS)) {
    out.add(
      row,
      column,
      `must be a list of ids (JSON array of strings, or ids separated by spaces), got ${describe(raw)}`,
    );
    return undefined;
  }
  if (items.length > MAX_RANKING_ITEMS) {
    out.add(row, column, `lists ${items.length} ids; at most ${MAX_RANKING_ITEMS}`);
    return undefined;
  }
  return items as string[];
}

function idOf(raw: unknown, row: number, column: string, out: Collector): string | undefined {
  const s = typeof raw === "number" && Number.isSafeInteger(raw) ? String(raw) : raw;
  if (typeof s !== "string" || s.trim() === "") {
    out.add(row, column, `must be a non-empty id, got ${describe(raw)}`);
    return undefined;
  }
  if (s.length > MAX_ID_CHARS) {
    out.add(row, column, `is longer than ${MAX_ID_CHARS} characters`);
    return undefined;
  }
  return s.trim();
}

function describe(v: unknown): string {
  if (v === undefined) return "nothing";
  const s = typeof v === "string" ? JSON.stringify(v) : (JSON.stringify(v) ?? String(v));
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}

/**
 * Parses a file into rows (id, value), checking types and repeated ids. Does not know the key:
 * `checkAgainstKey` says which ids are unknown or missing.
 */
export function parseTable(text: string, format: FileFormat, cols: Columns): Parsed {
  const out = new Collector();
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const rows: TableRow[] = [];
  const firstRow = new Map<string, number>();
  const keep = (row: number, id: string | undefined, value: Value | undefined) => {
    if (id === undefined || value === undefined) return;
    const seen = firstRow.get(id);
    if (seen !== undefined) {
      out.add(row, cols.idColumn, `id ${describe(id)} repeats row ${seen}`);
      return;
    }
    firstRow.set(id, row);
    rows.push({ row, id, value });
  };

  if (format === "csv") {
    const records = csvRecords(body, out);
    const header = records[0];
    if (!header || (header.length === 1 && header[0] === "")) {
      out.add(
        null,
        null,
        `the file is empty; the first row must name the columns ${cols.idColumn},${cols.valueColumn}`,
      );
      return { ok: false, issues: out.issues };
    }
    const names = header.map((h) => h.trim());
    const idAt = names.indexOf(cols.idColumn);
    const valueAt = names.indexOf(cols.valueColumn);
    if (idAt < 0) out.add(1, cols.idColumn, `the header has no column '${cols.idColumn}'`);
    if (valueAt < 0) out.add(1, cols.valueColumn, `the header has no column '${cols.valueColumn}'`);
    if (idAt < 0 || valueAt < 0) return { ok: false, issues: out.issues };
    records.slice(1).forEach((rec, j) => {
      const row = j + 2;
      if (rec.length === 1 && rec[0] === "") return; // a blank line
      if (rec.length !== names.length) {
        out.add(row, null, `has ${rec.length} fields; the header has ${names.length}`);
        return;
      }
      const id = idOf(rec[idAt], row, cols.idColumn, out);
      const value = readValue(rec[valueAt], cols.kind, row, cols.valueColumn, out);
      keep(row, id, value);
    });
  } else {
    body.split("\n").forEach((line, j) => {
      const row = j + 1;
      const trimmed = line.trim();
      if (trimmed === "") return;
      let obj: unknown;
      try {
        obj = JSON.parse(trimmed);
      } catch {
        out.add(row, null, "is not valid JSON");
        return;
      }
      if (typeof obj !== "object" || obj === null || Array.isArray(obj)) {
        out.add(row, null, "is not a JSON object");
        return;
      }
      const rec = obj as Record<string, unknown>;
      const id = idOf(rec[cols.idColumn], row, cols.idColumn, out);
      const value = readValue(rec[cols.valueColumn], cols.kind, row, cols.valueColumn, out);
      keep(row, id, value);
    });
  }
  if (out.total === 0 && rows.length === 0) out.add(null, null, "the file has no rows");
  return out.total > 0 ? { ok: false, issues: withTotal(out) } : { ok: true, rows };
}

function withTotal(out: Collector): Issue[] {
  if (out.total > out.issues.length) {
    return [...out.issues, { row: null, column: null, problem: `and ${out.total - out.issues.length} more problems` }];
  }
  return out.issues;
}

/** Ids the key does not have (with their rows), and key ids the file leaves out. */
export function checkAgainstKey(rows: readonly TableRow[], keyIds: ReadonlySet<string>, idColumn: string): Issue[] {
  const out = new Collector();
  const given = new Set<string>();
  for (const r of rows) {
    given.add(r.id);
    if (!keyIds.has(r.id)) out.add(r.row, idColumn, `id ${describe(r.id)} is not in the task's key`);
  }
  let missing = 0;
  const examples: string[] = [];
  for (const id of keyIds) {
    if (given.has(id)) continue;
    missing++;
    if (examples.length < 5) examples.push(id);
  }
  if (missing > 0) {
    out.add(
      null,
      idColumn,
      `${missing} id${missing === 1 ? "" : "s"} of the key ${missing === 1 ? "is" : "are"} missing (e.g. ${examples.map((e) => JSON.stringify(e)).join(", ")})`,
    );
  }
  return withTotal(out);
}
