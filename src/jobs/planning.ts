import { Problem } from "../http/problem.js";
import { PermanentTaskError } from "./queue/types.js";
import type { QuoteView } from "./quotes/schemas.js";
import { jobKeys, type ObjectStore } from "./storage/types.js";
import type { JobRow } from "./tables.js";

/**
 * Planning a suite job's segments (docs/suite.md "Segments"): compress and roundtrip inputs are
 * cut every `segmentBytes`; a decompress input is cut at stream-record boundaries, and every
 * record's declared output size is read on the way without decoding anything, so a job whose
 * records declare more than its quote is refused before a byte is written (issue #21 item 1).
 */

/**
 * The most output one stream record of a decompress job may declare: what `labphi compress` (its
 * DEFAULT_CHUNK) and compress jobs write per record. A larger record is refused at planning
 * (`record_too_large`), so decoding a record holds at most this much output, whatever it declares.
 */
export const JOB_MAX_RECORD_OUTPUT_BYTES = 4 * 1024 * 1024;
/**
 * The largest stream record (its container) a decompress job reads: a container is at most its
 * output plus a few bytes of framing (the codec stores what it cannot shrink), with room to spare.
 */
export const MAX_RECORD_BYTES = JOB_MAX_RECORD_OUTPUT_BYTES + 64 * 1024;
/** bytes of a record's container read to find its declared output size (magic, version, flags, chamber, uvarint) */
export const DECLARED_HEAD_BYTES = 16;

export interface Range {
  offset: number;
  length: number;
}

export class InputCorrupt extends PermanentTaskError {
  constructor(message: string) {
    super(message, "input_corrupt");
  }
}

/**
 * The output size a stream record's container declares, read from its first bytes (`head`, at
 * least min(16, length) of them) without decoding: the framed header is CF 86, version, flags,
 * chamber, then the original length as an unsigned LEB128 (docs/codec-format.md). A record that
 * is not a framed container is refused here, as the decoder would refuse it.
 */
export function declaredOutput(head: Uint8Array, length: number): number {
  if (length < 11 || head[0] !== 0xcf || head[1] !== 0x86) {
    throw new InputCorrupt("not a codec stream: a record that is not a framed container");
  }
  if (head[2] !== 1) throw new InputCorrupt(`not a codec stream: a container of version ${head[2]}`);
  let value = 0;
  for (let i = 5, shift = 0; i < Math.min(head.length, length - 4) && shift < 56; i++, shift += 7) {
    const b = head[i] as number;
    value += (b & 0x7f) * 2 ** shift;
    if (!(b & 0x80)) return value;
  }
  throw new InputCorrupt("not a codec stream: a container whose declared size cannot be read");
}

/** The output a whole stream record (uvarint length, then the container) declares. */
export function recordDeclared(record: Uint8Array): number {
  let i = 0;
  while (i < record.length && (record[i] as number) & 0x80) i++;
  i++;
  return declaredOutput(record.subarray(i, i + DECLARED_HEAD_BYTES), record.length - i);
}

/** What planning a decompress job found: its segments and the output its records declare. */
export interface RecordPlan {
  ranges: Range[];
  /** the sum of the records' declared output sizes */
  declared: number;
}

/** A decompress job whose records declare more output than its quote: refused before any decoding. */
export class OutputExceedsQuote extends PermanentTaskError {
  constructor(
    readonly declared: number,
    readonly quoted: number,
  ) {
    super(
      `the input's records declare ${declared} bytes of output; the job's quote covers ${quoted} (for decompress the quoted bytes are the decompressed size)`,
      "output_exceeds_quote",
    );
  }
}

/** Reads stream records (uvarint length + framed container), calling `record(headerLen, length)`. */
export class RecordScanner {
  private header: number[] = [];
  private value = 0;
  private shift = 0;
  /** payload bytes of the current record still to come */
  remaining = 0;

  constructor(private readonly onHeader: (header: number[], length: number) => void) {}

  get inRecord(): boolean {
    return this.remaining > 0 || this.header.length > 0;
  }

  /** consumes header bytes from chunk[i..]; returns the new index (stops at the payload) */
  readHeader(chunk: Uint8Array, i: number): number {
    while (i < chunk.length && this.remaining === 0) {
      const b = chunk[i++] as number;
      this.header.push(b);
      this.value += (b & 0x7f) * 2 ** this.shift;
      this.shift += 7;
      if (b & 0x80) {
        if (this.header.length >= 8) throw new InputCorrupt("not a codec stream: a record length runs past 8 bytes");
        continue;
      }
      const len = this.value;
      if (len < 2) throw new InputCorrupt("not a codec stream: a record of length < 2");
      if (len > MAX_RECORD_BYTES) {
        throw new PermanentTaskError(
          `a stream record of ${len} bytes (a job reads records of at most ${MAX_RECORD_BYTES} bytes: what labphi compress writes by default)`,
          "record_too_large",
        );
      }
      const header = this.header;
      this.header = [];
      this.value = 0;
      this.shift = 0;
      this.remaining = len;
      this.onHeader(header, len);
    }
    return i;
  }
}

/**
 * Decompress planning: segments of whole records, cut once a segment reaches `segmentBytes` of
 * input or of declared output; the declared output size of every record is read on the way
 * (nothing is decoded). A record declaring
 * more than `maxRecordOutput` bytes is refused (`record_too_large`).
 */
export async function planRecordSegments(
  input: AsyncIterable<Buffer>,
  segmentBytes: number,
  maxRecordOutput = JOB_MAX_RECORD_OUTPUT_BYTES,
): Promise<RecordPlan> {
  const ranges: Range[] = [];
  let offset = 0;
  let start = 0;
  let declared = 0;
  /** declared output of the records of the segment being cut */
  let segmentOut = 0;
  let records = 0;
  let recordLength = 0;
  const head = new Uint8Array(DECLARED_HEAD_BYTES);
  let headFill = 0;
  const scanner = new RecordScanner((_header, len) => {
    recordLength = len;
    headFill = 0;
  });
  for await (const chunk of input) {
    let i = 0;
    while (i < chunk.length) {
      if (scanner.remaining === 0) {
        const j = scanner.readHeader(chunk, i);
        offset += j - i;
        i = j;
        continue;
      }
      const n = Math.min(scanner.remaining, chunk.length - i);
      const want = Math.min(DECLARED_HEAD_BYTES, recordLength) - headFill;
      if (want > 0) {
        const k = Math.min(want, n);
        head.set(chunk.subarray(i, i + k), headFill);
        headFill += k;
      }
      scanner.remaining -= n;
      offset += n;
      i += n;
      if (scanner.remaining === 0) {
        const size = declaredOutput(head.subarray(0, headFill), recordLength);
        records++;
        if (size > maxRecordOutput) {
          throw new PermanentTaskError(
            `record ${records} declares ${size} bytes of output; a job decodes records of at most ${maxRecordOutput} bytes (what labphi compress writes by default: compress with --chunk-size ${maxRecordOutput} or less)`,
            "record_too_large",
          );
        }
        declared += size;
        segmentOut += size;
        // a segment ends at the first record boundary past segmentBytes of input or of output, so
        // a stream that expands a lot is still spread over segments (and workers) of bounded output
        if (offset - start >= segmentBytes || segmentOut >= segmentBytes) {
          ranges.push({ offset: start, length: offset - start });
          start = offset;
          segmentOut = 0;
        }
      }
    }
  }
  if (scanner.inRecord) throw new InputCorrupt("the input ends inside a stream record (truncated)");
  if (offset > start) ranges.push({ offset: start, length: offset - start });
  return { ranges, declared };
}

/**
 * The segment size of a job coded while its input arrives (runner `early`): a segment is queued
 * once its last byte has landed, so the first one can start only after that many bytes and the
 * last one only after the upload. Cut at `threads × 2` units (never more than `segmentBytes`, a
 * whole number of units), the threads get work as soon as two units per thread are in, and what
 * is left to code after the last byte is one such segment (issue #23 item 6: with 64 MiB
 * segments and one or two threads, no segment was coded during a 256 MB upload). The output is
 * the same stream: the records are cut every unit whatever the segments.
 */
export function earlySegmentBytes(segmentBytes: number, chunkBytes: number, threads: number): number {
  return Math.min(chunkBytes * Math.max(2, Math.max(1, threads) * 2), segmentBytes);
}

/** Compress / roundtrip planning: every `segmentBytes`. */
export function planFixedSegments(size: number, segmentBytes: number): Range[] {
  const ranges: Range[] = [];
  for (let offset = 0; offset < size; offset += segmentBytes) {
    ranges.push({ offset, length: Math.min(segmentBytes, size - offset) });
  }
  return ranges;
}

/**
 * The segments of a job whose input is complete: fixed ranges (compress, roundtrip), or record
 * ranges (decompress) once every record's declared output is read and their sum is within the
 * quote (else OutputExceedsQuote, before anything is decoded).
 */
export async function planJob(
  store: ObjectStore,
  job: Pick<JobRow, "id" | "op" | "bytes_quoted">,
  segmentBytes: number,
): Promise<Range[]> {
  const key = jobKeys.input(job.id);
  const size = await store.size(key);
  if (size === undefined) throw new PermanentTaskError(`the job's input (${key}) is missing`, "input_missing");
  if (job.op !== "decompress") return planFixedSegments(size, segmentBytes);
  if (size === 0) return [];
  // every record's declared output is read before anything is decoded: the quote bounds the sum
  const { ranges, declared } = await planRecordSegments((await store.get(key)) as AsyncIterable<Buffer>, segmentBytes);
  const quoted = Number(job.bytes_quoted);
  if (declared > quoted) throw new OutputExceedsQuote(declared, quoted);
  return ranges;
}

/**
 * What a refused decompress job says (its records declare more than its quote): the next step
 * (the fresh `quote` for the declared bytes, or how to ask for one, `why` there is none) and the
 * 409 for the upload that completed it.
 */
export function refusal(
  job: Pick<JobRow, "id">,
  err: OutputExceedsQuote,
  quote: QuoteView | null,
  why: string,
): { next: string; problem: Problem } {
  const next = quote
    ? `quote ${quote.quote_id} covers ${err.declared} bytes (${quote.free ? "free" : `${quote.amount_usd} USD`}; buy it with POST /api/x402-suite { quote_id, … })`
    : `ask for a quote of ${err.declared} bytes (POST /api/ppp-quote)${why}`;
  const problem = new Problem(
    409,
    "output_exceeds_quote",
    `The input's stream records declare ${err.declared} bytes of output, more than the ${err.quoted} bytes this job was quoted for (for decompress, the quoted bytes are the decompressed size). Nothing was decoded and the job is failed; ${next}.`,
    { declared_bytes: err.declared, bytes_quoted: err.quoted, job_id: job.id, quote },
  );
  return { next, problem };
}
