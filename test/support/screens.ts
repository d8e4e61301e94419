import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SwitchboardClient } from '../../src/index.js';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The tracked recordings the detector's unit tests read. */
const SCREENS_DIR = path.join(root, 'test', 'fixtures', 'screens');
/** Where every run puts what it recorded (ignored by git): a test run never changes a tracked file. */
const RECORDED_SCREENS_DIR = path.join(root, 'test-artifacts', 'screens');
/** Set by `npm run fixtures:update`: only then do recordings replace the tracked fixtures. */
export const UPDATE_FIXTURES_ENV = 'SWITCHBOARD_UPDATE_FIXTURES';

/**
 * What changes between two runs of the same CLI version without meaning anything: clock times,
 * elapsed durations, Claude Code's randomly chosen spinner verb ("Brewed for 2s", "Creating…"),
 * OpenCode's rotating input placeholder and progress bar, Claude Code's blinking tool dot, and the padding that shifts when their lengths do. Two
 * screens equal under this mask are the same recording.
 */
function maskVolatile(screen: string): string {
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
 * Returns the screen a test passes through and records it (plain and with colours) per CLI and
 * version into test-artifacts/screens/, where a developer can compare it with the fixtures. With
 * SWITCHBOARD_UPDATE_FIXTURES=1 (`npm run fixtures:update`) it also becomes the tracked fixture, so
 * detectors can be unit-tested without the CLIs and a new pinned version gets its own recordings;
 * even then a recording that differs from the tracked one only in volatile details (see
 * maskVolatile) leaves it as it was, so `git diff` shows only real changes in how a CLI renders.
 * Temporary paths and ports are replaced by fixed ones either way.
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
  const folder = `${where.agent}-${where.version}`;
  const normalize = (text: string): string => {
    let out = text;
    for (const [from, to] of where.replace) out = out.split(from).join(to);
    // CLIs also show the folder's bare name ("Trust folder (sb-gemini-work-a2uJUG)").
    for (const [from] of where.replace) out = out.split(path.basename(from)).join(maskTempName(path.basename(from)));
    return out.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT');
  };
  const plainText = `${normalize(plain.text)}\n`;
  const ansiText = `${normalize(ansi.text)}\n`;
  writeRecording(path.join(RECORDED_SCREENS_DIR, folder), where.stage, plainText, ansiText);
  if (process.env[UPDATE_FIXTURES_ENV] === '1') {
    const tracked = path.join(SCREENS_DIR, folder);
    const plainFile = path.join(tracked, `${where.stage}.txt`);
    const unchanged = existsSync(plainFile) && maskVolatile(readFileSync(plainFile, 'utf8')) === maskVolatile(plainText);
    if (!unchanged) writeRecording(tracked, where.stage, plainText, ansiText);
  }
  return plain.lines;
}

function writeRecording(dir: string, stage: string, plain: string, ansi: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, `${stage}.txt`), plain);
  writeFileSync(path.join(dir, `${stage}.ansi.txt`), ansi);
}
