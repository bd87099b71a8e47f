import { describe, expect, it } from "vitest";
import { checkAgainstKey, MAX_ISSUES, parseTable } from "../../../src/olympiad/events/tasks/parse.js";

const labels = { idColumn: "id", valueColumn: "prediction", kind: "label" as const };
const numbers = { idColumn: "id", valueColumn: "prediction", kind: "number" as const };
const ranking = { idColumn: "id", valueColumn: "prediction", kind: "ranking" as const };

describe("prediction files: CSV", () => {
  it("reads quoted fields, CRLF, a BOM and extra columns", () => {
    const r = parseTable('\uFEFFid,note,prediction\r\n1,"a, b",cat\r\n"2","say ""hi""",dog\r\n', "csv", labels);
    expect(r).toEqual({
      ok: true,
      rows: [
        { row: 2, id: "1", value: "cat" },
        { row: 3, id: "2", value: "dog" },
      ],
    });
  });
  it("names the row and column of a wrong type, a repeat and a short row", () => {
    const r = parseTable("id,prediction\na,1.5\nb,abc\na,2\nc\n", "csv", numbers);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues).toEqual([
      { row: 3, column: "prediction", problem: 'must be a number, got "abc"' },
      { row: 4, column: "id", problem: 'id "a" repeats row 2' },
      { row: 5, column: null, problem: "has 1 fields; the header has 2" },
    ]);
  });
  it("needs the id and value columns in the header", () => {
    const r = parseTable("key,value\n1,2\n", "csv", numbers);
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.issues.map((i) => [i.row, i.column])).toEqual([
        [1, "id"],
        [1, "prediction"],
      ]);
  });
  it("refuses an unclosed quote, an empty file and numbers past 1e15", () => {
    expect(parseTable('id,prediction\n1,"cat\n', "csv", labels).ok).toBe(false);
    expect(parseTable("", "csv", labels).ok).toBe(false);
    expect(parseTable("id,prediction\n", "csv", labels).ok).toBe(false);
    const big = parseTable("id,prediction\n1,2e15\n", "csv", numbers);
    expect(big.ok ? null : big.issues[0]?.column).toBe("prediction");
  });
  it("reads a ranking as ids separated by spaces", () => {
    expect(parseTable("id,prediction\nq1,a b  c\n", "csv", ranking)).toEqual({
      ok: true,
      rows: [{ row: 2, id: "q1", value: ["a", "b", "c"] }],
    });
  });
  it("lists at most 20 problems and says how many more", () => {
    const lines = ["id,prediction", ...Array.from({ length: 30 }, (_, i) => `${i},x`)].join("\n");
    const r = parseTable(lines, "csv", numbers);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues).toHaveLength(MAX_ISSUES + 1);
    expect(r.issues.at(-1)?.problem).toBe("and 10 more problems");
  });
});

describe("prediction files: JSON lines", () => {
  it("reads objects, numeric ids and arrays", () => {
    const r = parseTable('{"id":1,"prediction":["a","b"]}\n\n{"id":"2","prediction":[]}\n', "jsonl", ranking);
    expect(r).toEqual({
      ok: true,
      rows: [
        { row: 1, id: "1", value: ["a", "b"] },
        { row: 3, id: "2", value: [] },
      ],
    });
  });
  it("names the line of bad JSON, a non-object and a wrong type", () => {
    const r = parseTable('{"id":"a","prediction":1}\n{oops\n[1]\n{"id":"b","prediction":"x"}\n', "jsonl", numbers);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => [i.row, i.column])).toEqual([
      [2, null],
      [3, null],
      [4, "prediction"],
    ]);
  });
});

describe("checking a file against the key", () => {
  it("names unknown ids with their row, and counts the missing ones", () => {
    const parsed = parseTable("id,prediction\na,1\nz,2\n", "csv", numbers);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const issues = checkAgainstKey(parsed.rows, new Set(["a", "b", "c"]), "id");
    expect(issues).toEqual([
      { row: 3, column: "id", problem: 'id "z" is not in the task\'s key' },
      { row: null, column: "id", problem: '2 ids of the key are missing (e.g. "b", "c")' },
    ]);
  });
});
