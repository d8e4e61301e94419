/** The built dashboard (dist/web) as static files: safe paths only, the SPA's index for the rest. */
import { createReadStream, existsSync, statSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

/** dist/web of this package, found from this module whether it runs from src/ (tsx) or dist/. */
export function defaultWebRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return path.join(dir, 'dist', 'web');
    const parent = path.dirname(dir);
    if (parent === dir) return path.join(process.cwd(), 'dist', 'web');
    dir = parent;
  }
}

/** The file under `root` that `urlPath` names, or null when it would leave `root` or is not a file. */
function resolveStatic(root: string, urlPath: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const file = path.resolve(root, `.${path.posix.normalize(`/${decoded}`)}`);
  if (file !== root && !file.startsWith(root + path.sep)) return null;
  try {
    return statSync(file).isFile() ? file : null;
  } catch {
    return null;
  }
}

/** Serves `urlPath` from `root`; paths that are not files get index.html (client-side routes). */
export function serveStatic(root: string, urlPath: string, res: ServerResponse, head: boolean): void {
  const file = resolveStatic(root, urlPath) ?? resolveStatic(root, '/index.html');
  if (!file) {
    res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('the dashboard is not built: run `npm run build`\n');
    return;
  }
  const hashed = file.includes(`${path.sep}assets${path.sep}`);
  res.writeHead(200, {
    'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream',
    // Vite names assets by content hash: they never change. index.html always may.
    'cache-control': hashed ? 'public, max-age=31536000, immutable' : 'no-cache',
  });
  if (head) {
    res.end();
    return;
  }
  createReadStream(file).on('error', () => res.destroy()).pipe(res);
}
