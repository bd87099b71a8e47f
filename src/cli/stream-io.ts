import fs from "node:fs";
import { type Readable, Transform, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { CliIO } from "./command.js";
import { codecFailure, mib, PROGRESS_FROM } from "./commands/compress.js";

/**
 * The streaming side of the codec commands (inputs larger than one chunk, stdin, stdout): its own
 * module, imported only by the commands that stream, so `labphi compress FILE -o OUT` of a small
 * file never loads Node's stream modules (issue #24 item 3; test/cli/start.test.ts checks it).
 */

/** A readable over FILE, or stdin. */
export function source(file: string | undefined, io: CliIO): Readable {
  if (file !== undefined && file !== "-") return fs.createReadStream(file);
  return io.stdin as Readable;
}

/** A sink for streaming output: OUT via a temporary file renamed on success, or stdout. */
export function sink(out: string | undefined, io: CliIO): { stream: Writable; commit(): void; abort(): void } {
  if (out === undefined || out === "-") {
    // stdout is never ended (it is the process's); each write completes when it is flushed.
    const stream = new Writable({
      write(chunk: Buffer, _enc, cb) {
        io.stdout.write(chunk, (err) => cb(err ?? null));
      },
    });
    return { stream, commit: () => {}, abort: () => {} };
  }
  const tmp = `${out}.tmp-${process.pid}`;
  return {
    stream: fs.createWriteStream(tmp),
    commit: () => fs.renameSync(tmp, out),
    abort: () => fs.rmSync(tmp, { force: true }),
  };
}

/** Counts bytes flowing through and reports progress lines on stderr. */
export function progressMeter(io: CliIO, label: string, total: number | null, quiet: boolean): Transform {
  let seen = 0;
  let shown = 0;
  const step = Math.max(PROGRESS_FROM, total ? Math.ceil(total / 20) : 4 * PROGRESS_FROM);
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      seen += chunk.length;
      if (!quiet && seen - shown >= step) {
        shown = seen;
        io.stderr.write(
          total
            ? `${label}: ${mib(seen)} / ${mib(total)} (${Math.floor((seen / total) * 100)}%)\n`
            : `${label}: ${mib(seen)}\n`,
        );
      }
      cb(null, chunk);
    },
  });
}

/**
 * Streams `input` through `stages` into OUT (or stdout): the temporary file is renamed only
 * when the whole pipeline succeeded, and removed otherwise. Returns the bytes written.
 */
export async function streamTo(
  out: string | undefined,
  io: CliIO,
  input: Readable,
  stages: Transform[],
): Promise<number> {
  const target = sink(out, io);
  let written = 0;
  const counter = new Transform({
    transform(c: Buffer, _e, cb) {
      written += c.length;
      cb(null, c);
    },
  });
  try {
    await pipeline([input, ...stages, counter, target.stream]);
    target.commit();
  } catch (err) {
    target.abort();
    throw codecFailure(err);
  }
  return written;
}
