/** Shape of test/codec/frozen/manifest.json and the stream helpers shared by the script and the test. */
import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import type { ChamberName, Level } from "../../../src/codec/chambers/types.js";
import { type CodecErrorCode, compressStream, decompressStream } from "../../../src/codec/index.js";
import type { GeneratorSpec } from "./inputs.js";

export const MANIFEST_PATH = "test/codec/frozen/manifest.json";

export type FrozenEntry =
  | {
      kind: "container";
      form: "framed" | "chunked" | "bare";
      chamber: ChamberName | "chunked";
      level: Level;
      generator: GeneratorSpec;
      decoded_sha256: string;
      decoded_length: number;
    }
  | {
      kind: "stream";
      form: "stream";
      chamber: "stream";
      level: Level;
      chunk_size: number;
      generator: GeneratorSpec;
      decoded_sha256: string;
      decoded_length: number;
    }
  | { kind: "malformed"; error: CodecErrorCode; derived_from: string; mutation: string }
  | { kind: "malformed-stream"; error: CodecErrorCode; derived_from: string; mutation: string };

export interface Manifest {
  description: string;
  releases: Record<
    string,
    {
      codec_version: string;
      levels: Level[];
      files: Record<string, FrozenEntry & { container_sha256: string; container_length: number }>;
    }
  >;
}

export async function encodeStream(
  input: Uint8Array,
  options: { level: Level; chunkSize: number },
): Promise<Uint8Array> {
  return new Uint8Array(await buffer(Readable.from([Buffer.from(input)]).pipe(compressStream(options))));
}

export async function decodeStream(stream: Uint8Array): Promise<Uint8Array> {
  const out = decompressStream();
  const done = buffer(out);
  Readable.from([Buffer.from(stream)]).pipe(out);
  return new Uint8Array(await done);
}
