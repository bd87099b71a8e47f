export const PACKAGE_ROOT: string;
export const WEB_SOURCE: string;
export function sourceHash(): string;
export function outputRoot(): string;
export function buildWebAssets(options?: { root?: string; hash?: string; minify?: boolean }): Promise<string>;
export function ensureWebAssets(): Promise<string>;
