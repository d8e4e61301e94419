/**
 * What a script gets from every command of the CLI: --help and -h print the command's usage and
 * exit 0; errors are one line on stderr with the documented exit code and nothing on stdout; with
 * --json, a JSON result on stdout for every outcome, errors included. And tasks larger than one
 * argument may be, from standard input or a file, to `exec` and to `prompt` through the daemon.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES } from '../src/core/errors.js';
import { ModelServer, readConversation, type Scenario } from '../src/model-server/index.js';
import { connect } from '../src/client/index.js';
import { cleanEnv, runCli } from './support/cli.js';
import { startTestDaemon } from './support/daemon.js';
import { tempDir } from './support/shell.js';

const FAKE_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'doctor-fake');
const fakeEnv = (): NodeJS.ProcessEnv => ({ ...cleanEnv(), SWITCHBOARD_AGENT_PATH: FAKE_DIR, SWITCHBOARD_AGENTS: path.join(FAKE_DIR, 'agents.yaml') });

/** A task over 128 KiB, one line: more than Linux lets one argument be. */
const BIG_TASK = `big task ${Array.from({ length: 25_000 }, (_, i) => `x${String(i).padStart(6, '0')}`).join(' ')}`;
const SCENARIO: Scenario = {
  name: 'big',
  rules: [
    { match: '^big task', steps: [{ text: 'Got the big task.' }] },
    { match: '^run a command', steps: [{ tool: 'shell', command: 'echo hi > hi.txt' }, { text: 'Ran it.' }] },
    { steps: [{ text: 'Something else.' }] },
  ],
};

let home: { dir: string; cleanup: () => void };
let work: { dir: string; cleanup: () => void };
const sb = (args: string[], options: Parameters<typeof runCli>[2] = {}) => runCli(home.dir, args, options);

interface JsonError {
  status: string;
  error: { code: string; message: string };
}

/** Exactly one line on stderr. */
function oneLine(stderr: string): string {
  expect(stderr.endsWith('\n'), JSON.stringify(stderr)).toBe(true);
  expect(stderr.slice(0, -1), JSON.stringify(stderr)).not.toContain('\n');
  return stderr.slice(0, -1);
}

beforeAll(() => {
  home = tempDir('sb-cli-err-home-');
  work = tempDir('sb-cli-err-work-');
});
afterAll(() => {
  home.cleanup();
  work.cleanup();
});

describe('CLI errors a script can use', () => {
  it('prints the usage of every command for --help and -h, exit 0, nothing on stderr', async () => {
    const help = await sb(['help']);
    const names = [...new Set([...help.stdout.matchAll(/^ {2}switchboard ([a-z-]+)/gm)].map((m) => m[1] as string))];
    expect(names).toEqual(expect.arrayContaining(['daemon', 'up', 'new', 'send', 'prompt', 'wait', 'attach', 'exec', 'detect', 'doctor', 'model-server']));
    const runs = await Promise.all(names.flatMap((name) => [sb([name, '--help']), sb([name, '-h'])]));
    runs.forEach((run, i) => {
      const name = names[Math.floor(i / 2)] as string;
      expect(run, name).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout.startsWith(`usage: switchboard ${name}`), `${name}: ${run.stdout}`).toBe(true);
    });
    const exec = await sb(['exec', '--help']);
    expect(exec.stdout).toContain('exit status: 0 completed, 1 error, 2 timeout, 3 needs input, 130 cancelled, 64 usage');
    expect((await sb(['doctor', '-h'])).stdout).toContain('--save DIR');
  });

  it('exec with a missing workdir: one line on stderr, exit 1, nothing on stdout; JSON with --json', async () => {
    const missing = path.join(work.dir, 'no-such-folder');
    const text = await sb(['exec', 'claude', 'do something', '--workdir', missing]);
    expect(text).toMatchObject({ code: 1, stdout: '' });
    expect(oneLine(text.stderr)).toBe(`switchboard: workdir ${missing} is not a folder that exists`);
    const json = await sb(['exec', 'claude', 'do something', '--workdir', missing, '--json']);
    expect(json.code).toBe(1);
    oneLine(json.stderr);
    expect(JSON.parse(json.stdout)).toEqual({ status: 'error', error: { code: 'INVALID_PARAMS', message: `workdir ${missing} is not a folder that exists`, details: { workdir: missing } } });
  });

  it('an unknown agent CLI with --json: a JSON error with a stable code', async () => {
    const run = await sb(['exec', 'no-such-cli', 'do something', '--workdir', work.dir, '--json']);
    expect(run.code).toBe(1);
    const result = JSON.parse(run.stdout) as JsonError;
    expect(result).toMatchObject({ status: 'error', error: { code: 'INVALID_PARAMS' } });
    expect(result.error.message).toMatch(/^unknown agent 'no-such-cli' \(known: claude, codex, gemini, opencode, aider, shell\)$/);
    expect(oneLine(run.stderr)).toBe(`switchboard: ${result.error.message}`);
    const doctor = await sb(['doctor', 'no-such-cli', '--json']);
    expect(doctor.code).toBe(1);
    expect((JSON.parse(doctor.stdout) as JsonError).error.code).toBe('INVALID_PARAMS');
  });

  it('usage mistakes: one line naming the command and where help is, exit 64; JSON with --json', async () => {
    const cases: [string[], string][] = [
      [['send'], 'switchboard send: missing PANE (see switchboard send --help)'],
      [['exec'], 'switchboard exec: missing AGENT (see switchboard exec --help)'],
      [['exec', 'claude', '--frobnicate'], "switchboard exec: unknown option '--frobnicate' (see switchboard exec --help)"],
      [['ls', '-x'], "switchboard ls: unknown option '-x' (see switchboard ls --help)"],
      [['exec', 'claude', 'words', '--task-file', 'x.txt'], 'switchboard exec: give the task as words, as - (standard input) or with --task-file, not two of them (see switchboard exec --help)'],
      [['doctor', '--size', 'big'], "switchboard doctor: --size needs COLSxROWS, e.g. 120x30, got 'big' (see switchboard doctor --help)"],
      [['node', '--controller', 'nats://127.0.0.1:4222', '--worktree-days', 'soon'], "switchboard node: --worktree-days needs a whole number, got 'soon' (see switchboard node --help)"],
      [['frobnicate'], "switchboard: unknown command 'frobnicate' (see switchboard --help)"],
      [['--frobnicate'], 'switchboard: unknown option --frobnicate (see switchboard --help)'],
      [[], 'switchboard: missing command (see switchboard --help)'],
    ];
    for (const [args, line] of cases) {
      const run = await sb(args);
      expect(run, args.join(' ')).toMatchObject({ code: 64, stdout: '' });
      expect(oneLine(run.stderr)).toBe(line);
    }
    const json = await sb(['frobnicate', '--json']);
    expect(json.code).toBe(64);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'error', error: { code: 'INVALID_PARAMS', message: "unknown command 'frobnicate'" } });
    const emptyStdin = await sb(['exec', 'claude', '-', '--workdir', work.dir, '--json'], { input: '  \n' });
    expect(emptyStdin.code).toBe(64);
    expect(JSON.parse(emptyStdin.stdout)).toMatchObject({ status: 'error', error: { code: 'INVALID_PARAMS', message: 'the task is empty' } });
    const noFile = await sb(['exec', 'claude', '--task-file', path.join(work.dir, 'none.txt'), '--workdir', work.dir]);
    expect(noFile).toMatchObject({ code: 1, stdout: '' });
    expect(oneLine(noFile.stderr)).toMatch(/^switchboard: cannot read .*none\.txt: ENOENT$/);
  });

  it('errors from the daemon side: a stable code in JSON, whatever the command', async () => {
    for (const args of [['ls', '--json'], ['status', '--json'], ['read', 'p00000000', '--json'], ['wait', 'p00000000', '--text', 'x', '--json']]) {
      const run = await sb(args);
      expect(run.code, args.join(' ')).toBe(1);
      expect(oneLine(run.stderr)).toBe('switchboard: no daemon running: start one with `switchboard up`');
      const result = JSON.parse(run.stdout) as JsonError;
      expect(result).toEqual({ status: 'error', error: { code: 'CONNECTION_FAILED', message: 'no daemon running: start one with `switchboard up`' } });
      expect(ERROR_CODES).toContain(result.error.code);
    }
  });
});

describe('tasks larger than one argument', () => {
  let model: ModelServer;
  beforeAll(async () => {
    model = await ModelServer.start({ scenario: SCENARIO });
  });
  afterAll(async () => {
    await model.close();
  });

  /** The prompts of the model's main requests, whole (the log keeps only their start). */
  const prompts = (): string[] => model.modelRequests().flatMap((r) => (r.plan?.role === 'main' && r.api ? [readConversation(r.api, r.body).prompt] : []));

  it('exec takes the task from standard input (-) and from --task-file, over 128 KiB, and the model gets all of it', async () => {
    expect(Buffer.byteLength(BIG_TASK)).toBeGreaterThan(128 * 1024);
    const file = path.join(work.dir, 'task.txt');
    writeFileSync(file, `${BIG_TASK}\n`);
    const agentHome = (name: string): string => path.join(work.dir, `agent-home-${name}`);
    const common = ['exec', 'fakecli', '--workdir', work.dir, '--model-url', model.url, '--timeout', '120', '--quiet'];
    const [fromStdin, fromFile] = await Promise.all([
      sb([...common, '-', '--agent-home', agentHome('stdin'), '--json'], { input: BIG_TASK, env: fakeEnv(), timeoutMs: 180_000 }),
      sb([...common, '--task-file', file, '--agent-home', agentHome('file')], { env: fakeEnv(), timeoutMs: 180_000 }),
    ]);
    expect(fromStdin.code, fromStdin.stderr).toBe(0);
    expect(fromStdin.stderr).toBe('');
    expect(JSON.parse(fromStdin.stdout)).toMatchObject({ status: 'completed', errorCode: null, errorMessage: null });
    expect(JSON.parse(fromStdin.stdout)).not.toHaveProperty('error');
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(fromFile.stdout).toMatch(/^status: completed \(\d+\.\d s\)\n/);
    expect(fromFile.stdout.trimEnd().endsWith('Got the big task.')).toBe(true);
    expect(prompts().filter((p) => p === BIG_TASK)).toHaveLength(2);
  }, 240_000);

  it('exec that times out: the result on stdout, one line on stderr, exit 2; with --json a TIMEOUT code', async () => {
    // fakecli asks about the command in a way its profile cannot read: the screen stops changing.
    const args = ['exec', 'fakecli', 'run a command', '--workdir', work.dir, '--model-url', model.url, '--idle-timeout', '3', '--quiet'];
    const [text, json] = await Promise.all([
      sb([...args, '--agent-home', path.join(work.dir, 'timeout-home-text')], { env: fakeEnv(), timeoutMs: 120_000 }),
      sb([...args, '--agent-home', path.join(work.dir, 'timeout-home-json'), '--json'], { env: fakeEnv(), timeoutMs: 120_000 }),
    ]);
    expect(text.code, text.stderr).toBe(2);
    expect(text.stdout).toMatch(/^status: timeout \(\d+\.\d s\)\n/);
    // The state named is the last one recognized: fakecli's "working..." (thinking), or, when a
    // loaded machine read the screen only after the model's quick answer had replaced it with the
    // question no pattern knows, none since the start (CI saw "state: starting").
    const stuck = /^no progress on screen for 3 s \(state: (thinking|starting)\)$/;
    expect(oneLine(text.stderr)).toMatch(/^switchboard exec: timed out: /);
    expect(oneLine(text.stderr).replace(/^switchboard exec: timed out: /, '')).toMatch(stuck);
    expect(json.code).toBe(2);
    const result = JSON.parse(json.stdout) as { error?: { message?: string } };
    expect(result).toMatchObject({ status: 'timeout', errorCode: 'TIMEOUT', error: { code: 'TIMEOUT' } });
    expect(result.error?.message).toMatch(stuck);
  }, 180_000);

  it('prompt PANE takes it from --task-file and from standard input, through the daemon', async () => {
    process.env.SWITCHBOARD_AGENT_PATH = FAKE_DIR;
    const daemon = await startTestDaemon({ agentsFile: path.join(FAKE_DIR, 'agents.yaml') });
    const client = await connect({ home: daemon.home, env: cleanEnv() });
    try {
      const file = path.join(work.dir, 'prompt.txt');
      writeFileSync(file, BIG_TASK);
      for (const how of ['file', 'stdin'] as const) {
        model.clearRequests();
        const created = await client.createPane({ agent: 'fakecli', cwd: work.dir, agent_home: path.join(work.dir, `pane-home-${how}`), model_url: model.url });
        const args = how === 'file' ? ['prompt', created.pane_id, '--task-file', file] : ['prompt', created.pane_id, '-'];
        const run = await runCli(daemon.home, args, { env: cleanEnv(), ...(how === 'stdin' ? { input: BIG_TASK } : {}) });
        expect(run, how).toMatchObject({ code: 0, stdout: '', stderr: '' });
        expect((await client.waitFor(created.pane_id, { pattern: '^● Got the big task\\.$', flags: 'm', timeoutMs: 60_000 })).matched, how).toBe(true);
        expect(prompts(), how).toEqual([BIG_TASK]);
        await client.remove(created.pane_id);
      }
    } finally {
      client.close();
      await daemon.stop();
      delete process.env.SWITCHBOARD_AGENT_PATH;
    }
  }, 240_000);
});
