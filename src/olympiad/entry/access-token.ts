import { badRequest } from "../../http/problem.js";

/** The tail of an access URL: `${baseUrl}/access/<token>` (tokens are base64url HMACs). */
const ACCESS_PATH = /\/access\/([A-Za-z0-9_-]{16,128})\/?$/;
export const ACCESS_TOKEN_PATTERN = /^[A-Za-z0-9_-]{16,128}$/;

/** Proof of a held order sent in the `enter` body. */
export interface EnterInput {
  access_token?: string | undefined;
  access_url?: string | undefined;
}

/** The access token of the body: `access_token`, or the tail of `access_url`; null when neither is sent. */
export function accessTokenOf(input: EnterInput): string | null {
  if (input.access_token !== undefined && input.access_url !== undefined) {
    throw badRequest("entry_proof_ambiguous", "Send access_token or access_url, not both.");
  }
  if (input.access_token !== undefined) {
    const t = input.access_token.trim();
    if (!ACCESS_TOKEN_PATTERN.test(t)) {
      throw badRequest("invalid_access_token", "access_token must be the last segment of an order's access URL.");
    }
    return t;
  }
  if (input.access_url !== undefined) {
    let path: string;
    try {
      path = new URL(input.access_url.trim()).pathname;
    } catch {
      throw badRequest("invalid_access_url", "access_url must be an order's access URL: <base>/access/<token>.");
    }
    const m = ACCESS_PATH.exec(path);
    if (!m) throw badRequest("invalid_access_url", "access_url must be an order's access URL: <base>/access/<token>.");
    return m[1] as string;
  }
  return null;
}
