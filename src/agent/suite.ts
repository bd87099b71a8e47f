import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { open, stat } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import { Readable, Transform, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { AgentError, type PaidAnswer, type PayContext, paidPost } from "./client.js";

/**
 * A suite job end to end: quote/start it (POST /api/x402-suite, paid when above the free cap),
 * stream the file up (PUT), poll the job until done, stream the output down, and check it: a
 * compressed output must decompress (the codec's decompressStream) to the input's SHA-256, and
 * every output must hash to the job's reported output_sha256.
 */

export interface SuiteOptions {
  op?: "compress" | "decompress" | "roundtrip";
  level?: "fast" | "balanced" | "max";
  product?: string;
  dataClass?: string;
  /** a join-work identity token: its monthly free cap applies */
  identity?: string;
  /** where the output goes (default FILE.lpz for compress, FILE.out otherwise) */
  out?: string;
  /** poll interval (default 1 s) */
  pollMs?: number;
  /** give up waiting for the job after this long (default 30 min) */
  maxWaitMs?: number;
}

export interface SuiteResult {
  job_id: string;
  quote_id: string;
  amount_units: string;
  payment?: PaidAnswer<unknown>["payment"];
  input_sha256: string;
  output: string;
  output_bytes: number;
  output_sha256: string;
  verified: boolean;
}

interface JobStart {
  job_id: string;
  job_token: string;
  quote_id: string;
  status_url: string;
  upload_url: string;
  output_url: string;
  amount_units: string;
}

interface JobView {
  state: string;
  progress: number;
  bytes_in: number;
  bytes_out: number;
  segments_done: number;
  segments_total: number;
  output_sha256: string | null;
  error: { code: string; detail: string | null } | null;
}

/** A streamed PUT of a file (node:http: a plain Content-Length body, no buffering). */
function putFile(url: string, file: string, size: number, token: string, timeoutMs: number): Promise<string> {
  const target = new URL(url);
  const lib = target.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request(
      target,
      {
        method: "PUT",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/octet-stream",
          "content-length": String(size),
          accept: "application/json",
        },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          if ((res.statusCode ?? 0) >= 300) {
            let code = `http_${res.statusCode}`;
            try {
              code = (JSON.parse(text) as { code?: string }).code ?? code;
            } catch {}
            reject(new AgentError(code, `upload: ${res.statusCode} ${code}`, res.statusCode));
          } else resolve(text);
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error("upload timed out")));
    req.on("error", reject);
    createReadStream(file).on("error", reject).pipe(req);
  });
}

async function sha256File(file: string): Promise<string> {
  const h = createHash("sha256");
  await pipeline(createReadStream(file), h);
  return h.digest("hex");
}

/** A Writable that only hashes (and counts) what passes. */
function hasher(): { sink: Writable; digest: () => string; bytes: () => number } {
  const h = createHash("sha256");
  let n = 0;
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      h.update(chunk);
      n += chunk.length;
      cb();
    },
  });
  return { sink, digest: () => h.digest("hex"), bytes: () => n };
}

/**
 * The output a compressed stream file declares (records of a uvarint length and a framed container
 * whose header holds the original length; what `labphi compress` writes), read from the record
 * headers only; null when the file is not such a stream. A decompress job is quoted on this
 * decompressed size (issue #21): the service refuses a stream that declares more than its quote.
 */
export async function declaredOutputOfFile(file: string): Promise<number | null> {
  const fh = await open(file, "r");
  try {
    const size = (await fh.stat()).size;
    const head = Buffer.alloc(32);
    let total = 0;
    for (let at = 0; at < size; ) {
      const { bytesRead } = await fh.read(head, 0, head.length, at);
      const read = (from: number): [number, number] | null => {
        let v = 0;
        for (let i = from, shift = 0; i < bytesRead && shift <= 49; i++, shift += 7) {
          const b = head[i] as number;
          v += (b & 0x7f) * 2 ** shift;
          if (!(b & 0x80)) return [v, i + 1];
        }
        return null;
      };
      const len = read(0);
      if (!len || len[0] < 11 || head[len[1]] !== 0xcf || head[len[1] + 1] !== 0x86) return null;
      if (at + len[1] + len[0] > size) return null;
      const declared = read(len[1] + 5);
      if (!declared) return null;
      total += declared[0];
      at += len[1] + len[0];
    }
    return total;
  } finally {
    await fh.close();
  }
}

export async function runSuite(
  ctx: PayContext,
  baseUrl: string,
  file: string,
  opts: SuiteOptions = {},
): Promise<SuiteResult> {
  const op = opts.op ?? "compress";
  const info = await stat(file).catch(() => {
    throw new AgentError("input_not_found", `cannot read ${file}`);
  });
  if (!info.isFile() || info.size === 0) throw new AgentError("input_empty", `${file} is not a non-empty file`);
  const inputSha = await sha256File(file);
  ctx.log(`input: ${file}, ${info.size} bytes, sha256 ${inputSha}`);
  // decompress: quoted on the decompressed size the stream declares (else the file's size)
  const quoted = op === "decompress" ? ((await declaredOutputOfFile(file)) ?? info.size) : info.size;
  if (quoted !== info.size) ctx.log(`the stream declares ${quoted} bytes of output: quoting those`);
  const body = {
    product: opts.product ?? "auto",
    dataClass: opts.dataClass ?? "text",
    op,
    bytes: quoted,
    ...(opts.level ? { level: opts.level } : {}),
    ...(opts.identity ? { identity: opts.identity } : {}),
  };
  const started = await paidPost<JobStart>(ctx, `${baseUrl}/api/x402-suite`, body, "suite job");
  const job = started.body;
  ctx.log(`job: ${job.job_id} (quote ${job.quote_id}, paid ${job.amount_units} units); status ${job.status_url}`);

  ctx.log(`→ PUT ${job.upload_url} (${info.size} bytes, streamed)`);
  await putFile(job.upload_url, file, info.size, job.job_token, ctx.timeoutMs);
  ctx.log("  uploaded");

  const auth = { authorization: `Bearer ${job.job_token}`, accept: "application/json" };
  const deadline = Date.now() + (opts.maxWaitMs ?? 30 * 60_000);
  let view: JobView;
  let last = "";
  for (;;) {
    const res = await ctx.fetch(job.status_url, { headers: auth, signal: AbortSignal.timeout(ctx.timeoutMs) });
    if (res.status !== 200) throw new AgentError(`http_${res.status}`, `job status: ${res.status}`, res.status);
    view = (await res.json()) as JobView;
    const line = `  ${view.state} ${Math.round(view.progress * 100)}% (${view.segments_done}/${view.segments_total} segments)`;
    if (line !== last) ctx.log(line);
    last = line;
    if (view.state === "done") break;
    if (view.state === "failed" || view.state === "cancelled") {
      throw new AgentError(
        view.error?.code ?? `job_${view.state}`,
        `job ${job.job_id} ${view.state}: ${view.error?.detail ?? view.error?.code ?? ""}`,
      );
    }
    if (Date.now() > deadline) throw new AgentError("job_wait_timeout", `job ${job.job_id} not done in time`);
    await ctx.sleep(opts.pollMs ?? 1000);
  }

  const out = opts.out ?? `${file}${op === "compress" ? ".lpz" : ".out"}`;
  ctx.log(`→ GET ${job.output_url} → ${out}`);
  const res = await ctx.fetch(job.output_url, { headers: { authorization: auth.authorization } });
  if (res.status !== 200 || !res.body) throw new AgentError(`http_${res.status}`, `output: ${res.status}`, res.status);
  const written = hasher();
  await pipeline(
    Readable.fromWeb(res.body as never),
    new Transform({
      transform(chunk: Buffer, _e, cb) {
        written.sink.write(chunk);
        cb(null, chunk);
      },
    }),
    createWriteStream(out),
  );
  const outSha = written.digest();
  ctx.log(`  ${written.bytes()} bytes, sha256 ${outSha}`);
  if (view.output_sha256 && view.output_sha256 !== outSha) {
    throw new AgentError(
      "output_hash_mismatch",
      `the output's SHA-256 ${outSha} is not the job's ${view.output_sha256}`,
    );
  }
  if (op === "compress") {
    const { decompressStream } = await import("../codec/index.js");
    const restored = hasher();
    await pipeline(createReadStream(out), decompressStream(), restored.sink);
    if (restored.digest() !== inputSha) {
      throw new AgentError("verify_failed", `${out} does not decompress to the input (SHA-256 differs)`);
    }
    ctx.log(`verified: ${out} decompresses to ${restored.bytes()} bytes with the input's SHA-256`);
  }
  return {
    job_id: job.job_id,
    quote_id: job.quote_id,
    amount_units: job.amount_units,
    ...(started.payment ? { payment: started.payment } : {}),
    input_sha256: inputSha,
    output: out,
    output_bytes: written.bytes(),
    output_sha256: outSha,
    verified: true,
  };
}
