import fs from "node:fs";
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import path from "node:path";
import { PassThrough, Readable } from "node:stream";
import { FileStore } from "@tus/file-store";
import { type Locker, Metadata, Server as TusServer, type Upload } from "@tus/server";
import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { infrastructureProblem } from "../http/errors.js";
import { safeError } from "../http/logger.js";
import { PROBLEM_CONTENT_TYPE, Problem, problemSchema } from "../http/problem.js";
import { idText } from "../http/text.js";
import type { App } from "../http/types.js";
import { DiskFloor } from "./disk-floor.js";
import { assertNotExpired, tusSpoolDir } from "./retention.js";
import type { JobService } from "./service.js";
import type { JobRow } from "./tables.js";

/**
 * Suite jobs over HTTP (issue #10): the job's state, its input (raw streaming PUT, or resumable
 * tus uploads) and its output (streamed, with ranges). Every route needs the job's token
 * (`Authorization: Bearer <job_token>`). Bodies are never read by Fastify here: a passthrough
 * parser hands the request stream to the store, which counts bytes against the quote (Fastify's
 * body limit does not apply to a stream nobody reads).
 */

export const TUS_PATH = "/api/jobs/uploads";
const TUS_VERSION = "1.0.0";
const JOB_ID = /^job_[A-Za-z0-9_-]{1,64}$/;

const jobIdParam = idText(80).describe("job id (job_…)");
const uploadIdParam = idText(80).describe("tus upload id (the job id)");

export const jobViewSchema = z.object({
  job_id: z.string(),
  state: z.enum(["awaiting_input", "uploading", "queued", "running", "done", "failed", "cancelled"]),
  product: z.string(),
  data_class: z.string(),
  op: z.string(),
  level: z.string(),
  bytes_quoted: z.number().int(),
  bytes_in: z.number().int().describe("bytes received and stored (what fit, after a 413)"),
  bytes_out: z.number().int(),
  progress: z.number().describe("0..1"),
  ratio: z.number().nullable().describe("bytes_out / bytes_in once done"),
  segments_total: z.number().int(),
  segments_done: z.number().int(),
  attempts: z.number().int(),
  error: z.object({ code: z.string(), detail: z.string().nullable() }).nullable(),
  input_sha256: z.string().nullable(),
  output_sha256: z.string().nullable(),
  paid_by: z.string(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  data_expires_at: z
    .string()
    .nullable()
    .describe(
      "when the job's input and output will be deleted (finished_at + JOB_RETENTION_HOURS); then 410 job_expired. Null until the job ends",
    ),
  links: z.object({ self: z.string(), input: z.string(), upload_tus: z.string(), output: z.string() }),
});

const AUTH = "Needs `Authorization: Bearer <job_token>` (the token returned once with the job).";

/** One `bytes=` range of a `total`-byte body: [start, end] inclusive, "unsatisfiable", or undefined (ignore: send all). */
export function parseRange(header: string | undefined, total: number): [number, number] | "unsatisfiable" | undefined {
  if (!header) return undefined;
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  // Several ranges, other units or bad syntax: ignored (RFC 9110 allows answering 200 with everything).
  if (!m || (m[1] === "" && m[2] === "")) return undefined;
  if (m[1] === "") {
    const suffix = Number(m[2]);
    if (suffix === 0 || total === 0) return "unsatisfiable";
    return [Math.max(0, total - suffix), total - 1];
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? Number.POSITIVE_INFINITY : Number(m[2]);
  if (end < start) return undefined;
  if (start >= total) return "unsatisfiable";
  return [start, Math.min(end, total - 1)];
}

/** `Repr-Digest` (RFC 9530) of a hex SHA-256: `sha-256=:<base64 of the 32 bytes>:`. */
export function reprDigest(sha256Hex: string): string {
  return `sha-256=:${Buffer.from(sha256Hex, "hex").toString("base64")}:`;
}

/** tus errors are `{status_code, body}`; ours are problems. Both become problem+json bodies. */
const TUS_CODES: Record<number, string> = {
  400: "tus_bad_request",
  403: "tus_forbidden",
  404: "upload_not_found",
  409: "upload_offset_conflict",
  410: "upload_gone",
  412: "tus_version_required",
  413: "input_too_large",
  415: "unsupported_media_type",
  460: "upload_checksum_mismatch",
  499: "upload_aborted",
};

/** Response headers (object, [name, value] pairs or a flat list) without Content-Type. */
function withoutContentType(headers: unknown): unknown {
  const isType = (name: unknown) => String(name).toLowerCase() === "content-type";
  if (Array.isArray(headers)) {
    if (headers.every((h) => Array.isArray(h))) return headers.filter((h) => !isType((h as unknown[])[0]));
    const flat: unknown[] = [];
    for (let i = 0; i + 1 < headers.length; i += 2) if (!isType(headers[i])) flat.push(headers[i], headers[i + 1]);
    return flat;
  }
  if (headers && typeof headers === "object") {
    return Object.fromEntries(Object.entries(headers).filter(([name]) => !isType(name)));
  }
  return headers;
}

export function jobRoutes(
  app: App,
  deps: {
    jobs: JobService;
    dataDir: string;
    baseUrl: string;
    /** JOB_MIN_FREE_DISK_BYTES: new uploads get 507 below it (0 or absent: no floor) */
    minFreeDiskBytes?: number;
    /** The tus upload lock (PostgreSQL: shared by every instance, tus-locker.ts); absent: in the process */
    locker?: Locker | undefined;
  },
) {
  const { jobs, baseUrl } = deps;
  /** Receiving inputs and serving outputs (src/jobs/transfer.ts), built in src/services.ts. */
  const { transfers } = app.services;
  const diskFloor = new DiskFloor(deps.dataDir, deps.minFreeDiskBytes ?? 0);

  // --- tus: uploads spool under DATA_DIR/spool/tus (0700), then move into the object store ---
  const spool = tusSpoolDir(deps.dataDir);
  /** The job each gated request was authorized for (by the Fastify handler, before tus runs). */
  const authorized = new WeakMap<IncomingMessage, JobRow>();
  /** Requests whose tus error body is already a problem document. */
  const problemBodies = new WeakSet<IncomingMessage>();
  type TusRequest = Parameters<NonNullable<ConstructorParameters<typeof TusServer>[0]["onIncomingRequest"]>>[0];
  const nodeReq = (req: TusRequest) =>
    (req as unknown as { runtime?: { node?: { req?: IncomingMessage } } }).runtime?.node?.req;
  const jobFor = async (req: TusRequest, uploadId: string | null): Promise<JobRow> => {
    const raw = nodeReq(req);
    const job = raw ? authorized.get(raw) : undefined;
    if (job && job.id === uploadId) return job;
    return jobs.authorize(uploadId ?? "", req.headers.get("authorization") ?? undefined);
  };

  // Built on first use: FileStore creates its folder from its constructor (asynchronously), and an
  // app that never sees a tus request needs no spool.
  let server: { tus: TusServer; datastore: FileStore } | undefined;
  const tusServer = () => {
    if (!server) {
      fs.mkdirSync(spool, { recursive: true, mode: 0o700 });
      const datastore = new FileStore({ directory: spool });
      server = { tus: newTusServer(datastore), datastore };
    }
    return server;
  };

  const newTusServer = (datastore: FileStore) =>
    new TusServer({
      path: TUS_PATH,
      datastore,
      ...(deps.locker ? { locker: deps.locker } : {}),
      // One upload per job, named by it: a new POST for the same job starts over (bounded spool).
      namingFunction: (_req, metadata) => {
        const id = metadata?.job_id;
        if (!id || !JOB_ID.test(id)) {
          throw new Problem(
            400,
            "upload_job_id_required",
            "Name the job in Upload-Metadata: job_id <base64 of job_…>.",
          );
        }
        return id;
      },
      generateUrl: (_req, { id }) => `${baseUrl}${TUS_PATH}/${id}`,
      maxSize: async (req, id) => (id ? Number((await jobFor(req, id)).bytes_quoted) : 0),
      onIncomingRequest: async (req, id) => {
        await jobFor(req, id);
      },
      onUploadCreate: async (req, upload) => {
        const job = await jobFor(req, upload.id);
        transfers.assertAcceptsInput(job);
        if (upload.size === undefined) {
          throw new Problem(400, "upload_length_required", "Send Upload-Length (deferred lengths are not accepted).");
        }
        transfers.assertFits(job, upload.size);
        await transfers.markUploading(job.id);
        return {};
      },
      onUploadFinish: async (req, upload: Upload) => {
        // Moving a large file into the store takes a while with no traffic on the socket.
        const socket = nodeReq(req)?.socket;
        const idle = socket?.timeout ?? 0;
        socket?.setTimeout(0);
        try {
          const file = path.join(spool, upload.id);
          const job = await transfers.receive(upload.id, fs.createReadStream(file)).catch(async (err) => {
            // a refused input (the job is failed, issue #21): its spool copy is of no use
            if (err instanceof Problem && err.code === "output_exceeds_quote") {
              await datastore.remove(upload.id).catch(() => {});
            }
            throw err;
          });
          await datastore.remove(upload.id).catch(() => {});
          return { headers: { "Job-State": job.state } };
        } finally {
          socket?.setTimeout(idle);
        }
      },
      onResponseError: (req, err) => {
        const raw = nodeReq(req);
        if (raw) problemBodies.add(raw);
        const instance = new URL(req.url).pathname;
        let problem: Problem;
        // F14: a full disk (ENOSPC, EFBIG) or a database that is down, as their problems (507, 503)
        const infra = infrastructureProblem(err);
        if (err instanceof Problem) problem = err;
        else if (infra) problem = infra;
        else if (!(err instanceof Error) && typeof err.status_code === "number" && err.status_code < 500) {
          const code = TUS_CODES[err.status_code] ?? "tus_bad_request";
          problem = new Problem(err.status_code, code, String(err.body ?? "").trim() || code);
        } else {
          app.log.error({ err: safeError(err) }, "tus upload failed");
          problem = new Problem(500, "internal_error", "An unexpected error occurred; it has been logged.");
        }
        return { status_code: problem.status, body: JSON.stringify(problem.body(instance)) };
      },
    });

  /** The Fastify side of a tus request: auth and quote checks as problems, then tus itself. */
  async function gate(request: FastifyRequest, uploadId: string | undefined): Promise<JobRow> {
    if (request.headers["tus-resumable"] !== TUS_VERSION) {
      throw new Problem(
        412,
        "tus_version_required",
        `Send Tus-Resumable: ${TUS_VERSION}.`,
        {},
        { "Tus-Version": TUS_VERSION },
      );
    }
    let jobId = uploadId;
    if (request.method === "POST") {
      const header = request.headers["upload-metadata"];
      let metadata: Record<string, string | null> | undefined;
      try {
        metadata = typeof header === "string" ? Metadata.parse(header) : undefined;
      } catch {
        throw new Problem(400, "upload_metadata_invalid", "Upload-Metadata is not valid tus metadata.");
      }
      jobId = metadata?.job_id ?? undefined;
      if (!jobId) {
        throw new Problem(400, "upload_job_id_required", "Name the job in Upload-Metadata: job_id <base64 of job_…>.");
      }
    }
    const job = await jobs.authorize(jobId ?? "", request.headers.authorization);
    assertNotExpired(job);
    if (request.method === "POST") {
      transfers.assertAcceptsInput(job);
      const length = request.headers["upload-length"];
      if (typeof length !== "string" || !/^\d{1,16}$/.test(length)) {
        throw new Problem(400, "upload_length_required", "Send Upload-Length (deferred lengths are not accepted).");
      }
      transfers.assertFits(job, Number(length));
    }
    if (request.method === "PATCH") transfers.assertAcceptsInput(job);
    if (request.method === "POST" || request.method === "PATCH") {
      // bytes are coming: refused below the disk floor; the upload is alive (the sweep sees it)
      await diskFloor.assertRoom();
      await transfers.touchInput(job);
    }
    authorized.set(request.raw, job);
    return job;
  }

  async function handOver(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const res: ServerResponse = reply.raw;
    // Headers our hooks set (request id, CORS) go out with tus's answer.
    for (const [name, value] of Object.entries(reply.getHeaders() as OutgoingHttpHeaders)) {
      if (value !== undefined) res.setHeader(name, value);
    }
    const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
    res.writeHead = ((status: number, ...rest: unknown[]) => {
      if (status >= 400 && problemBodies.has(request.raw)) {
        // tus's own Content-Type (text/plain) gives way to the problem's.
        const last = rest.length - 1;
        rest[last] = withoutContentType(rest[last]);
        res.setHeader("Content-Type", PROBLEM_CONTENT_TYPE);
      }
      if (status >= 400 && !request.raw.complete) res.setHeader("Connection", "close");
      return writeHead(status, ...rest);
    }) as typeof res.writeHead;
    reply.hijack();
    try {
      await tusServer().tus.handle(request.raw, res);
    } catch (err) {
      app.log.error({ reqId: request.id, err: safeError(err) }, "tus handler failed");
      res.destroy();
    }
  }

  const tusDoc = (summary: string, description: string, ok: Record<number, z.ZodType>) => ({
    summary,
    description: `${description} tus 1.0.0 (creation, Upload-Offset, HEAD). ${AUTH}`,
    tags: ["jobs"],
    security: [{ jobBearer: [] }],
    response: {
      ...ok,
      400: problemSchema,
      401: problemSchema,
      404: problemSchema,
      409: problemSchema,
      410: problemSchema,
      412: problemSchema,
      413: problemSchema,
      507: problemSchema,
    },
  });

  app.register(async (instance) => {
    const scope = instance as unknown as App;
    // Raw bodies are streams here: never read, parsed or limited by Fastify; other types get 415.
    scope.removeAllContentTypeParsers();
    const RAW_TYPES = ["application/octet-stream", "application/offset+octet-stream"];
    scope.addContentTypeParser(RAW_TYPES, (_request, _payload, done) => done(null));
    // A 415 here names the raw types (src/http/errors.ts reads `config.accepts`).
    scope.addHook("onRoute", (route) => {
      route.config = { ...(route.config ?? {}), accepts: RAW_TYPES } as typeof route.config;
    });
    // A refusal before the body was read closes the connection rather than draining gigabytes.
    scope.addHook("onSend", async (request, reply, payload) => {
      if (reply.statusCode >= 400 && !request.raw.complete && request.raw.readableFlowing !== true) {
        reply.header("Connection", "close");
      }
      return payload;
    });

    scope.get(
      "/api/jobs/:id",
      {
        schema: {
          summary: "A suite job: state, bytes in and out, progress, ratio, level, attempts, errors",
          description: `${AUTH} Once the job's data has expired (JOB_RETENTION_HOURS after it ended, or an upload abandoned for JOB_ABANDONED_UPLOAD_HOURS) this answers 410 job_expired, with the job's final state, finished_at, expired_at and output_sha256 in the problem. A job deleted by DELETE /api/jobs/{id}: 410 job_deleted (every job route).`,
          tags: ["jobs"],
          security: [{ jobBearer: [] }],
          params: z.object({ id: jobIdParam }),
          response: { 200: jobViewSchema, 401: problemSchema, 410: problemSchema },
        },
      },
      async (request) => {
        const job = await jobs.authorize(request.params.id, request.headers.authorization);
        assertNotExpired(job);
        return jobs.view(job);
      },
    );

    scope.put(
      "/api/jobs/:id/input",
      {
        schema: {
          summary: "Send a suite job's whole input (raw bytes, streamed)",
          description: `Content-Type: application/octet-stream; at most the quoted bytes (a larger Content-Length: 413 at once; more bytes arriving: 413, the part that fit is kept and recorded as bytes_in). Accepted while the job is awaiting_input or uploading (an expired job: 410 job_expired); refused with 507 insufficient_storage while the free disk under DATA_DIR is below JOB_MIN_FREE_DISK_BYTES; on success the job is queued. A request must arrive within REQUEST_TIMEOUT_SECONDS: for large inputs use the resumable tus endpoint ${TUS_PATH}. ${AUTH}`,
          tags: ["jobs"],
          security: [{ jobBearer: [] }],
          params: z.object({ id: jobIdParam }),
          response: {
            200: jobViewSchema,
            400: problemSchema,
            401: problemSchema,
            409: problemSchema,
            410: problemSchema,
            413: problemSchema,
            415: problemSchema,
            507: problemSchema,
          },
        },
      },
      async (request, reply) => {
        const job = await jobs.authorize(request.params.id, request.headers.authorization);
        transfers.assertAcceptsInput(job);
        const declared = request.headers["content-length"];
        if (declared !== undefined) transfers.assertFits(job, Number(declared));
        await diskFloor.assertRoom();
        const raw = request.raw;
        // The store reads a proxy: when it stops early (over the quote) the request itself stays
        // open, so the 413 can still be sent.
        const proxy = new PassThrough();
        const aborted = () => {
          if (!raw.complete) proxy.destroy(new Error("the client closed the upload before its end"));
        };
        raw.on("close", aborted);
        raw.pipe(proxy);
        try {
          const done = await transfers.receive(job.id, proxy);
          return reply.code(200).send(jobs.view(done));
        } catch (err) {
          raw.unpipe(proxy);
          // Drain what is still coming (bounded by the request timeout) so the client reads the answer.
          if (!raw.complete && !raw.destroyed) raw.resume();
          throw err;
        } finally {
          raw.off("close", aborted);
        }
      },
    );

    scope.get(
      "/api/jobs/:id/output",
      {
        schema: {
          summary: "A done suite job's output (streamed; Range supported)",
          description: `The segment outputs in order. \`Range: bytes=a-b\` (one range, suffix \`bytes=-n\` too) → 206 with Content-Range; outside the output → 416. ETag is the output's SHA-256 (hex), \`Repr-Digest: sha-256=:<base64>:\` the same digest (RFC 9530, also on a 206). A deleted job: 410 job_deleted. ${AUTH}`,
          tags: ["jobs"],
          security: [{ jobBearer: [] }],
          params: z.object({ id: jobIdParam }),
          response: {
            200: z.any().describe("the output bytes (application/octet-stream)"),
            206: z.any().describe("the requested range of the output"),
            401: problemSchema,
            409: problemSchema,
            410: problemSchema,
            416: problemSchema,
          },
        },
      },
      async (request, reply) => {
        const job = await jobs.authorize(request.params.id, request.headers.authorization);
        const { parts, total } = await transfers.output(job);
        const etag = job.output_sha256 ? `"${job.output_sha256}"` : undefined;
        reply.header("Accept-Ranges", "bytes").header("Cache-Control", "private, no-store");
        if (etag) reply.header("ETag", etag);
        // RFC 9530: the SHA-256 of the whole output (also on a 206: it describes the representation)
        if (job.output_sha256) reply.header("Repr-Digest", reprDigest(job.output_sha256));
        let range = parseRange(request.headers.range, total);
        const ifRange = request.headers["if-range"];
        if (range !== undefined && ifRange !== undefined && ifRange !== etag) range = undefined;
        if (range === "unsatisfiable") {
          throw new Problem(
            416,
            "range_not_satisfiable",
            `The range ${request.headers.range} is outside the ${total}-byte output.`,
            { bytes_total: total },
            { "Content-Range": `bytes */${total}` },
          );
        }
        const [start, end] = range ?? [0, total - 1];
        const length = total === 0 ? 0 : end - start + 1;
        reply.type("application/octet-stream").header("Content-Length", String(length));
        if (range) reply.code(206).header("Content-Range", `bytes ${start}-${end}/${total}`);
        else reply.code(200);
        // HEAD: an empty stream keeps our Content-Length (Fastify's HEAD handler counts a string body).
        if (request.method === "HEAD") return reply.send(Readable.from([]));
        if (length === 0) return reply.send("");
        return reply.send(transfers.openOutput(parts, start, end));
      },
    );

    // tus (resumable uploads): create, then PATCH chunks at Upload-Offset, HEAD to resume.
    scope.post(
      TUS_PATH,
      {
        schema: tusDoc(
          "Create a resumable upload of a suite job's input",
          "Upload-Length (at most the quoted bytes) and Upload-Metadata `job_id <base64>`; answers 201 with Location.",
          { 201: z.null().describe("created; Location is the upload URL") },
        ),
      },
      async (request, reply) => {
        await gate(request, undefined);
        await handOver(request, reply);
      },
    );
    scope.patch(
      `${TUS_PATH}/:upload_id`,
      {
        schema: {
          ...tusDoc(
            "Append to a resumable upload",
            "Content-Type: application/offset+octet-stream at Upload-Offset; the last chunk completes the job's input (it is queued).",
            { 204: z.null().describe("stored; Upload-Offset is the new offset") },
          ),
          params: z.object({ upload_id: uploadIdParam }),
        },
      },
      async (request, reply) => {
        await gate(request, request.params.upload_id);
        await handOver(request, reply);
      },
    );
    scope.head(
      `${TUS_PATH}/:upload_id`,
      {
        schema: { hide: true, params: z.object({ upload_id: uploadIdParam }) },
      },
      async (request, reply) => {
        await gate(request, request.params.upload_id);
        await handOver(request, reply);
      },
    );
  });
}
