/**
 * The agent bridge through a real daemon process (the built CLI, `switchboard daemon`), with Claude
 * Code against the scripted model: `switchboard run` streams a run to its end over JSON-RPC (JSON
 * lines and words, the prompt as arguments and from standard input) with its exit code, and
 * `switchboard runs` replays it from the ledger event for event; the official `openai` client,
 * unmodified, talks to `/api/v2/chat/proxy` on the daemon's HTTP port, whole and streaming; and the
 * daemon killed with SIGKILL mid-run and started again shows that run `failed (interrupted)`,
 * every event before the kill intact, `PRAGMA integrity_check` ok, and no CLI left behind.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import OpenAI from 'openai';
import { connect } from '../../src/client/index.js';
import { findProcessesByEnv, isProcessRunning } from '../../src/platform/index.js';
import { readRuntimeFile } from '../../src/daemon/index.js';
import { CLI, cleanEnv, runCli } from '../support/cli.js';
import { apiClient } from '../support/sse.js';
import { AGENT_BIN_DIRS } from './agent-flow.js';
import { RULES, useScriptedModel } from './scripted-model.js';
import { until } from '../support/processes.js';

const scripted = useScriptedModel({ name: 'bridge-daemon', title: 'The bridge through the daemon', rules: [RULES.sayHello, RULES.takeYourTime] });

interface DaemonProcess {
  child: ChildProcess;
  exited: Promise<void>;
  /** The dashboard's (and the HTTP API's) port. */
  httpPort: number;
  token: string;
}

const daemons: DaemonProcess[] = [];
afterAll(async () => {
  for (const d of daemons) {
    if (d.child.exitCode === null && d.child.signalCode === null) {
      d.child.kill('SIGTERM');
      await d.exited;
    }
  }
});

const env = (): NodeJS.ProcessEnv => ({ ...cleanEnv(), SWITCHBOARD_AGENT_PATH: AGENT_BIN_DIRS.join(path.delimiter) });

/** Starts `switchboard daemon` for `home`, every CLI pointed at the scripted model; resolves once its HTTP API is up. */
async function startDaemon(home: string, agentHome: string): Promise<DaemonProcess> {
  const child = spawn(process.execPath, [CLI, '--home', home, 'daemon', '--port', '0', '--dashboard-port', '0', '--agent-home', agentHome, '--model-url', scripted.model.url, '--log-level', 'warn'], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const httpPort = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      const m = /HTTP API: http:\/\/127\.0\.0\.1:(\d+)\/api\/v2\//.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`the daemon exited (${code}): ${out}${err}`)));
  });
  const token = readRuntimeFile(home)?.token;
  if (token === undefined) throw new Error('no runtime file');
  const d = { child, exited, httpPort, token };
  daemons.push(d);
  return d;
}

function setUp(): { home: string; agentHome: string; work: string } {
  const root = scripted.tempDir('sb-bridge-daemon-').dir;
  const home = path.join(root, 'home');
  const work = path.join(root, 'work');
  mkdirSync(home, { mode: 0o700 });
  mkdirSync(work);
  writeFileSync(path.join(home, 'policy.yaml'), `sandbox:\n  roots: [${JSON.stringify(work)}]\n`);
  return { home, agentHome: path.join(root, 'agents'), work };
}

describe('the agent bridge through the daemon, with Claude Code', () => {
  it('switchboard run streams a run to its end and runs replays it; the openai client drives the chat proxy', { timeout: 300_000 }, async () => {
    const { home, agentHome, work } = setUp();
    const daemon = await startDaemon(home, agentHome);

    const json = await runCli(home, ['run', 'claude', 'say hello please', '--cwd', work, '--json'], { env: env(), timeoutMs: 180_000 });
    expect(json.code, json.stderr).toBe(0);
    const lines = json.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const last = lines.pop() as { run: { id: string; status: string; reason: string } };
    expect(last.run).toMatchObject({ status: 'completed', reason: 'finished' });
    expect(lines.map((e) => e.seq)).toEqual(lines.map((_, i) => i + 1));
    // The reply as it streamed, in as many token events as the CLI gave pieces.
    const tokens = lines.filter((e) => e.type === 'token').map((e) => (e.compat as { text: string }).text);
    expect(tokens.join('').trim()).toBe('Hello from the scripted model.');
    expect(lines.at(-1)).toMatchObject({ type: 'done', data: { outcome: 'completed' } });

    const shown = await runCli(home, ['runs', last.run.id, '--json'], { env: env() });
    expect(shown.code, shown.stderr).toBe(0);
    expect((JSON.parse(shown.stdout) as { events: unknown[] }).events).toEqual(lines);
    const listed = await runCli(home, ['runs'], { env: env() });
    expect(listed.stdout).toContain(last.run.id);

    // Words, with the prompt from standard input.
    const words = await runCli(home, ['run', 'claude', '-', '--cwd', work], { env: env(), input: 'say hello please', timeoutMs: 180_000 });
    expect(words.code, words.stderr).toBe(0);
    expect(words.stdout.trim()).toBe('Hello from the scripted model.');
    expect(words.stderr).toMatch(/completed \(finished\)/);
    // A folder outside the sandbox: refused with the stable code, exit 1.
    const outside = await runCli(home, ['run', 'claude', 'say hello please', '--cwd', path.dirname(work), '--json'], { env: env() });
    expect(outside.code).toBe(1);
    expect(JSON.parse(outside.stdout)).toMatchObject({ status: 'error', error: { code: 'FORBIDDEN' } });

    const openai = new OpenAI({ apiKey: daemon.token, baseURL: `http://127.0.0.1:${daemon.httpPort}/api/v2/chat/proxy`, maxRetries: 0, timeout: 180_000 });
    const whole = await openai.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'say hello please' }] });
    expect(whole.choices[0]?.message.content?.trim()).toBe('Hello from the scripted model.');
    const stream = await openai.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'say hello please' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text.trim()).toBe('Hello from the scripted model.');
    await expect(new OpenAI({ apiKey: 'wrong', baseURL: `http://127.0.0.1:${daemon.httpPort}/api/v2/chat/proxy`, maxRetries: 0 }).chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 401 });

    daemon.child.kill('SIGTERM');
    await daemon.exited;
  });

  it('a daemon killed with SIGKILL mid-run and started again shows the run failed (interrupted), its events intact, the ledger clean, no CLI left', { timeout: 300_000 }, async () => {
    const { home, agentHome, work } = setUp();
    const first = await startDaemon(home, agentHome);
    const api = apiClient(`http://127.0.0.1:${first.httpPort}`, first.token);
    const asked = (): number => scripted.model.modelRequests().filter((r) => r.plan?.prompt.includes('take your time')).length;
    const before = asked();
    const submitted = await api.call('POST', '/api/v2/agent/run', { backend: 'claude', prompt: 'take your time please', cwd: work });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
    const runId = (submitted.body as { id: string }).id;
    // The CLI is in the turn once the model has its request (the reply waits 60 s).
    await until(() => asked() > before, 'the model to be asked', 120_000);
    expect(asked()).toBeGreaterThan(before);
    const seen = ((await api.call('GET', `/api/v2/agent/runs/${runId}?events=true`)).body as { run: { status: string }; events: Record<string, unknown>[] });
    expect(['running', 'streaming']).toContain(seen.run.status);
    const cli = findProcessesByEnv('SWITCHBOARD_BRIDGE_RUN', runId);
    expect(cli.length).toBeGreaterThan(0);

    first.child.kill('SIGKILL');
    await first.exited;

    const second = await startDaemon(home, agentHome);
    const client = await connect({ home });
    try {
      const info = await client.info();
      expect(info.bridge).toMatchObject({ on: true, interrupted_runs: [runId] });
      const { run } = await client.runGet(runId);
      expect(run).toMatchObject({ status: 'failed', reason: 'interrupted' });
      const replay = await client.runEvents(runId);
      expect(replay.events.slice(0, seen.events.length)).toEqual(seen.events);
      // The run went on writing between the look above and the kill (Claude's stream can bring a
      // system message, a notice, then): those events stay. The new daemon added exactly the end.
      const after = replay.events.slice(seen.events.length).map((e) => e.type);
      expect(after.slice(-2)).toEqual(['state', 'done']);
      expect(after.slice(0, -2).filter((type) => type === 'state' || type === 'done' || type === 'error')).toEqual([]);
      expect(replay.events.at(-1)).toMatchObject({ type: 'done', data: { outcome: 'failed', reason: 'interrupted' } });
      // What the dead daemon's run had started was ended before the new daemon listened.
      expect(cli.filter((pid) => isProcessRunning(pid))).toEqual([]);
      expect(findProcessesByEnv('SWITCHBOARD_BRIDGE_RUN', runId)).toEqual([]);
      const db = new Database(path.join(home, 'ledger.db'), { readonly: true });
      try {
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      } finally {
        db.close();
      }
    } finally {
      client.close();
    }
    second.child.kill('SIGTERM');
    await second.exited;
  });
});
