import fs from "node:fs/promises";
import { verifyStandingsDocument } from "../../olympiad/results/verify.js";
import { type CliIO, type Command, UsageError } from "../command.js";

/**
 * `labphi verify-standings URL|FILE`: recomputes the olympiad chain and the standings from a
 * published standings document alone (docs/olympiad-records.md "Verifying").
 */

const HELP = `Usage: labphi verify-standings <url | file | -> [options]

Verifies a published olympiad standings document (GET /standings.json) from its own contents:
  1. every entry's hash is recomputed (SHA-256 of the canonical JSON of at, body, chain, kind,
     prev_hash, seq) and every prev_hash links to the entry before (seq 1 links to 64 zeros);
  2. the published head is the last entry;
  3. the published rules are the ones applied here (points table, quarters, top 50, medals, tiebreaks);
  4. the standings (top 50, medals) and the seeding list are recomputed from the entries and
     compared with the published lists.
Prints what it checked. The first tampered seq or mismatch is named on failure.

Arguments:
  <url>    an http(s) address, e.g. https://lab.example.com/standings.json
  <file>   a saved copy of the document;  -  reads it from standard input

Options:
  --head <seq>:<hash>   a head seen earlier: fails when that entry is gone or has another hash
  --json                print the report as JSON
  -q, --quiet           print nothing; the exit code tells
  -h, --help            this help

Exit codes: 0 verified · 1 not verified (tampered or mismatching) · 2 bad usage · 3 the document
could not be read (network, file, not JSON).

Examples:
  labphi verify-standings https://lab.example.com/standings.json
  curl -s https://lab.example.com/standings.json > s.json && labphi verify-standings s.json
  labphi verify-standings s.json --head 42:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08`;

class ReadError extends Error {}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString("utf8");
}

async function load(source: string, io: CliIO): Promise<unknown> {
  let text: string;
  if (/^https?:\/\//i.test(source)) {
    let res: Response;
    try {
      res = await fetch(source, { headers: { accept: "application/json" }, signal: AbortSignal.timeout(30_000) });
    } catch (err) {
      throw new ReadError(`cannot fetch ${source}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (!res.ok) throw new ReadError(`${source} answered ${res.status}`);
    text = await res.text();
  } else if (source === "-") {
    text = await readAll(io.stdin);
  } else {
    try {
      text = await fs.readFile(source, "utf8");
    } catch (err) {
      throw new ReadError(`cannot read ${source}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ReadError(`${source} is not JSON`);
  }
}

export const verifyStandingsCommand: Command = {
  name: "verify-standings",
  summary: "Verify published olympiad standings: recompute the hash chain and the standings from the records",
  help: HELP,
  async run(args, io) {
    let source: string | undefined;
    let knownHead: { seq: number; hash: string } | undefined;
    let json = false;
    let quiet = false;
    for (let i = 0; i < args.length; i++) {
      const arg = args[i] as string;
      if (arg === "--json") json = true;
      else if (arg === "--quiet" || arg === "-q") quiet = true;
      else if (arg === "--head" || arg.startsWith("--head=")) {
        const value = arg === "--head" ? args[++i] : arg.slice("--head=".length);
        const m = /^(\d{1,12}):([0-9a-f]{64})$/.exec(value ?? "");
        if (!m) throw new UsageError("--head needs <seq>:<hash> (hash: 64 lowercase hex digits)");
        knownHead = { seq: Number(m[1]), hash: m[2] as string };
      } else if (arg.startsWith("-") && arg !== "-") throw new UsageError(`unknown option ${arg}`);
      else if (source === undefined) source = arg;
      else throw new UsageError(`unexpected argument '${arg}'`);
    }
    if (source === undefined) throw new UsageError("the standings document's URL or file is required");

    let doc: unknown;
    try {
      doc = await load(source, io);
    } catch (err) {
      if (!(err instanceof ReadError)) throw err;
      if (!quiet) io.stderr.write(`labphi verify-standings: ${err.message}\n`);
      return 3;
    }
    const report = verifyStandingsDocument(doc, knownHead ? { knownHead } : {});
    if (json) {
      io.stdout.write(`${JSON.stringify({ source, ...report }, null, 2)}\n`);
    } else if (!quiet) {
      for (const line of report.checked) io.stdout.write(`ok    ${line}\n`);
      if (report.ok) io.stdout.write(`VERIFIED ${source}\n`);
      else {
        const f = report.failure;
        io.stdout.write(`FAIL  ${f?.kind}: ${f?.message}\n`);
        io.stderr.write(
          `labphi verify-standings: NOT VERIFIED (${f?.kind}${f?.seq !== undefined ? `, seq ${f.seq}` : ""}): ${f?.message}\n`,
        );
      }
    }
    return report.ok ? 0 : 1;
  },
};
