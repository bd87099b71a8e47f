import fs from "node:fs";
import type { Readable } from "node:stream";
import { decompress, inspect } from "../../codec/api/decompress.js";
import { type CliIO, type Command, UsageError } from "../command.js";
import {
  checkBinaryStdout,
  codecFailure,
  fmt,
  mib,
  PROGRESS_FROM,
  parseCodecArgs,
  sizeOf,
  writeAll,
} from "./compress.js";

const HELP = `Usage: labphi decompress [FILE] [-o OUT] [options]

Restores the original bytes from FILE (or stdin) and writes them to OUT (or stdout). Reads what
'labphi compress' writes: a framed or chunked container, a bare stream, a stream of length-prefixed
containers (inputs larger than one chunk), and legacy gzip streams. Decoding is strict: a damaged
container is an error (exit 1), never wrong bytes.

Options:
  -o, --output OUT      write to OUT instead of stdout (written to OUT.tmp-<pid>, then renamed)
  --format FORMAT       auto (default) | container | stream
  --max-output N        refuse containers declaring more than N bytes (default 256M; K/M suffixes)
  -q, --quiet           no summary or progress on stderr
  -h, --help            this help

Examples:
  labphi decompress data.omni -o data.i32
  labphi compress < a.txt | labphi decompress > a.copy`;

const FORMATS = ["auto", "container", "stream"] as const;

/** a FILE up to this size is read whole when it may be one container (larger ones are peeked at) */
const WHOLE_FROM_FILE = 16 * 1024 * 1024;

/** True when the bytes start like a compressStream record: uvarint(length) then the framed magic. */
export function looksLikeStream(head: Uint8Array): boolean {
  let i = 0;
  let len = 0;
  let shift = 0;
  while (i < head.length && i < 5) {
    const b = head[i] as number;
    len += (b & 0x7f) * 2 ** shift;
    i++;
    if ((b & 0x80) === 0) break;
    shift += 7;
  }
  if (i >= head.length || len < 2) return false;
  return head[i] === 0xcf && head[i + 1] === 0x86;
}

/** Reads up to n bytes from the start of a readable, then gives back a readable of everything. */
async function peek(input: Readable, n: number): Promise<{ head: Uint8Array; all: Readable }> {
  const parts: Buffer[] = [];
  let have = 0;
  const it = (input as AsyncIterable<Buffer | string>)[Symbol.asyncIterator]();
  let done = false;
  while (have < n) {
    const r = await it.next();
    if (r.done) {
      done = true;
      break;
    }
    const b = typeof r.value === "string" ? Buffer.from(r.value) : r.value;
    parts.push(b);
    have += b.length;
  }
  const pass = new (await import("node:stream")).PassThrough();
  (async () => {
    for (const p of parts) if (!pass.write(p)) await new Promise((res) => pass.once("drain", res));
    while (!done) {
      const r = await it.next();
      if (r.done) break;
      const b = typeof r.value === "string" ? Buffer.from(r.value) : r.value;
      if (!pass.write(b)) await new Promise((res) => pass.once("drain", res));
    }
    pass.end();
  })().catch((e) => pass.destroy(e as Error));
  const head = Buffer.concat(parts).subarray(0, n);
  return { head: new Uint8Array(head.buffer, head.byteOffset, head.byteLength), all: pass };
}

async function collect(input: Readable): Promise<Uint8Array> {
  const parts: Buffer[] = [];
  for await (const c of input as AsyncIterable<Buffer | string>) parts.push(typeof c === "string" ? Buffer.from(c) : c);
  const all = Buffer.concat(parts);
  return new Uint8Array(all.buffer, all.byteOffset, all.byteLength);
}

export const decompressCommand: Command = {
  name: "decompress",
  summary: "Restore the original bytes from an omni container or stream (labphi decompress [FILE] [-o OUT])",
  help: HELP,
  async run(args: string[], io: CliIO) {
    const a = parseCodecArgs(args, {
      values: ["output", "format", "max-output"],
      flags: ["quiet"],
      aliases: { "-o": "output", "-q": "quiet" },
    });
    if (a.positional.length > 1) throw new UsageError("give at most one FILE");
    const file = a.positional[0];
    const out = a.values.output;
    const quiet = a.flags.has("quiet");
    const format = (a.values.format ?? "auto") as (typeof FORMATS)[number];
    if (!FORMATS.includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(", ")}`);
    const maxOutputBytes = sizeOf(a.values["max-output"], "--max-output", 256 * 1024 * 1024, 0);
    checkBinaryStdout(out, io);
    let total: number | null = null;
    // Date.now, not performance.now: the global `performance` loads perf_hooks on first use
    const t0 = Date.now();
    // a FILE that is one container is read whole, without Node's stream modules (a quick start)
    let whole: Uint8Array | null = null;
    let all: Readable | null = null;
    let stream: boolean;
    if (file !== undefined && file !== "-") {
      if (!fs.existsSync(file)) throw new Error(`no such file: ${file}`);
      total = fs.statSync(file).size;
      if (format === "container" || (format === "auto" && total <= WHOLE_FROM_FILE)) {
        whole = new Uint8Array(fs.readFileSync(file));
        stream = format === "auto" && looksLikeStream(whole.subarray(0, 16));
        if (stream) whole = null;
      } else if (format === "stream") stream = true;
      else {
        const peeked = await peek(fs.createReadStream(file), 16);
        all = peeked.all;
        stream = looksLikeStream(peeked.head);
      }
      if (stream && !all) all = fs.createReadStream(file);
    } else {
      const peeked = await peek(io.stdin as Readable, 16);
      all = peeked.all;
      stream = format === "stream" || (format === "auto" && looksLikeStream(peeked.head));
    }

    if (!stream) {
      const container = whole ?? (await collect(all as Readable));
      let bytes: Uint8Array;
      try {
        bytes = await decompress(container, { maxOutputBytes });
      } catch (err) {
        throw codecFailure(err);
      }
      await writeAll(out, bytes, io);
      if (!quiet) {
        const info = inspect(container, { maxOutputBytes });
        io.stderr.write(
          `decompress: ${fmt(container.length)} → ${fmt(bytes.length)} bytes (${info.legacy ? "legacy gzip" : `${info.bare ? "bare" : "framed"}, level ${info.level}, ${[...new Set(info.chambers)].join("+")}`}), ${((Date.now() - t0) / 1000).toFixed(2)} s\n`,
        );
      }
      return 0;
    }

    const { progressMeter, streamTo } = await import("../stream-io.js");
    const written = await streamTo(out, io, all as Readable, [
      progressMeter(io, "decompress", total !== null && total >= PROGRESS_FROM ? total : null, quiet),
      (await import("../../codec/api/stream.js")).decompressStream({ maxOutputBytes }),
    ]);
    if (!quiet) {
      io.stderr.write(
        `decompress: stream → ${fmt(written)} bytes (${mib(written)}), ${((Date.now() - t0) / 1000).toFixed(2)} s\n`,
      );
    }
    return 0;
  },
};
