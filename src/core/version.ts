import { readFileSync } from 'node:fs';

let cached: string | undefined;

/** Switchboard's own version, read once from package.json (works from src/ under tests and from dist/). */
export function switchboardVersion(): string {
  if (cached !== undefined) return cached;
  const pkgUrl = new URL('../../package.json', import.meta.url);
  const pkg = JSON.parse(readFileSync(pkgUrl, 'utf8')) as { version?: unknown };
  cached = typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  return cached;
}
