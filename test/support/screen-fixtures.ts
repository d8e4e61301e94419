/** Recorded screens for unit tests: test/fixtures, read as the rows a pane would give. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const FIXTURES_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

/** A recorded screen's rows, with its coloured twin (`x.ansi.txt` beside `x.txt`) where there is one. */
export function loadScreen(file: string): { lines: string[]; ansiLines?: string[] } {
  const rows = (f: string): string[] => readFileSync(f, 'utf8').replace(/\n$/, '').split('\n');
  const ansi = file.replace(/\.txt$/, '.ansi.txt');
  return { lines: rows(file), ...(existsSync(ansi) ? { ansiLines: rows(ansi) } : {}) };
}
