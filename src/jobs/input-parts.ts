import { Problem } from "../http/problem.js";
import type { JobInputPartRow } from "./tables.js";

/**
 * An input sent in parts (issue #23 item 6, docs/suite.md "Several upload streams"): the
 * `Content-Range` of a part (RFC 9110 §14.4 in a request: `bytes first-last/total`, no `*`) and
 * the merging of landed parts into ranges. The rules of receiving parts: part-receiver.ts.
 */

/** A part's bytes [start, end] (inclusive) of an input of `total` bytes. */
export interface ContentRange {
  start: number;
  end: number;
  total: number;
}

/** [start, end) byte ranges, merged, by start. */
export interface LandedRange {
  start: number;
  end: number;
}

/** Where an input in parts can be sent (the local store); 400 input_parts_unsupported elsewhere. */
export const PARTS_UNSUPPORTED = () =>
  new Problem(
    400,
    "input_parts_unsupported",
    "This service stores job data on S3, where an input cannot be written in ranges: send the whole input in one PUT (no Content-Range), or use the resumable tus endpoint.",
  );

/** Parses `Content-Range: bytes a-b/total` (400 input_range_invalid otherwise). */
export function parseContentRange(header: string): ContentRange {
  const m = /^bytes (\d{1,16})-(\d{1,16})\/(\d{1,16})$/.exec(header.trim());
  const start = Number(m?.[1]);
  const end = Number(m?.[2]);
  const total = Number(m?.[3]);
  if (!m || !Number.isSafeInteger(total) || start > end || end >= total) {
    throw new Problem(
      400,
      "input_range_invalid",
      `Content-Range must be \`bytes first-last/total\` with first ≤ last < total (e.g. bytes 0-1048575/4194304); got ${JSON.stringify(header.slice(0, 100))}.`,
      { content_range: header.slice(0, 100) },
    );
  }
  return { start, end, total };
}

/** The parts' ranges merged (touching or overlapping ones joined), by start. */
export function mergeRanges(parts: readonly Pick<JobInputPartRow, "part_offset" | "part_length">[]): LandedRange[] {
  const sorted = parts
    .map((p) => ({ start: Number(p.part_offset), end: Number(p.part_offset) + Number(p.part_length) }))
    .sort((a, b) => a.start - b.start);
  const out: LandedRange[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r.start <= last.end) last.end = Math.max(last.end, r.end);
    else out.push({ ...r });
  }
  return out;
}

/** Ranges as a client reads them: inclusive `{ start, end }`, as in Content-Range. */
export const inclusive = (ranges: readonly LandedRange[]) => ranges.map((r) => ({ start: r.start, end: r.end - 1 }));
