import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SwitchboardClient } from '../../src/index.js';

export const SCREENS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'screens');

/**
 * What changes between two runs of the same CLI version without meaning anything: clock times,
 * elapsed durations, Claude Code's randomly chosen spinner verb ("Brewed for 2s", "Creating…"),
 * OpenCode's rotating input placeholder and progress bar, Claude Code's blinking tool dot, and the padding that shifts when their lengths do. Two
 * screens equal under this mask are the same recording.
 */
export function maskVolatile(screen: string): string {
  return screen
    .replace(/\b\d{1,2}:\d{2}(:\d{2})?\b/g, 'TIME')
    .replace(/\b\d+(\.\d+)?(ms|s|m|h)\b/g, 'DURATION')
    .replace(/^(\s*[^\s\w]\s)\p{Lu}\p{Ll}+(?=…| for DURATION)/gmu, '$1VERB')
    .replace(/(Ask anything… )"[^"]*"/g, '$1"PLACEHOLDER"')
    .replace(/[■⬝]{4,}/g, 'PROGRESS')
    // Claude Code blinks the dot before a running tool's progress line.
    .replace(/^[● ] (?=.*\(ctrl\+o to expand\)$)/gm, 'BLINK ')
    // Codex notes "Worked for 1s • 07:11" under a turn only when the turn took long enough.
    .replace(/^ +Worked for DURATION • TIME$/gm, '')
    .replace(/[ \t]+$/gm, '');
}

/** A mkdtemp name with its random suffix masked at the same length, so box borders stay put. */
function maskTempName(name: string): string {
  return name.replace(/[A-Za-z0-9]{6}$/, 'XXXXXX');
}

/**
 * Returns the screen a test passes through and saves it as a fixture (plain and with colours) per
 * CLI and version, so detectors can be unit-tested without the CLIs and a new pinned version gets
 * its own recordings. Temporary paths and ports are replaced by fixed ones, and a recording that
 * differs from the saved one only in volatile details (see maskVolatile) is left as it was, so a
 * run of the same version leaves `git diff` empty and any change in how a CLI renders shows up.
 */
export async function recordScreen(
  client: SwitchboardClient,
  paneId: string,
  where: { agent: string; version: string | null; stage: string; replace: [string, string][] },
): Promise<string[]> {
  const plain = await client.getScreen(paneId);
  // A screen of an unknown version is no fixture: it would sit beside the others, named for no version.
  if (where.version === null) return plain.lines;
  const ansi = await client.getScreen(paneId, { ansi: true });
  const dir = path.join(SCREENS_DIR, `${where.agent}-${where.version}`);
  mkdirSync(dir, { recursive: true });
  const normalize = (text: string): string => {
    let out = text;
    for (const [from, to] of where.replace) out = out.split(from).join(to);
    // CLIs also show the folder's bare name ("Trust folder (sb-gemini-work-a2uJUG)").
    for (const [from] of where.replace) out = out.split(path.basename(from)).join(maskTempName(path.basename(from)));
    return out.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT');
  };
  const plainFile = path.join(dir, `${where.stage}.txt`);
  const plainText = `${normalize(plain.text)}\n`;
  const unchanged = existsSync(plainFile) && maskVolatile(readFileSync(plainFile, 'utf8')) === maskVolatile(plainText);
  if (!unchanged) {
    writeFileSync(plainFile, plainText);
    writeFileSync(path.join(dir, `${where.stage}.ansi.txt`), `${normalize(ansi.text)}\n`);
  }
  return plain.lines;
}
