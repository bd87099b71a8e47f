/**
 * At `fast` a typed array runs its typed chamber alone (the router's one candidate there). Where
 * the profile's guess is wrong, plain zstd -3 is smaller: on the benchmark's corpus calgary/pic and
 * canterbury/ptt5 (bitmaps profiled as int32: zrw 93,975 B, zstd -3 54,450), calgary/geo (zrw
 * 79,862, zstd -3 69,223), elf_POI-lat.f64 (float 690,699, zstd -3 615,357) and alp_gov26_tw.f64
 * (delta 16,601, zstd -3 7,175). A zstd -3 of a 48 KiB sample (three 16 KiB slices) tells those
 * apart from the files where the typed chamber wins for about 0.2 CPU-ms: only when the sample's
 * ratio is under FAST_CHECK_RATIO × the typed chamber's does the general chamber (zstd -3 of the
 * bytes as they are) run in full, and the smaller is kept.
 */
import { zstdCompress } from "../backends.js";
import { FAST_ZSTD } from "../chambers/general/index.js";
import { CHAMBERS } from "../chambers/registry.js";
import type { Encoded } from "../chambers/types.js";
import { threeSlices } from "../chambers/util.js";

/**
 * zstd -3 runs in full when its ratio on the sample is under this × the typed chamber's ratio. On
 * the corpus the files where zstd -3 is smaller in full were at 0.03-1.03 on the sample; the
 * closest file where the typed chamber won was at 1.12 (elf_City-temp.f32: 1.42 in full).
 * alp_nyc29_tw.f64 (1.42 on the sample, 0.98 in full) is missed.
 */
export const FAST_CHECK_RATIO = 1.1;

/** slice of the sample */
const SLICE = 16 * 1024;

/** three SLICE-byte slices at 1/8, 1/2 and 7/8 of the input; the input itself when it is not longer */
export const fastSample = (b: Uint8Array): Uint8Array => threeSlices(b, SLICE);

/**
 * The general chamber's encoding of `input` at fast (zstd -3 of the bytes, params [2, 0]) when the
 * sample says it may beat `typedSize` bytes; null when the sample rules it out or zstd is missing.
 */
export async function fastPlainAlternative(input: Uint8Array, typedSize: number): Promise<Encoded | null> {
  const sample = fastSample(input);
  const zs = await zstdCompress(sample, FAST_ZSTD).catch(() => null);
  if (!zs || zs.length / sample.length >= FAST_CHECK_RATIO * (typedSize / input.length)) return null;
  // the sample is the input: its zstd -3 is the general chamber's payload
  if (sample === input) return { params: Uint8Array.of(2, 0), payload: zs };
  return CHAMBERS.get("general")!.encode(input, { level: "fast", dataClass: "binary" });
}
