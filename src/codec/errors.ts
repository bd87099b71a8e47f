/**
 * Typed codec errors. Every failure of the codec library is a CodecError with a
 * stable `code`; callers (HTTP layer, CLI) map codes to their own error shapes.
 */
export type CodecErrorCode =
  | "codec_truncated" // the container ends before a field it declares
  | "codec_bad_magic" // framed container without the magic (and not a legacy gzip stream)
  | "codec_bad_version" // unknown container version
  | "codec_bad_flags" // reserved flag bits set or unknown level
  | "codec_unknown_chamber" // chamber id not known to this decoder
  | "codec_bad_params" // chamber parameters malformed
  | "codec_corrupt" // payload inconsistent with its declaration
  | "codec_checksum_mismatch" // decoded bytes do not match the stored checksum
  | "codec_too_large" // declared size above maxOutputBytes
  | "codec_ratio_exceeded" // declared size above the expansion-ratio cap
  | "codec_trailing_bytes" // bytes after the end of the container
  | "codec_bad_input" // compress was called with input a chamber cannot take
  | "codec_bad_option"; // an option is out of range

export class CodecError extends Error {
  constructor(
    readonly code: CodecErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "CodecError";
  }
}

export function fail(code: CodecErrorCode, message: string): never {
  throw new CodecError(code, message);
}
