import { z } from "zod";
import { problemSchema } from "../http/problem.js";
import { DECLARED_TYPES, OPS, WEB_OPS } from "./descriptors.js";
import { CORPORA } from "./generators.js";
import { CHAMBER_VALUES, LEVEL_VALUES } from "./ops.js";

/**
 * Request and answer schemas of the engine's routes (routes.ts): the single source of validation
 * and of their part of /openapi.yaml.
 */

export const encoding = z.enum(["utf8", "base64"]);
export const levelSchema = z.enum(LEVEL_VALUES);
export const chamberSchema = z.enum(CHAMBER_VALUES);
export const declaredSchema = z.enum(DECLARED_TYPES);

export const featsSchema = z
  .looseObject({
    bytes: z.number(),
    h0: z.number().describe("order-0 entropy of a sample, bits per byte"),
    utf8: z.boolean(),
  })
  .describe("profile features (see docs/engine-api.md)");

export const printSchema = z.object({
  dataset_print_id: z.string().describe("dp_… keyed hash (HMAC-SHA256) of the bytes"),
  bytes: z.number().int(),
  data_class: z.string(),
  path: z.string(),
  ratio: z.number().describe("original bytes / compressed bytes"),
  label: z.string().describe("route label of the compression, e.g. omni/text"),
  level: z.string(),
  at: z.string(),
});
export const fingerprintSchema = z.object({
  dataset_print_id: z.string(),
  bytes: z.number().int(),
  data_class: z.string(),
  path: z.string(),
});
export const counselSchema = z
  .object({ heart: z.string(), brain: z.string(), cloak: z.string() })
  .describe("plain-language notes derived from this result; omitted when creator_counsel is false");
export const methodSchema = z.object({
  method: z.string(),
  bytes: z.number().int(),
  ratio: z.number(),
  compress_ms: z.number(),
  decompress_ms: z.number(),
  roundtrip: z.boolean(),
});
export const barrelStateSchema = z.object({
  barrel: z.string(),
  chambers: z.array(z.string()),
  rest: z.string(),
  chamber: z.string().describe("current chamber: the one that fired last"),
  fires: z.number().int(),
  rotates: z.number().int().describe("fires whose chamber differed from the current one"),
  counts: z.record(z.string(), z.number().int()),
});

export const compressFields = {
  path: z.string().describe("route label, e.g. omni/zrw"),
  chamber: z.string(),
  data_class: z.string(),
  level: levelSchema,
  bare: z.boolean(),
  original_bytes: z.number().int(),
  compressed_bytes: z.number().int(),
  ratio: z.number(),
  reason: z.string(),
  verified: z.literal(true).describe("the container was decoded back byte for byte before answering"),
  compress_ms: z.number(),
  data: z.string().describe("the container, base64"),
  encoding: z.literal("base64"),
  print: printSchema.nullable().describe("the print recorded for the identified caller, else null"),
};

export const decompressFields = {
  original_bytes: z.number().int(),
  compressed_bytes: z.number().int(),
  level: levelSchema,
  bare: z.boolean(),
  legacy: z.boolean(),
  checksum_verified: z.boolean(),
  chambers: z.array(z.string()),
  decompress_ms: z.number(),
  data: z.string(),
  encoding,
};

export const benchFields = {
  ok: z.boolean().describe("true only when every method decoded back byte for byte"),
  verdict: z.string(),
  roundtrip: z.boolean(),
  level: levelSchema,
  original_bytes: z.number().int(),
  data_class: z.string(),
  chamber: z.string(),
  path: z.string(),
  methods: z.array(methodSchema),
  omni_vs_brotli: z.number().describe("omni bytes / brotli-11 bytes"),
};

export const omniResult = z.discriminatedUnion("op", [
  z.object({
    op: z.enum(["profile", "route"]),
    path: z.string(),
    data_class: z.string(),
    feats: featsSchema,
    label: z.string(),
    reason: z.string(),
    chamber: z.string(),
    candidates: z.array(z.string()),
    level: levelSchema,
  }),
  z.object({
    op: z.literal("compress"),
    ok: z.literal(true),
    engine: z.literal("omni"),
    version: z.string(),
    ...compressFields,
  }),
  z.object({ op: z.literal("decompress"), ok: z.literal(true), ...decompressFields }),
  z.object({ op: z.literal("bench"), ...benchFields }),
  z.object({
    op: z.literal("barrel"),
    barrel: z.object({ compress: barrelStateSchema, decompress: barrelStateSchema }),
  }),
  z.object({ op: z.literal("print"), print: fingerprintSchema, stored: z.literal(false) }),
  z.object({
    op: z.literal("prints"),
    identity_id: z.string(),
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
    next_offset: z.number().int().nullable(),
    prints: z.array(printSchema),
  }),
]);

export const webResult = z.discriminatedUnion("op", [
  z.object({
    op: z.literal("compress"),
    ok: z.literal(true),
    engine: z.enum(["omni", "classic"]),
    method: z.string().describe("omni, brotli-11 or gzip-9"),
    path: z.string(),
    chamber: z.string().nullable(),
    level: levelSchema.nullable(),
    data_class: z.string(),
    original_bytes: z.number().int(),
    compressed_bytes: z.number().int(),
    ratio: z.number(),
    sizes: z
      .object({ "brotli-11": z.number().int(), "gzip-9": z.number().int() })
      .optional()
      .describe(
        "measured sizes of the same input with brotli-11 and gzip-9 (node:zlib): always with engine classic; with engine omni when the request sets peers: true",
      ),
    verified: z.literal(true),
    data: z.string(),
    encoding: z.literal("base64"),
    print: printSchema.nullable(),
    counsel: counselSchema.optional(),
  }),
  z.object({
    op: z.literal("decompress"),
    ok: z.literal(true),
    engine: z.enum(["omni", "classic"]),
    method: z.string(),
    original_bytes: z.number().int(),
    compressed_bytes: z.number().int(),
    data: z.string(),
    encoding,
    counsel: counselSchema.optional(),
  }),
  z.object({
    op: z.literal("bench"),
    engine: z.enum(["omni", "classic"]),
    ...benchFields,
    counsel: counselSchema.optional(),
  }),
]);

export const corpusFields = {
  corpus: z.enum(CORPORA).describe("named deterministic generator (docs/engine-api.md)"),
  n: z
    .number()
    .int()
    .min(0)
    .max(1 << 26)
    .describe("values (int32 corpora) or bytes (text)"),
  seed: z.number().int().min(0).max(0xffffffff).nullish().describe("PRNG seed, default 1"),
};
export const corpusBody = z.object({
  ...corpusFields,
  level: levelSchema.nullish(),
  bare: z.boolean().nullish(),
});
export const dataBody = z.object({
  data: z.string(),
  encoding: encoding.nullish().describe("default base64"),
  level: levelSchema.nullish(),
  bare: z.boolean().nullish(),
  type: declaredSchema.nullish(),
});
export const decompressBody = z.object({
  data: z.string().describe("the container, base64"),
  encoding: z.literal("base64").nullish(),
  output_encoding: encoding.nullish().describe("base64 (default) or utf8"),
});
export const binaryQuery = z.object({
  level: levelSchema.optional(),
  bare: z.enum(["true", "false", "1", "0"]).optional(),
  type: declaredSchema.optional(),
  output_encoding: encoding.optional(),
});

export const binaryBodyDoc = z
  .union([corpusBody, dataBody])
  .describe(
    "JSON form; or send the raw bytes as application/octet-stream (options in the query string) for a binary answer",
  );

export const PROBLEMS = {
  400: problemSchema,
  401: problemSchema,
  413: problemSchema,
  415: problemSchema,
  422: problemSchema,
  503: problemSchema,
};

/** POST /api/omni */
export const omniBody = z.object({
  op: z.enum(OPS),
  data: z.string().nullish(),
  encoding: encoding.nullish(),
  output_encoding: encoding.nullish().describe("decompress: base64 (default) or utf8"),
  level: levelSchema.nullish().describe("default max"),
  chamber: chamberSchema.nullish().describe("force a chamber (compress)"),
  bare: z.boolean().nullish().describe("compress: bare stream without magic and checksum"),
  type: declaredSchema.nullish().describe("declare the data type instead of detecting it"),
  limit: z.number().int().min(1).max(100).nullish().describe("prints: page size (default 20)"),
  offset: z.number().int().min(0).max(1_000_000_000).nullish().describe("prints: rows to skip"),
});

/** POST /api/web-codec */
export const webCodecBody = z.object({
  op: z.enum(WEB_OPS),
  data: z.string().nullish(),
  encoding: encoding.nullish(),
  output_encoding: encoding.nullish(),
  engine: z.enum(["omni", "classic"]).nullish().describe("default omni"),
  creator_counsel: z.boolean().nullish(),
  level: levelSchema.nullish(),
  chamber: chamberSchema.nullish(),
  peers: z
    .boolean()
    .nullish()
    .describe(
      "compress: also measure the gzip-9 and brotli-11 sizes of the same input (answer field sizes); the input then takes bench's limit",
    ),
});

/** GET /api/omni */
export const omniDescriptorAnswer = z.looseObject({
  version: z.string(),
  endpoint: z.string(),
  ops: z.array(z.string()),
});
/** GET /api/web-codec */
export const webDescriptorAnswer = z.looseObject({ version: z.string(), engine: z.string(), endpoint: z.string() });

/** POST /api/compress (JSON answer) */
export const compressAnswer = z.object({
  corpus: z.string().nullable(),
  n: z.number().int().nullable(),
  seed: z.number().int().nullable(),
  engine: z.literal("omni"),
  version: z.string(),
  ...compressFields,
});

/** POST /api/decompress (JSON answer) */
export const decompressAnswer = z.object({ ...decompressFields });
export const decompressBodyDoc = decompressBody.describe(
  "JSON form; or send the container as application/octet-stream for the raw bytes as application/octet-stream",
);

/** POST /api/process */
export const processAnswer = z.object({
  ok: z.boolean(),
  verdict: z.string(),
  roundtrip: z.boolean(),
  level: levelSchema,
  corpus: z.string().nullable(),
  n: z.number().int().nullable(),
  seed: z.number().int().nullable(),
  data_class: z.string(),
  path: z.string(),
  chamber: z.string(),
  original_bytes: z.number().int(),
  compressed_bytes: z.number().int(),
  ratio: z.number(),
  compress_ms: z.number(),
  decompress_ms: z.number(),
  methods: z.array(methodSchema),
  omni_vs_brotli: z.number(),
  omni_vs_gzip: z.number(),
  winner: z.string(),
  peers: z.object({ "gzip-9": methodSchema.nullable(), "brotli-11": methodSchema.nullable() }),
  print: printSchema.nullable(),
});
