import fs from "node:fs";
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import path from "node:path";
import { FileStore } from "@tus/file-store";
import { type Locker, Metadata, Server as TusServer, type Upload } from "@tus/server";
import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { infrastructureProblem } from "../http/errors.js";
import { safeError } from "../http/logger.js";
import { PROBLEM_CONTENT_TYPE, Problem, problemSchema } from "../http/problem.js";
import { idText } from "../http/text.js";
import type { App } from "../http/types.js";
import type { DiskFloor } from "./disk-floor.js";
import { assertNotExpired, tusSpoolDir } from "./retention.js";
import type { JobService } from "./service.js";
import type { JobRow } from "./tables.js";

/**
 * Resumable uploads of a suite job's input (tus 1.0.0: creation, PATCH at Upload-Offset, HEAD to
 * resume) under TUS_PATH. Uploads spool under DATA_DIR/spool/tus (0700), then move into the object
 * store (src/jobs/transfer.ts). A Fastify handler authorizes each request with the job token and
 * checks it against the quote (`gate`) before @tus/server sees it; tus errors become problem+json.
 */

export const TUS_PATH = "/api/jobs/uploads";
const TUS_VERSION = "1.0.0";
const JOB_ID = /^job_[A-Za-z0-9_-]{1,64}$/;
const uploadIdParam = idText(80).describe("tus upload id (the job id)");
const AUTH = "Needs `Authorization: Bearer <job_token>` (the token returned once with the job).";

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

/** Registers the tus routes in `scope` (a scope whose raw bodies are streams, see routes.ts). */
export function tusRoutes(
  scope: App,
  deps: {
    jobs: JobService;
    dataDir: string;
    baseUrl: string;
    diskFloor: DiskFloor;
    /** The tus upload lock (PostgreSQL: shared by every instance, tus-locker.ts); absent: in the process */
    locker?: Locker | undefined;
  },
) {
  const app = scope;
  const { jobs, baseUrl, diskFloor } = deps;
  const { transfers } = app.services;
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
      const job = await gate(request, request.params.upload_id);
      // a cancel of the job (POST /api/jobs/:id/cancel) stops this chunk: the connection closes and
      // the next request answers 409 job_cancelled
      const stop = transfers.watchInput(job.id, () => request.raw.destroy());
      try {
        await handOver(request, reply);
      } finally {
        stop();
      }
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
}
