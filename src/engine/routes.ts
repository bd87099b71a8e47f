import type { FastifyError, FastifyReply, FastifySchemaCompiler } from "fastify";
import { validatorCompiler } from "fastify-type-provider-zod";
import type { z } from "zod";
import { sendProblem, toProblem } from "../http/errors.js";
import { Problem } from "../http/problem.js";
import type { App } from "../http/types.js";
import type { IdentityService } from "../identity/service.js";
import { decodeBase64, decodeData, encodeOutput, toBase64 } from "./data.js";
import { CORPORA } from "./generators.js";
import { omniOp, webOp } from "./ops.js";
import {
  binaryBodyDoc,
  binaryQuery,
  compressAnswer,
  corpusBody,
  dataBody,
  decompressAnswer,
  decompressBody,
  decompressBodyDoc,
  omniBody,
  omniDescriptorAnswer,
  omniResult,
  PROBLEMS,
  processAnswer,
  webCodecBody,
  webDescriptorAnswer,
  webResult,
} from "./schemas.js";
import { type DECLARED_TYPES, type EngineService, SUITE_POINTER } from "./service.js";

/**
 * The codec's HTTP face: /api/omni, /api/web-codec, /api/compress, /api/decompress, /api/process.
 * Registered in one encapsulated plugin so the octet-stream parser (raw bytes as a Buffer, never
 * decoded as text), the codec body limit and the 413 problem that points to suite jobs apply to
 * these routes only.
 */

/**
 * The raw-bytes routes take either an octet-stream Buffer or JSON, so their body schema documents
 * the JSON forms in OpenAPI while the handler validates the body itself (same zod schemas, plus
 * the Buffer case); every other part (querystring) is validated as usual.
 */
const bodyInHandler = ((req) =>
  req.httpPart === "body"
    ? (data: unknown) => ({ value: data })
    : validatorCompiler(req as never)) as FastifySchemaCompiler<z.ZodType> as never;

const OCTET = "application/octet-stream";

function isBinary(body: unknown): body is Buffer {
  return Buffer.isBuffer(body);
}

function parseJson<T>(schema: z.ZodType<T>, body: unknown): T {
  if (body === null || body === undefined) {
    throw new Problem(400, "body_required", `Send ${OCTET} bytes or a JSON body.`);
  }
  const r = schema.safeParse(body);
  if (!r.success) {
    const issue = r.error.issues[0];
    const where = issue?.path.length ? `body/${issue.path.join("/")}` : "body";
    throw new Problem(400, "validation_failed", `Invalid ${where}: ${issue?.message ?? "invalid value"}.`, {
      errors: r.error.issues.map((i) => ({ in: "body", path: `/${i.path.join("/")}`, message: i.message })),
    });
  }
  return r.data;
}

function sizeHeaders(reply: FastifyReply, h: Record<string, string | number | null | undefined>) {
  for (const [k, v] of Object.entries(h)) if (v !== null && v !== undefined) reply.header(k, String(v));
}

export function engineRoutes(app: App, deps: { engine: EngineService; identities: IdentityService }) {
  const { engine, identities } = deps;
  const bodyLimit = engine.limits.bodyLimitBytes;

  app.register(async (instance) => {
    const scope = instance as unknown as App;
    // Raw bytes stay raw: a Buffer, never decoded through UTF-8.
    scope.addContentTypeParser(OCTET, { parseAs: "buffer", bodyLimit }, (_req, body, done) => done(null, body));
    scope.setErrorHandler((err: FastifyError, request, reply) => {
      if (err.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
        return sendProblem(
          reply,
          request,
          new Problem(
            413,
            "body_too_large",
            `Codec requests take bodies up to ${bodyLimit} bytes. Larger data goes through a suite job (${SUITE_POINTER}) or the labphi CLI.`,
            { limit_bytes: bodyLimit, suite: SUITE_POINTER, cli: "labphi compress FILE" },
          ),
        );
      }
      const problem = toProblem(err);
      if (problem.status >= 500 && !(err instanceof Problem))
        request.log.error({ reqId: request.id, err }, "unhandled error");
      return sendProblem(reply, request, problem);
    });

    scope.get(
      "/api/omni",
      {
        schema: {
          summary: "Engine descriptor: version, ops, paths, chambers, levels, limits",
          tags: ["codec"],
          response: { 200: omniDescriptorAnswer },
        },
      },
      async () => engine.engineDescriptor(),
    );

    scope.post(
      "/api/omni",
      {
        bodyLimit,
        schema: {
          summary: "Engine operations: compress, decompress, profile, route, bench, barrel, print, prints",
          description:
            '`data` is utf8 text by default or base64 with `encoding: "base64"` (a container for decompress is always base64). compress and bench default to level max. A caller identified by `Authorization: Bearer <token>` or `X-Identity-Token` (POST /api/join-work) gets a print recorded on each compress; `prints` lists the caller\'s own (paginated with limit/offset). Limits: docs/engine-api.md.',
          tags: ["codec"],
          body: omniBody,
          response: { 200: omniResult, ...PROBLEMS },
        },
      },
      async (request, reply) => {
        reply.header("Cache-Control", "no-store");
        const identity = await identities.fromHeaders(request.headers);
        return omniOp(engine, request.body, identity);
      },
    );

    scope.get(
      "/api/web-codec",
      {
        schema: {
          summary: "Web codec descriptor: engine, ops, methods, strategy, counsel",
          tags: ["codec"],
          response: { 200: webDescriptorAnswer },
        },
      },
      async () => engine.webDescriptor(),
    );

    scope.post(
      "/api/web-codec",
      {
        bodyLimit,
        schema: {
          summary: "Web codec: compress, decompress or bench with omni or classic (smaller of brotli-11 and gzip-9)",
          description:
            "Lossless always; the input is never rewritten. `creator_counsel` (default true) adds heart/brain/cloak notes derived from the result; false omits them.",
          tags: ["codec"],
          body: webCodecBody,
          response: { 200: webResult, ...PROBLEMS },
        },
      },
      async (request, reply) => {
        reply.header("Cache-Control", "no-store");
        const identity = await identities.fromHeaders(request.headers);
        return webOp(engine, request.body, identity);
      },
    );

    scope.post(
      "/api/compress",
      {
        bodyLimit,
        validatorCompiler: bodyInHandler,
        schema: {
          summary: "Compress raw int32 LE bytes (application/octet-stream → binary container) or a generated corpus",
          description: `Body: raw bytes as ${OCTET} (answer: the container as ${OCTET}, sizes in X-Original-Bytes / X-Compressed-Bytes, route in X-Codec-Path; options in the query: level, bare, type), or JSON { corpus, n, seed?, level?, bare? } with a named generator (${CORPORA.join(", ")}), or JSON { data, encoding?, level?, bare?, type? }; JSON answers carry the container as base64.`,
          tags: ["codec"],
          querystring: binaryQuery,
          body: binaryBodyDoc,
          response: {
            200: compressAnswer,
            ...PROBLEMS,
          },
        },
      },
      async (request, reply) => {
        const identity = await identities.fromHeaders(request.headers);
        const q = request.query;
        const body: unknown = request.body;
        reply.header("Cache-Control", "no-store");
        if (isBinary(body)) {
          const level = q.level ?? "max";
          const r = await engine.compress(
            new Uint8Array(body.buffer, body.byteOffset, body.byteLength),
            { level, bare: q.bare === "true" || q.bare === "1", ...(q.type ? { declared: q.type } : {}) },
            identity,
          );
          sizeHeaders(reply, {
            "X-Original-Bytes": r.original_bytes,
            "X-Compressed-Bytes": r.compressed_bytes,
            "X-Codec-Path": r.path,
            "X-Codec-Chamber": r.chamber,
            "X-Codec-Level": r.level,
            "X-Data-Class": r.data_class,
            "X-Dataset-Print": r.print?.dataset_print_id,
          });
          reply.type(OCTET).send(Buffer.from(r.container) as never);
          return reply;
        }
        const json = body as Record<string, unknown> | null;
        let bytes: Uint8Array;
        let meta: { corpus: string | null; n: number | null; seed: number | null };
        let level = q.level ?? "max";
        let bare = false;
        let declared: (typeof DECLARED_TYPES)[number] | undefined;
        if (json && typeof json === "object" && "corpus" in json) {
          const b = parseJson(corpusBody, json);
          level = b.level ?? level;
          bare = b.bare ?? false;
          bytes = engine.generated(b.corpus, b.n, b.seed ?? undefined, level, `compress at level ${level}`);
          meta = { corpus: b.corpus, n: b.n, seed: b.seed ?? 1 };
        } else {
          const b = parseJson(dataBody, json);
          level = b.level ?? level;
          bare = b.bare ?? false;
          declared = b.type ?? undefined;
          bytes = decodeData(b.data, b.encoding ?? "base64", engine.inputLimit(level), (n) =>
            engine.tooLarge(n, level),
          );
          meta = { corpus: null, n: null, seed: null };
        }
        const r = await engine.compress(bytes, { level, bare, ...(declared ? { declared } : {}) }, identity);
        const { container, feats: _f, ...rest } = r;
        return { ...meta, ...rest, data: toBase64(container), encoding: "base64" as const };
      },
    );

    scope.post(
      "/api/decompress",
      {
        bodyLimit,
        validatorCompiler: bodyInHandler,
        schema: {
          summary: "Decompress a container (application/octet-stream → raw bytes) or JSON { data: base64 }",
          description: `Counterpart of POST /api/compress: an ${OCTET} container answers the raw bytes as ${OCTET} (sizes in headers); JSON { data (base64), output_encoding? } answers JSON. Framed, chunked, bare and legacy gzip containers are accepted. Output limits: docs/engine-api.md.`,
          tags: ["codec"],
          querystring: binaryQuery,
          body: decompressBodyDoc,
          response: { 200: decompressAnswer, ...PROBLEMS },
        },
      },
      async (request, reply) => {
        const body: unknown = request.body;
        await identities.fromHeaders(request.headers);
        reply.header("Cache-Control", "no-store");
        if (isBinary(body)) {
          const r = await engine.decompress(new Uint8Array(body.buffer, body.byteOffset, body.byteLength));
          sizeHeaders(reply, {
            "X-Original-Bytes": r.original_bytes,
            "X-Compressed-Bytes": r.compressed_bytes,
            "X-Codec-Chambers": [...new Set(r.chambers)].join(","),
            "X-Codec-Level": r.level,
          });
          reply.type(OCTET).send(Buffer.from(r.bytes) as never);
          return reply;
        }
        const b = parseJson(decompressBody, body);
        const container = decodeBase64(b.data);
        const r = await engine.decompress(container);
        const { bytes, ...rest } = r;
        const out = b.output_encoding ?? request.query.output_encoding ?? "base64";
        return { ...rest, data: encodeOutput(bytes, out), encoding: out };
      },
    );

    scope.post(
      "/api/process",
      {
        bodyLimit,
        validatorCompiler: bodyInHandler,
        schema: {
          summary:
            "Compress then decompress: sizes, times, ratios and a round-trip verdict against gzip-9 and brotli-11",
          description: `Body as POST /api/compress (${OCTET} bytes, JSON { corpus, n, seed?, level? } or JSON { data, encoding? }). Answers JSON; ok is true only when every method decoded back byte for byte.`,
          tags: ["codec"],
          querystring: binaryQuery,
          body: binaryBodyDoc,
          response: {
            200: processAnswer,
            ...PROBLEMS,
          },
        },
      },
      async (request, reply) => {
        const identity = await identities.fromHeaders(request.headers);
        const body: unknown = request.body;
        let level = request.query.level ?? "max";
        let bytes: Uint8Array;
        let meta: { corpus: string | null; n: number | null; seed: number | null } = {
          corpus: null,
          n: null,
          seed: null,
        };
        if (isBinary(body)) {
          bytes = new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
        } else if (body && typeof body === "object" && "corpus" in body) {
          const b = parseJson(corpusBody, body);
          level = b.level ?? level;
          bytes = engine.generated(b.corpus, b.n, b.seed ?? undefined, "bench", "process");
          meta = { corpus: b.corpus, n: b.n, seed: b.seed ?? 1 };
        } else {
          const b = parseJson(dataBody, body);
          level = b.level ?? level;
          bytes = decodeData(b.data, b.encoding ?? "base64", engine.inputLimit("bench"), (n) =>
            engine.tooLarge(n, "bench", "process"),
          );
        }
        reply.header("Cache-Control", "no-store");
        const r = await engine.process(bytes, level, identity);
        return { ...r, ...meta };
      },
    );
  });
}
