/** profile(bytes) and route(bytes): detection and routing only (no chamber is loaded). */
import type { Level } from "../chambers/types.js";
import { type Route, routeProfile } from "../router/index.js";
import { type DeclaredType, type Profile, profileBytes } from "../router/profile.js";
import { checkLevel } from "./shared.js";

export function profile(bytes: Uint8Array, declaredType?: DeclaredType): Profile {
  return profileBytes(bytes, declaredType ?? null);
}

export function route(
  bytes: Uint8Array,
  options: { level?: Level; declaredType?: DeclaredType } = {},
): Route & {
  data_class: string;
} {
  const p = profile(bytes, options.declaredType);
  return { ...routeProfile(p, checkLevel(options.level)), data_class: p.data_class };
}
