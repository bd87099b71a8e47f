import fs from "node:fs";
import type { Readable } from "node:stream";
import { compressWithReport } from "../../codec/api/compress.js";
import { LEVELS, type Level } from "../../codec/chambers/types.js";
import { CodecError } from "../../codec/errors.js";
import { type CliIO, type Command, UsageError } from "../command.js";

/**
 * `labphi compress [FILE] [-o OUT]`: the codec library on local files (no HTTP, no size limit).
 * This file also holds the small helpers the other codec commands share (decompress, profile, bench).
 * The codec commands import the codec's modules (src/codec/api/) rather than its facade, and the
 * stream modules only for inputs that need them, so a small file starts with what it uses.
 */

export const DEFAULT_CHUNK = 4 * 1024 * 1024;
/** Inputs above this get progress lines on stderr. */
export const PROGRESS_FROM = 1024 * 1024;

export interface CodecArgs {
  positional: string[];
  values: Record<string, string>;
  flags: Set<string>;
}

/** Parses `args` against the allowed value options and boolean flags (long names, plus aliases). */
export function parseCodecArgs(
  args: string[],
  spec: { values: string[]; flags: string[]; aliases?: Record<string, string> },
): CodecArgs {
  const out: CodecArgs = { positional: [], values: {}, flags: new Set() };
  const alias = spec.aliases ?? {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "-" || !arg.startsWith("-")) {
      out.positional.push(arg);
      continue;
    }
    if (arg === "--") {
      out.positional.push(...args.slice(i + 1));
      break;
    }
    const eq = arg.indexOf("=");
    const raw = eq === -1 ? arg : arg.slice(0, eq);
    const name = alias[raw] ?? (raw.startsWith("--") ? raw.slice(2) : raw);
    if (spec.flags.includes(name)) {
      if (eq !== -1) throw new UsageError(`${raw} takes no value`);
      out.flags.add(name);
      continue;
    }
    if (!spec.values.includes(name)) throw new UsageError(`unknown option ${raw}`);
    const value = eq !== -1 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined) throw new UsageError(`${raw} needs a value`);
    out.values[name] = value;
  }
  return out;
}

export function levelOf(value: string | undefined, dflt: Level = "max"): Level {
  if (value === undefined) return dflt;
  if (!LEVELS.includes(value as Level)) throw new UsageError(`--level must be one of ${LEVELS.join(", ")}`);
  return value as Level;
}

export function sizeOf(value: string | undefined, name: string, dflt: number, min: number): number {
  if (value === undefined) return dflt;
  const m = /^(\d+)([kKmM]i?[bB]?)?$/.exec(value);
  if (!m) throw new UsageError(`${name} must be a byte count such as 4194304, 512K or 4M`);
  const unit = (m[2] ?? "").toLowerCase().charAt(0);
  const n = Number(m[1]) * (unit === "k" ? 1024 : unit === "m" ? 1024 * 1024 : 1);
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`${name} must be at least ${min} bytes`);
  return n;
}

export const mib = (n: number): string => `${(n / (1024 * 1024)).toFixed(1)} MiB`;
export const fmt = (n: number): string => n.toLocaleString("en-US");

/** Reads a whole file, or stdin for no file / "-". */
export async function readAll(file: string | undefined, io: CliIO): Promise<Uint8Array> {
  if (file !== undefined && file !== "-") return new Uint8Array(fs.readFileSync(file));
  const parts: Buffer[] = [];
  for await (const chunk of io.stdin as AsyncIterable<Buffer | string>) {
    parts.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  }
  const all = Buffer.concat(parts);
  return new Uint8Array(all.buffer, all.byteOffset, all.byteLength);
}

/** Refuses to print binary output to an interactive terminal. */
export function checkBinaryStdout(out: string | undefined, io: CliIO): void {
  if (out === undefined && (io.stdout as { isTTY?: boolean }).isTTY) {
    throw new UsageError("refusing to write binary output to a terminal; use -o FILE or redirect stdout");
  }
}

/** Writes bytes to OUT (through a temporary file, then renamed: never a half-written OUT) or stdout. */
export async function writeAll(out: string | undefined, bytes: Uint8Array, io: CliIO): Promise<void> {
  if (out === undefined || out === "-") {
    await new Promise<void>((resolve, reject) => {
      io.stdout.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), (err) =>
        err ? reject(err) : resolve(),
      );
    });
    return;
  }
  const tmp = `${out}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, bytes);
  fs.renameSync(tmp, out);
}

export function codecFailure(err: unknown): Error {
  if (err instanceof CodecError) return new Error(`${err.code}: ${err.message}`);
  return err instanceof Error ? err : new Error(String(err));
}

const HELP = `Usage: labphi compress [FILE] [-o OUT] [options]

Compresses FILE (or stdin) with the omni codec and writes the container to OUT (or stdout).
Runs the library in this process: no HTTP, no size limit. Lossless on every input.

Inputs up to --chunk-size become one framed container. Larger inputs are written as a stream of
framed containers, one per chunk, each prefixed by its length as a uvarint (the library's
compressStream format), with progress on stderr. 'labphi decompress' reads both.

Options:
  -o, --output OUT      write to OUT instead of stdout (written to OUT.tmp-<pid>, then renamed)
  --level LEVEL         fast | balanced | max (default max: strongest, context mixing, slow to decode)
  --bare                bare stream: no magic, no checksum (smallest; single container only)
  --type TYPE           declare the data: int32 | float32 | float64 | timestamps | json | csv | text | binary
  --chunk-size N        stream chunk size (default 4M; accepts K/M suffixes, at least 4096)
  -q, --quiet           no summary or progress on stderr
  -h, --help            this help

Levels: max compresses hardest and decodes text/JSON slowly; balanced keeps every chamber
fast to decode; fast tries one chamber. The level is recorded in the container.

Examples:
  labphi compress data.i32 -o data.omni
  cat log.txt | labphi compress --level balanced > log.omni`;

const DECLARED = ["int32", "float32", "float64", "timestamps", "json", "csv", "text", "binary"] as const;

export const compressCommand: Command = {
  name: "compress",
  summary: "Compress a file or stdin with the omni codec (labphi compress [FILE] [-o OUT])",
  help: HELP,
  async run(args, io) {
    const a = parseCodecArgs(args, {
      values: ["output", "level", "type", "chunk-size"],
      flags: ["bare", "quiet"],
      aliases: { "-o": "output", "-q": "quiet" },
    });
    if (a.positional.length > 1) throw new UsageError("give at most one FILE");
    const file = a.positional[0];
    const out = a.values.output;
    const level = levelOf(a.values.level);
    const chunk = sizeOf(a.values["chunk-size"], "--chunk-size", DEFAULT_CHUNK, 4096);
    const type = a.values.type;
    if (type !== undefined && !DECLARED.includes(type as (typeof DECLARED)[number])) {
      throw new UsageError(`--type must be one of ${DECLARED.join(", ")}`);
    }
    const quiet = a.flags.has("quiet");
    const bare = a.flags.has("bare");
    checkBinaryStdout(out, io);
    const opts = { level, ...(type ? { declaredType: type as (typeof DECLARED)[number] } : {}) };

    // Decide between one container and a stream: by the file size, or by reading stdin up to one chunk.
    let head: Uint8Array | null = null;
    let rest: Readable | null = null;
    let total: number | null = null;
    if (file !== undefined && file !== "-") {
      if (!fs.existsSync(file)) throw new Error(`no such file: ${file}`);
      total = fs.statSync(file).size;
      if (total <= chunk) head = await readAll(file, io);
    } else {
      const parts: Buffer[] = [];
      let have = 0;
      const it = (io.stdin as AsyncIterable<Buffer | string>)[Symbol.asyncIterator]();
      for (;;) {
        const r = await it.next();
        if (r.done) break;
        const b = typeof r.value === "string" ? Buffer.from(r.value) : r.value;
        parts.push(b);
        have += b.length;
        if (have > chunk) break;
      }
      if (have <= chunk) {
        const all = Buffer.concat(parts);
        head = new Uint8Array(all.buffer, all.byteOffset, all.byteLength);
      } else {
        const pass = new (await import("node:stream")).PassThrough();
        rest = pass;
        (async () => {
          for (const p of parts) if (!pass.write(p)) await new Promise((r) => pass.once("drain", r));
          for (;;) {
            const r = await it.next();
            if (r.done) break;
            const b = typeof r.value === "string" ? Buffer.from(r.value) : r.value;
            if (!pass.write(b)) await new Promise((res) => pass.once("drain", res));
          }
          pass.end();
        })().catch((e) => pass.destroy(e as Error));
      }
    }

    // Date.now, not performance.now: the global `performance` loads perf_hooks on first use
    const t0 = Date.now();
    if (head !== null) {
      if (!quiet && head.length >= PROGRESS_FROM) io.stderr.write(`compress: ${mib(head.length)} at level ${level}…\n`);
      let report: Awaited<ReturnType<typeof compressWithReport>>;
      try {
        report = await compressWithReport(head, { ...opts, ...(bare ? { bare: true } : {}) });
      } catch (err) {
        throw codecFailure(err);
      }
      await writeAll(out, report.container, io);
      if (!quiet) {
        const pct = head.length ? ((report.container.length / head.length) * 100).toFixed(1) : "—";
        io.stderr.write(
          `compress: ${fmt(head.length)} → ${fmt(report.container.length)} bytes (${pct}%) ${report.label} level ${level}, ${((Date.now() - t0) / 1000).toFixed(2)} s\n`,
        );
      }
      return 0;
    }

    if (bare) throw new UsageError(`--bare needs an input of at most --chunk-size (${fmt(chunk)} bytes)`);
    const { progressMeter, source, streamTo } = await import("../stream-io.js");
    const input = rest ?? source(file, io);
    const written = await streamTo(out, io, input, [
      progressMeter(io, "compress", total, quiet),
      (await import("../../codec/api/stream.js")).compressStream({ ...opts, chunkSize: chunk }),
    ]);
    if (!quiet) {
      io.stderr.write(
        `compress: ${total !== null ? `${fmt(total)} → ` : ""}${fmt(written)} bytes as a stream of ${mib(chunk)} chunks, level ${level}, ${((Date.now() - t0) / 1000).toFixed(2)} s\n`,
      );
    }
    return 0;
  },
};
