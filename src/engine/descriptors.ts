import { CODEC_VERSION, describe, FORMAT_VERSION, LEVELS, type Level, ROUTE_PATHS } from "../codec/index.js";
import { VERSIONS } from "../versions.js";
import type { Admission } from "./admission.js";
import { BARREL_CHAMBERS, BARREL_REST } from "./barrel.js";

/**
 * What the engine says about itself: its ops, paths, levels and the GET descriptors of
 * /api/omni and /api/web-codec (chambers from the codec's describe(), limits from admission).
 */

export const OPS = ["compress", "decompress", "profile", "route", "bench", "barrel", "print", "prints"] as const;
export type Op = (typeof OPS)[number];
export const WEB_OPS = ["compress", "decompress", "bench"] as const;
/** the router's paths (src/codec/router ROUTE_PATHS): the chambers it may choose */
export const PATHS = ROUTE_PATHS;
export const DECLARED_TYPES = ["int32", "float32", "float64", "timestamps", "json", "csv", "text", "binary"] as const;

export const LEVEL_TRADEOFF: Record<Level, string> = {
  max: "level max: the strongest models (context mixing allowed); text and JSON decode about as slowly as they encode",
  balanced:
    "level balanced: typed transforms with fast backends; every chamber is designed to decode at 50 MB/s or more",
  fast: "level fast: one chamber tried; designed to compress at 20 MB/s or more",
};

type LimitsDescriptor = ReturnType<Admission["limitsDescriptor"]>;

export function engineDescriptor(limits: LimitsDescriptor) {
  const d = describe();
  return {
    name: "Lab Phi omni engine",
    engine: "omni" as const,
    version: VERSIONS.engine,
    codec_version: CODEC_VERSION,
    format_version: FORMAT_VERSION,
    endpoint: "POST /api/omni",
    ops: [...OPS],
    paths: [...PATHS],
    levels: [...LEVELS],
    default_level: "max" as const,
    chambers: d.chambers.map((c) => ({ name: c.name, id: c.id, summary: c.summary })),
    barrel: {
      compress: [...BARREL_CHAMBERS.compress],
      decompress: [...BARREL_CHAMBERS.decompress],
      rest: BARREL_REST,
    },
    encodings: ["utf8", "base64"],
    limits,
    identity: {
      join: "POST /api/join-work",
      headers: ["Authorization: Bearer <token>", "X-Identity-Token: <token>"],
      prints: "each compress by a caller with a valid identity token records a print; op prints lists your own",
    },
    rule: "A fire leaves a fingerprint, not data: a compress by an identified caller records only a dataset_print_id (a keyed hash of the bytes), sizes, class, path and ratio. Only outcomes and route labels are returned.",
    also: ["POST /api/web-codec", "POST /api/compress", "POST /api/decompress", "POST /api/process"],
    docs: "/openapi.yaml",
  };
}

export function webDescriptor(limits: LimitsDescriptor) {
  return {
    service: "Lab Phi web codec",
    version: VERSIONS.webCodec,
    engine: "omni" as const,
    endpoint: "POST /api/web-codec",
    also: "POST /api/omni",
    ops: [...WEB_OPS],
    methods: ["omni", "brotli-11", "gzip-9", "zrw-v5", "json_keys"],
    engines: {
      omni: "the omni engine: profile, route to a chamber, keep the smallest lossless container",
      classic: "the smaller of brotli-11 and gzip-9, returned as a standard stream any client can decode",
    },
    strategy:
      "Lossless always: the input is never rewritten. omni profiles the bytes, tries the chambers that suit the data class and keeps the smallest output, checks that it decodes back byte for byte, and never answers larger than the input plus 16 bytes; classic returns the smaller of brotli-11 and gzip-9. Losses are reported as they are: bench compares omni with gzip-9 and brotli-11 in the same run.",
    counsel: {
      heart: "what the data is: its class and shape, read from the bytes",
      brain: "why this chamber or method won, the sizes it beat and the level's decode-speed trade-off",
      cloak: "what is kept private: the bytes are not stored; at most a fingerprint print for an identified caller",
    },
    creator_counsel: "on by default; send creator_counsel: false to omit it",
    levels: [...LEVELS],
    limits,
    docs: "/openapi.yaml",
  };
}
