/** Version strings, from the spec's Versioning section. One place; every document reads them here. */
export const VERSIONS = {
  api: "1.5.0",
  discovery: "1.10.0",
  olympiad: "1.0.0",
  webCodec: "2.1.0-creator-cloak",
  engine: "1.4.0-barrel-cone",
  payments: "1.0.0",
  standings: "1.2.2",
  suitePricingModel: "freemium_suite_v4_undercut",
} as const;

/**
 * How a generated document (bench results, a report) names the engine it measured: the version
 * GET /api/omni reports, then the codec library's (src/codec/index.ts CODEC_VERSION), e.g.
 * `engine 1.4.0-barrel-cone (codec library 1.3.0)`. "codec 1.0.0" alone reads as another engine.
 */
export function versionText(codecVersion: string): string {
  return `engine ${VERSIONS.engine} (codec library ${codecVersion})`;
}
