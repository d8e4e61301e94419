/**
 * The cases a real CLI is run through to capture its screens (scripts/capture-screens.ts) and to
 * measure auto-approve's reliability (bench/reliability.ts): each a scripted model's scenario, the
 * task typed, and a check of what the task left behind that does not trust the CLI's own report.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ExecuteResult } from '../src/index.js';
import type { Scenario } from '../src/model-server/index.js';

export interface CaptureCase {
  name: string;
  prompt: string;
  scenario: Scenario;
  /** Answer every approval with deny instead of the auto-approve policy. */
  deny?: boolean;
  timeoutMs?: number;
  /**
   * Run in a folder outside the system's temporary folder: Codex counts /tmp among its writable
   * roots, so a write next to a working folder there is never outside them.
   */
  outsideTmp?: boolean;
  /** Files the task starts with. */
  prepare?: (work: string) => void;
  /** "ok" when the task did what it should, else what is wrong. */
  check: (result: ExecuteResult, work: string) => string;
}

const read = (file: string): string | undefined => (existsSync(file) ? readFileSync(file, 'utf8') : undefined);

/** A shell command long enough to wrap at 80 columns in every CLI's approval box. */
const SLOW_COMMAND = 'printf "%s\\n" "the answer, written slowly to a file of its own" > slow.txt';

/** The model runs SLOW_COMMAND, then says it did. */
const SLOW_SCENARIO: Scenario = {
  name: 'slow command',
  rules: [{ match: 'run the slow command', steps: [{ tool: 'shell', command: SLOW_COMMAND, description: 'Write slow.txt', escalate: true }, { text: 'Wrote slow.txt.' }] }],
};

export const CAPTURE_CASES: Record<string, CaptureCase> = {
  shell: {
    name: 'shell',
    prompt: 'run the slow command please',
    scenario: SLOW_SCENARIO,
    check: (r, work) => (r.status !== 'completed' ? `status ${r.status}` : read(path.join(work, 'slow.txt'))?.includes('written slowly') ? 'ok' : 'slow.txt not written'),
  },
  edit: {
    name: 'edit',
    prompt: 'change the colour please',
    prepare: (work) => writeFileSync(path.join(work, 'settings.txt'), 'name = demo\ncolour = red\nsize = 3\n'),
    scenario: {
      name: 'edit',
      rules: [{ match: 'change the colour', steps: [{ tool: 'edit', path: 'settings.txt', old: 'colour = red', new: 'colour = blue' }, { text: 'Changed the colour to blue.' }] }],
    },
    check: (r, work) => (r.status !== 'completed' ? `status ${r.status}` : read(path.join(work, 'settings.txt'))?.includes('colour = blue') ? 'ok' : 'settings.txt not edited'),
  },
  /** An edit in a longer file, with rows wider than a narrow terminal: the diff is cut and wrapped. */
  editLong: {
    name: 'editLong',
    prompt: 'change the long setting please',
    prepare: (work) => writeFileSync(path.join(work, 'long.txt'), Array.from({ length: 40 }, (_, i) => `setting_${i + 1} = ${i === 19 ? 'old' : 'kept'} # ${'a comment that makes this row wider than a narrow terminal '.repeat(2)}`).join('\n') + '\n'),
    scenario: {
      name: 'editLong',
      rules: [{ match: 'change the long setting', steps: [{ tool: 'edit', path: 'long.txt', old: 'setting_20 = old', new: 'setting_20 = new' }, { text: 'Changed setting 20.' }] }],
    },
    check: (r, work) => (r.status !== 'completed' ? `status ${r.status}` : read(path.join(work, 'long.txt'))?.includes('setting_20 = new') ? 'ok' : 'long.txt not edited'),
  },
  /** A command Claude Code cannot check before it runs: it says why in a row of its own. */
  nested: {
    name: 'nested',
    prompt: 'list the parent please',
    scenario: {
      name: 'nested',
      rules: [{ match: 'list the parent', steps: [{ tool: 'shell', command: 'cd .. && ls $(pwd) > /dev/null', description: 'List the parent folder', escalate: true }, { text: 'Listed the parent.' }] }],
    },
    check: (r) => (r.status === 'completed' ? 'ok' : `status ${r.status}`),
  },
  outside: {
    name: 'outside',
    prompt: 'write outside please',
    scenario: {
      name: 'outside',
      rules: [{ match: 'write outside', steps: [{ tool: 'shell', command: 'mkdir -p ../outside && echo out > ../outside/out.txt', description: 'Write ../outside/out.txt', escalate: true }, { text: 'Wrote outside.' }] }],
    },
    check: (r) => `status ${r.status}`,
  },
  /** A file written outside the working folder (Codex: outside its writable roots). */
  outsideWrite: {
    name: 'outsideWrite',
    prompt: 'save a note outside please',
    outsideTmp: true,
    scenario: {
      name: 'outsideWrite',
      rules: [{ match: 'save a note outside', steps: [{ tool: 'write', path: '../outside-note.txt', content: 'a note\n' }, { text: 'Saved the note.' }] }],
    },
    check: (r) => `status ${r.status}`,
  },
  stream: {
    name: 'stream',
    prompt: 'stream a long answer please',
    scenario: {
      name: 'stream',
      rules: [{ match: 'stream a long answer', steps: [{ text: Array.from({ length: 40 }, (_, i) => `Line ${i + 1} of a long answer that arrives in small pieces.`).join('\n'), chunk_chars: 24, chunk_delay_ms: 120 }] }],
    },
    check: (r) => (r.status === 'completed' && (r.finalMessage ?? r.outputLog).includes('Line 40') ? 'ok' : `status ${r.status}`),
  },
  error400: {
    name: 'error400',
    prompt: 'fail with 400 please',
    scenario: { name: 'error400', rules: [{ match: 'fail with 400', steps: [{ error: 400, message: 'scripted bad request for the capture' }] }] },
    check: (r) => (r.status === 'error' ? 'ok' : `status ${r.status}`),
  },
  error500: {
    name: 'error500',
    prompt: 'fail with 500 please',
    timeoutMs: 60_000,
    scenario: { name: 'error500', rules: [{ match: 'fail with 500', steps: [{ error: 500, message: 'scripted server failure for the capture' }] }] },
    check: (r) => (r.status === 'error' ? 'ok' : `status ${r.status}`),
  },
  deny: {
    name: 'deny',
    prompt: 'run the slow command please',
    deny: true,
    scenario: SLOW_SCENARIO,
    check: (r, work) => (existsSync(path.join(work, 'slow.txt')) ? 'ran a denied command' : `status ${r.status}`),
  },
};
