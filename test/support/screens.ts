import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SwitchboardClient } from '../../src/index.js';

export const SCREENS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'screens');

/**
 * Returns the screen a test passes through and saves it as a fixture (plain and with colours) per
 * CLI and version, so detectors can be unit-tested without the CLIs and a new pinned version gets
 * its own recordings. Temporary paths and ports are replaced by fixed ones, so a run of the same
 * version rewrites the files unchanged and `git diff` shows any change in how a CLI renders.
 */
export async function recordScreen(
  client: SwitchboardClient,
  paneId: string,
  where: { agent: string; version: string | null; stage: string; replace: [string, string][] },
): Promise<string[]> {
  const plain = await client.getScreen(paneId);
  const dir = path.join(SCREENS_DIR, `${where.agent}-${where.version ?? 'unknown'}`);
  mkdirSync(dir, { recursive: true });
  const normalize = (text: string): string => {
    let out = text;
    for (const [from, to] of where.replace) out = out.split(from).join(to);
    return out.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT');
  };
  const ansi = await client.getScreen(paneId, { ansi: true });
  writeFileSync(path.join(dir, `${where.stage}.txt`), `${normalize(plain.text)}\n`);
  writeFileSync(path.join(dir, `${where.stage}.ansi.txt`), `${normalize(ansi.text)}\n`);
  return plain.lines;
}
