import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { CHAMBER_VALUES, LEVEL_VALUES, omniOp } from "../../engine/ops.js";
import { DECLARED_TYPES } from "../../engine/service.js";
import type { McpDeps } from "../deps.js";
import { outputOf, run } from "../results.js";

/** compress, decompress, profile, bench: the codec engine (the same calls as POST /api/omni). */

const encoding = z.enum(["utf8", "base64"]);
const level = z.enum(LEVEL_VALUES).optional().describe("fast, balanced or max (default max)");
const data = z.string().describe('the input: utf8 text, or base64 with encoding: "base64"');

const compressOut = z.looseObject({
  op: z.literal("compress"),
  ok: z.literal(true),
  path: z.string(),
  chamber: z.string(),
  original_bytes: z.number().int(),
  compressed_bytes: z.number().int(),
  ratio: z.number(),
  data: z.string().describe("the container, base64"),
  encoding: z.literal("base64"),
});
const decompressOut = z.looseObject({
  op: z.literal("decompress"),
  ok: z.literal(true),
  original_bytes: z.number().int(),
  compressed_bytes: z.number().int(),
  data: z.string(),
  encoding,
});
const profileOut = z.looseObject({
  op: z.literal("profile"),
  path: z.string(),
  data_class: z.string(),
  chamber: z.string(),
  reason: z.string(),
});
const benchOut = z.looseObject({
  op: z.literal("bench"),
  ok: z.boolean(),
  data_class: z.string(),
  chamber: z.string(),
  methods: z.array(z.looseObject({ method: z.string(), bytes: z.number().int() })),
});

export function registerCodecTools(server: McpServer, deps: McpDeps): void {
  const { engine, onError } = deps;
  server.registerTool(
    "compress",
    {
      title: "Compress (omni codec)",
      description:
        "Lossless compression with the omni codec; the container (base64) decodes back to the input exactly (checked before answering). Free, within the HTTP input limits; larger inputs: a suite job (quote_suite).",
      inputSchema: z.object({
        data,
        encoding: encoding.optional(),
        level,
        chamber: z.enum(CHAMBER_VALUES).optional().describe("force one chamber (default: the router picks)"),
        bare: z.boolean().optional().describe("omit the frame header (smallest output; decode needs the same build)"),
        type: z.enum(DECLARED_TYPES).optional().describe("declared data type (a hint for the router)"),
      }),
      outputSchema: outputOf(compressOut),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) => run(() => omniOp(engine, { op: "compress", ...args }, null), onError),
  );
  server.registerTool(
    "decompress",
    {
      title: "Decompress a container",
      description:
        "Restores the bytes of an omni container (framed, chunked, bare or legacy gzip), base64 in; output as base64 (default) or utf8.",
      inputSchema: z.object({
        data: z.string().describe("the container, base64"),
        output_encoding: encoding.optional().describe("base64 (default) or utf8 (422 when the bytes are not UTF-8)"),
      }),
      outputSchema: outputOf(decompressOut),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) => run(() => omniOp(engine, { op: "decompress", encoding: "base64", ...args }, null), onError),
  );
  server.registerTool(
    "profile",
    {
      title: "Profile data",
      description: "The data class, codec path and chamber the router would pick for this input, with its features.",
      inputSchema: z.object({ data, encoding: encoding.optional(), level, type: z.enum(DECLARED_TYPES).optional() }),
      outputSchema: outputOf(profileOut),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) => run(() => omniOp(engine, { op: "profile", ...args }, null), onError),
  );
  server.registerTool(
    "bench",
    {
      title: "Benchmark against gzip-9 and brotli-11",
      description: "Compresses with omni, gzip-9 and brotli-11, round-trips each, and reports sizes and timings.",
      inputSchema: z.object({ data, encoding: encoding.optional(), level }),
      outputSchema: outputOf(benchOut),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) => run(() => omniOp(engine, { op: "bench", ...args }, null), onError),
  );
}
