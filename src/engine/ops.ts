import { CHAMBER_NAMES, type ChamberName, type DeclaredType, type Feats, LEVELS, type Level } from "../codec/index.js";
import { Problem } from "../http/problem.js";
import type { Identity } from "../identity/service.js";
import { benchCounsel, classicCounsel, compressCounsel, decompressCounsel } from "./counsel.js";
import { decodeData, type Encoding, encodeOutput, toBase64 } from "./data.js";
import type { EngineService, Op } from "./service.js";

/**
 * Request → result for POST /api/omni and POST /api/web-codec (the rules; routes only translate
 * HTTP). Every op that takes data reads it as utf8 text (default) or base64, within the limits.
 */

/** The fields every bench answer shares (omni and web codec). */
function benchFields(r: Awaited<ReturnType<EngineService["bench"]>>) {
  return {
    verdict: r.verdict,
    roundtrip: r.ok,
    level: r.level,
    original_bytes: r.original_bytes,
    data_class: r.data_class,
    chamber: r.chamber,
    path: `omni/${r.chamber}`,
    methods: r.methods,
    omni_vs_brotli: r.omni_vs_brotli,
  };
}

export interface OmniRequest {
  op: Op;
  data?: string | null | undefined;
  encoding?: Encoding | null | undefined;
  output_encoding?: Encoding | null | undefined;
  level?: Level | null | undefined;
  chamber?: ChamberName | null | undefined;
  bare?: boolean | null | undefined;
  type?: DeclaredType | null | undefined;
  limit?: number | null | undefined;
  offset?: number | null | undefined;
}

export interface WebRequest {
  op: "compress" | "decompress" | "bench";
  data?: string | null | undefined;
  encoding?: Encoding | null | undefined;
  output_encoding?: Encoding | null | undefined;
  engine?: "omni" | "classic" | null | undefined;
  creator_counsel?: boolean | null | undefined;
  level?: Level | null | undefined;
  chamber?: ChamberName | null | undefined;
  /** compress: also measure the gzip-9 and brotli-11 sizes of the same input (answer field `sizes`) */
  peers?: boolean | null | undefined;
}

function requireData(data: string | null | undefined, op: string): string {
  if (typeof data !== "string") {
    throw new Problem(400, "data_required", `op ${op} needs \`data\` (utf8 text, or base64 with encoding: "base64").`);
  }
  return data;
}

/** Input bytes within `limit`; 413 (pointing to the CLI and suite jobs) when larger. */
function input(
  engine: EngineService,
  data: string | null | undefined,
  encoding: Encoding,
  op: string,
  level: Level | "bench",
): Uint8Array {
  const text = requireData(data, op);
  return decodeData(text, encoding, engine.inputLimit(level), (bytes) =>
    engine.tooLarge(bytes, level, level === "bench" ? op : `${op} at level ${level}`),
  );
}

/** A container always travels as base64. */
function containerOf(engine: EngineService, data: string | null | undefined, encoding: Encoding | null | undefined) {
  const text = requireData(data, "decompress");
  if (encoding === "utf8") {
    throw new Problem(400, "container_is_base64", 'A container is binary: send it as base64 (encoding: "base64").');
  }
  const limit = engine.limits.bodyLimitBytes;
  return decodeData(text, "base64", limit, (bytes) => {
    throw new Problem(413, "codec_input_too_large", `The container is ${bytes} bytes; the limit is ${limit}.`, {
      bytes,
      limit_bytes: limit,
    });
  });
}

export async function omniOp(engine: EngineService, req: OmniRequest, identity: Identity | null) {
  const level: Level = req.level ?? "max";
  const encoding: Encoding = req.encoding ?? "utf8";
  const declared = req.type ?? undefined;
  switch (req.op) {
    case "profile":
    case "route": {
      const bytes = input(engine, req.data, encoding, req.op, "fast");
      const r = await engine.routeOf(bytes, level, declared);
      return {
        op: req.op,
        path: r.path,
        data_class: r.data_class,
        feats: r.feats as Feats & Record<string, unknown>,
        label: r.label,
        reason: r.reason,
        chamber: r.chamber,
        candidates: r.candidates,
        level,
      };
    }
    case "compress": {
      const bytes = input(engine, req.data, encoding, "compress", level);
      const r = await engine.compress(
        bytes,
        { level, chamber: req.chamber ?? undefined, bare: req.bare ?? false, ...(declared ? { declared } : {}) },
        identity,
      );
      const { container, feats: _feats, ...rest } = r;
      return {
        op: "compress" as const,
        ok: true as const,
        ...rest,
        data: toBase64(container),
        encoding: "base64" as const,
      };
    }
    case "decompress": {
      const container = containerOf(engine, req.data, req.encoding);
      const r = await engine.decompress(container);
      const { bytes, ...rest } = r;
      const out = req.output_encoding ?? "base64";
      return { op: "decompress" as const, ok: true as const, ...rest, data: encodeOutput(bytes, out), encoding: out };
    }
    case "bench": {
      const bytes = input(engine, req.data, encoding, "bench", "bench");
      const r = await engine.bench(bytes, level);
      return {
        op: "bench" as const,
        ok: r.ok,
        ...benchFields(r),
      };
    }
    case "barrel":
      return { op: "barrel" as const, barrel: await engine.barrel() };
    case "print": {
      const bytes = input(engine, req.data, encoding, "print", "fast");
      return { op: "print" as const, print: engine.fingerprint(bytes, declared), stored: false as const };
    }
    case "prints": {
      const page = { limit: req.limit ?? 20, offset: req.offset ?? 0 };
      return { op: "prints" as const, ...(await engine.prints(identity, page)) };
    }
  }
}

export async function webOp(engine: EngineService, req: WebRequest, identity: Identity | null) {
  const level: Level = req.level ?? "max";
  const encoding: Encoding = req.encoding ?? "utf8";
  const kind = req.engine ?? "omni";
  const counsel = req.creator_counsel !== false;
  switch (req.op) {
    case "compress": {
      if (kind === "classic") {
        const bytes = input(engine, req.data, encoding, "compress", "max");
        const r = await engine.classicCompress(bytes, identity);
        return {
          op: "compress" as const,
          ok: true as const,
          engine: "classic" as const,
          method: r.method,
          path: r.path,
          chamber: null,
          level: null,
          data_class: r.profile.data_class,
          original_bytes: r.original_bytes,
          compressed_bytes: r.compressed_bytes,
          ratio: r.ratio,
          sizes: r.sizes,
          verified: true as const,
          data: toBase64(r.container),
          encoding: "base64" as const,
          print: r.print,
          ...(counsel
            ? { counsel: classicCounsel({ ...r, data_class: r.profile.data_class, feats: r.profile.feats }) }
            : {}),
        };
      }
      const bytes = input(engine, req.data, encoding, "compress", level);
      // peers cost like bench: refuse an input over bench's limit before compressing anything
      if (req.peers) engine.checkInput(bytes.length, "bench", "compress with peers");
      const r = await engine.compress(bytes, { level, chamber: req.chamber ?? undefined }, identity);
      const sizes = req.peers ? await engine.peerSizes(bytes) : undefined;
      return {
        op: "compress" as const,
        ok: true as const,
        engine: "omni" as const,
        method: "omni",
        path: r.path,
        chamber: r.chamber,
        level: r.level,
        data_class: r.data_class,
        original_bytes: r.original_bytes,
        compressed_bytes: r.compressed_bytes,
        ratio: r.ratio,
        ...(sizes ? { sizes } : {}),
        verified: true as const,
        data: toBase64(r.container),
        encoding: "base64" as const,
        print: r.print,
        ...(counsel ? { counsel: compressCounsel(r) } : {}),
      };
    }
    case "decompress": {
      const container = containerOf(engine, req.data, req.encoding);
      const out = req.output_encoding ?? "base64";
      if (kind === "classic") {
        const r = await engine.classicDecompress(container);
        return {
          op: "decompress" as const,
          ok: true as const,
          engine: "classic" as const,
          method: r.method,
          original_bytes: r.bytes.length,
          compressed_bytes: container.length,
          data: encodeOutput(r.bytes, out),
          encoding: out,
          ...(counsel
            ? {
                counsel: decompressCounsel({
                  original_bytes: r.bytes.length,
                  compressed_bytes: container.length,
                  chambers: [],
                  level: "",
                  bare: false,
                  legacy: false,
                  checksum_verified: r.method === "gzip-9",
                  method: r.method,
                }),
              }
            : {}),
        };
      }
      const r = await engine.decompress(container);
      return {
        op: "decompress" as const,
        ok: true as const,
        engine: "omni" as const,
        method: "omni",
        original_bytes: r.original_bytes,
        compressed_bytes: r.compressed_bytes,
        data: encodeOutput(r.bytes, out),
        encoding: out,
        ...(counsel ? { counsel: decompressCounsel(r) } : {}),
      };
    }
    case "bench": {
      const bytes = input(engine, req.data, encoding, "bench", "bench");
      const r = await engine.bench(bytes, level);
      const p = engine.profileOf(bytes);
      return {
        op: "bench" as const,
        ok: r.ok,
        engine: kind,
        ...benchFields(r),
        ...(counsel ? { counsel: benchCounsel({ ...r, feats: p.feats }) } : {}),
      };
    }
  }
}

export const LEVEL_VALUES = LEVELS as readonly [Level, ...Level[]];
export const CHAMBER_VALUES = CHAMBER_NAMES as readonly [ChamberName, ...ChamberName[]];
