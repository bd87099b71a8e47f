import fs from "node:fs/promises";
import { jwksKeys, verifyReceipt } from "../../receipts/verify.js";
import { type CliIO, type Command, UsageError } from "../command.js";

/**
 * `labphi verify-receipt FILE|-`: verifies one signed receipt against a JWKS (a saved file, or
 * the service's /.well-known/jwks.json) and prints its claims (docs/receipts.md).
 */

const HELP = `Usage: labphi verify-receipt <file | -> --jwks <file | url> [options]

Verifies a Lab Phi receipt (a compact JWS: EdDSA over Ed25519, typ labphi-receipt+jwt) against a
set of public keys (JWKS), and prints its claims: item, amount, asset, rail, transaction, order.
The check is offline when --jwks is a file: save https://<service>/.well-known/jwks.json once
(or take it from someone you trust) and verify any number of receipts without a network.

Arguments:
  <file>   the receipt (the .jws download of an access page, or the \`receipt\` field of an order);
           -  reads it from standard input

Options:
  --jwks <file | url>   the key set: a JSON file, or an http(s) address (fetched once).
                        Default: $BASE_URL/.well-known/jwks.json when BASE_URL is set.
  --json                print { valid, kid, claims } or { valid: false, reason, message } as JSON
  -q, --quiet           print nothing; the exit code tells
  -h, --help            this help

Exit codes: 0 valid · 1 not valid (signature, unknown kid, wrong alg or typ, malformed) · 2 bad
usage · 3 the receipt or the key set could not be read.

Examples:
  curl -s https://lab.example.com/.well-known/jwks.json > jwks.json
  labphi verify-receipt receipt-ord_abc.jws --jwks jwks.json
  curl -s -H 'accept: application/json' "$ACCESS_URL" | jq -r .receipt | labphi verify-receipt - --jwks jwks.json`;

class ReadError extends Error {}

/** A receipt is a few kilobytes; anything much larger is not one. */
const MAX_BYTES = 64 * 1024;

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += b.length;
    if (size > MAX_BYTES) throw new ReadError(`standard input is over ${MAX_BYTES} bytes: not a receipt`);
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString("utf8");
}

async function readText(source: string, io: CliIO, what: string): Promise<string> {
  if (/^https?:\/\//i.test(source)) {
    let res: Response;
    try {
      res = await fetch(source, { headers: { accept: "application/json" }, signal: AbortSignal.timeout(30_000) });
    } catch (err) {
      throw new ReadError(`cannot fetch ${what} ${source}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (!res.ok) throw new ReadError(`${what} ${source} answered ${res.status}`);
    const body = await res.text();
    if (body.length > MAX_BYTES) throw new ReadError(`${what} ${source} is over ${MAX_BYTES} bytes`);
    return body;
  }
  if (source === "-") return readAll(io.stdin);
  try {
    const stat = await fs.stat(source);
    if (stat.size > MAX_BYTES) throw new ReadError(`${what} ${source} is over ${MAX_BYTES} bytes`);
    return await fs.readFile(source, "utf8");
  } catch (err) {
    if (err instanceof ReadError) throw err;
    throw new ReadError(`cannot read ${what} ${source}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

export const verifyReceiptCommand: Command = {
  name: "verify-receipt",
  summary: "Verify a signed purchase receipt (JWS) against the service's public keys, offline with a JWKS file",
  help: HELP,
  async run(args, io) {
    let source: string | undefined;
    let jwksSource: string | undefined;
    let json = false;
    let quiet = false;
    for (let i = 0; i < args.length; i++) {
      const arg = args[i] as string;
      if (arg === "--json") json = true;
      else if (arg === "--quiet" || arg === "-q") quiet = true;
      else if (arg === "--jwks" || arg.startsWith("--jwks=")) {
        jwksSource = arg === "--jwks" ? args[++i] : arg.slice("--jwks=".length);
        if (!jwksSource) throw new UsageError("--jwks needs a file or an http(s) address");
      } else if (arg.startsWith("-") && arg !== "-") throw new UsageError(`unknown option ${arg}`);
      else if (source === undefined) source = arg;
      else throw new UsageError(`unexpected argument '${arg}'`);
    }
    if (source === undefined) throw new UsageError("the receipt file (or - for standard input) is required");
    if (jwksSource === undefined) {
      const base = io.env.BASE_URL?.replace(/\/+$/, "");
      if (!base)
        throw new UsageError("--jwks <file | url> is required (or set BASE_URL to use its /.well-known/jwks.json)");
      jwksSource = `${base}/.well-known/jwks.json`;
    }
    if (source === "-" && jwksSource === "-") throw new UsageError("the receipt and the key set cannot both be -");

    const err = (line: string) => {
      if (!quiet) io.stderr.write(`labphi verify-receipt: ${line}\n`);
    };
    let receipt: string;
    let keys: ReturnType<typeof jwksKeys>;
    try {
      receipt = await readText(source, io, "the receipt");
      const text = await readText(jwksSource, io, "the key set");
      let doc: unknown;
      try {
        doc = JSON.parse(text);
      } catch {
        throw new ReadError(`the key set ${jwksSource} is not JSON`);
      }
      try {
        keys = jwksKeys(doc);
      } catch (e) {
        throw new ReadError(`the key set ${jwksSource} ${(e as Error).message}`);
      }
    } catch (e) {
      if (!(e instanceof ReadError)) throw e;
      err(e.message);
      return 3;
    }

    const result = await verifyReceipt(receipt, { keys });
    if (json) {
      io.stdout.write(
        `${JSON.stringify(
          result.ok
            ? { valid: true, kid: result.kid, claims: result.claims }
            : { valid: false, reason: result.reason, message: result.message },
          null,
          2,
        )}\n`,
      );
    } else if (!quiet) {
      if (result.ok) {
        io.stdout.write(`VALID receipt, signed by key ${result.kid}\n${JSON.stringify(result.claims, null, 2)}\n`);
      } else {
        io.stdout.write(`NOT VALID (${result.reason}): ${result.message}\n`);
      }
    }
    if (!result.ok) err(`NOT VALID (${result.reason}): ${result.message}`);
    return result.ok ? 0 : 1;
  },
};
