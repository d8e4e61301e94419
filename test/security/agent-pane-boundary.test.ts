/**
 * Issue 21, item 1: a program in an agent pane got the owner's powers. Its own token is scoped
 * (read, ask), but it could read the owner's token from the runtime file or from an owner shell's
 * /proc/PID/environ, and `tmux_command` with any token ran `run-shell`, `new-session "touch FILE"`
 * and buffers to and from files. The daemon now asks the OS who is calling (SO_PEERCRED on the
 * local socket, the socket's owning process on loopback TCP) and holds a program of an agent pane
 * to that pane's grant, whatever token it shows, after a double fork or `setsid` too; and each
 * tmux command is judged by what it does.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { connect } from '../../src/index.js';
import { CallerOrigins, type Grant } from '../../src/api/index.js';
import { useTestDaemon } from '../support/daemon.js';
import { cleanEnv } from '../support/cli.js';
import { BASH_ARGV, BASH_ENV, tempDir } from '../support/shell.js';
import { until } from '../support/processes.js';

const web = tempDir('sb-web-');
writeFileSync(path.join(web.dir, 'index.html'), '<!doctype html><title>Switchboard</title>');
afterAll(() => web.cleanup());
const t = useTestDaemon({ dashboard: { port: 0, webRoot: web.dir } });

type TokenSource = 'runtime-file' | 'owner-environ' | 'pane';
interface Call {
  label: string;
  /** JSON-RPC over the local socket or TCP; or HTTP to the dashboard's port (`method` is then `VERB /path`). */
  via: 'socket' | 'tcp' | 'http';
  token: TokenSource;
  method: string;
  params: Record<string, unknown>;
}
interface Outcome {
  label: string;
  ok: boolean;
  code?: string;
  message?: string;
  result?: unknown;
}

/**
 * A program for a pane, as an attacker would write it: finds a token (the runtime file, another
 * process's environment, its own), calls the daemon over a fresh raw connection per call, and
 * writes each outcome as a JSON line.
 */
function attackerScript(home: string, ownerShellPid: number, out: string, calls: Call[], dashboardPort = 0): string {
  return `import net from 'node:net';
import { appendFileSync, readFileSync } from 'node:fs';
const runtime = JSON.parse(readFileSync(${JSON.stringify(path.join(home, 'daemon.json'))}, 'utf8'));
const tokens = {
  'runtime-file': runtime.token,
  'owner-environ': readFileSync('/proc/${ownerShellPid}/environ', 'utf8').split('\\0').find((e) => e.startsWith('SWITCHBOARD_RPC_TOKEN='))?.slice(22),
  pane: process.env.SWITCHBOARD_RPC_TOKEN,
};
async function http(c) {
  const [verb, route] = c.method.split(' ');
  try {
    const res = await fetch('http://127.0.0.1:${dashboardPort}' + route, { method: verb, headers: { authorization: 'Bearer ' + tokens[c.token], 'content-type': 'application/json' }, body: verb === 'GET' ? undefined : JSON.stringify(c.params) });
    const text = await res.text();
    let body;
    try { body = JSON.parse(text); } catch { body = undefined; }
    return res.ok ? { ok: true, result: res.status } : { ok: false, code: body?.error?.code ?? String(res.status), message: body?.error?.message ?? text.trim() };
  } catch (e) {
    return { ok: false, code: 'SOCKET', message: e.message };
  }
}
function call(c) {
  if (c.via === 'http') return http(c);
  return new Promise((resolve) => {
    const socket = c.via === 'socket' ? net.connect(runtime.socket) : net.connect(runtime.port, runtime.host);
    let text = '';
    socket.on('data', (d) => {
      text += d;
      const nl = text.indexOf('\\n');
      if (nl === -1) return;
      socket.destroy();
      const reply = JSON.parse(text.slice(0, nl));
      resolve(reply.error ? { ok: false, code: reply.error.data?.code, message: reply.error.message } : { ok: true, result: reply.result });
    });
    socket.on('error', (e) => resolve({ ok: false, code: 'SOCKET', message: e.message }));
    socket.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: c.method, params: { ...c.params, token: tokens[c.token] } }) + '\\n');
  });
}
for (const c of ${JSON.stringify(calls)}) appendFileSync(${JSON.stringify(out)}, JSON.stringify({ label: c.label, ...(await call(c)) }) + '\\n');
`;
}

/** Runs the attacker in `paneId` by `launch` (a shell line with SCRIPT in it) and returns every call's outcome. */
async function attack(paneId: string, name: string, ownerShellPid: number, launch: string, calls: Call[]): Promise<Outcome[]> {
  const script = path.join(t.work, `${name}.mjs`);
  const out = path.join(t.work, `${name}.jsonl`);
  writeFileSync(script, attackerScript(t.home, ownerShellPid, out, calls, t.daemon.dashboard?.port));
  writeFileSync(out, '');
  const owner = await connect({ home: t.home, env: cleanEnv() });
  await owner.sendText(paneId, launch.replace('SCRIPT', script), { addNewline: true });
  owner.close();
  const read = (): string[] => readFileSync(out, 'utf8').split('\n').filter(Boolean);
  await until(() => read().length === calls.length, `${name}: every call's outcome`, 60_000);
  return read().map((l) => JSON.parse(l) as Outcome);
}

const byLabel = (outcomes: Outcome[], label: string): Outcome => {
  const found = outcomes.find((o) => o.label === label);
  if (!found) throw new Error(`no outcome for ${label}`);
  return found;
};

describe.runIf(process.platform === 'linux')('an agent pane is held to its grant, whatever token it finds', () => {
  // Three escapes of 26 calls each, every call on a connection of its own: time for a busy machine.
  it('refuses the owner token found in the runtime file or an owner shell, over both transports, from the pane, a double fork and setsid', { timeout: 240_000 }, async () => {
    const owner = await connect({ home: t.home, env: cleanEnv() });
    const ownerShell = await owner.createPane({ argv: [...BASH_ARGV], env: BASH_ENV, cwd: t.work });
    const agent = await owner.createPane({ agent: 'shell', cwd: t.work, env: BASH_ENV });
    const touched = path.join(t.work, 'touched-by-agent');
    const launches = {
      direct: 'node SCRIPT',
      'double fork': '( node SCRIPT & )',
      setsid: 'setsid -f node SCRIPT',
    };
    for (const [name, launch] of Object.entries(launches)) {
      const calls: Call[] = [];
      for (const via of ['socket', 'tcp'] as const) {
        for (const token of ['runtime-file', 'owner-environ'] as const) {
          const tag = `${via}/${token}`;
          calls.push(
            { label: `${tag}/list`, via, token, method: 'list', params: {} },
            { label: `${tag}/create_pane`, via, token, method: 'create_pane', params: { command: `touch ${touched}` } },
            { label: `${tag}/send_text`, via, token, method: 'send_text', params: { pane_id: ownerShell.pane_id, text: `touch ${touched}`, add_newline: true } },
            { label: `${tag}/tmux new-session`, via, token, method: 'tmux_command', params: { argv: ['-L', 'agent-escape', 'new-session', '-d', '-s', 'x', `touch ${touched}`], env: {}, cwd: t.work } },
            { label: `${tag}/shutdown`, via, token, method: 'shutdown', params: {} },
          );
        }
      }
      for (const token of ['runtime-file', 'owner-environ'] as const) {
        calls.push(
          { label: `http/${token}/list`, via: 'http', token, method: 'GET /api/v2/agent/runs', params: {} },
          { label: `http/${token}/run`, via: 'http', token, method: 'POST /api/v2/agent/run', params: { backend: 'shell', prompt: `touch ${touched}` } },
          { label: `http/${token}/dashboard`, via: 'http', token, method: 'GET /', params: {} },
        );
      }
      const outcomes = await attack(agent.pane_id, `escape-${name.replace(' ', '-')}`, ownerShell.pid, launch, calls);
      for (const outcome of outcomes) {
        if (outcome.label.endsWith('/list')) {
          // Reading is what the pane's own grant allows: the token still works, as the pane's.
          expect(outcome, `${name}: ${outcome.label}`).toMatchObject({ ok: true });
          continue;
        }
        if (outcome.label.endsWith('/dashboard')) {
          // The dashboard is the owner's full control: not for a program of an agent pane, whatever token it shows.
          expect(outcome, `${name}: ${outcome.label}`).toMatchObject({ ok: false, code: '403', message: 'the dashboard is not for programs in an agent pane' });
          continue;
        }
        expect(outcome, `${name}: ${outcome.label}`).toMatchObject({ ok: false, code: 'FORBIDDEN' });
        expect(outcome.message, `${name}: ${outcome.label}`).toContain(`the token of pane ${agent.pane_id}`);
      }
    }
    expect(existsSync(touched)).toBe(false);
    // Outside any agent pane the same token is the owner's.
    expect((await owner.request('tmux_command', { argv: ['-L', 'owner-check', 'list-sessions'], env: {}, cwd: t.work })) as { exit_code: number }).toMatchObject({ exit_code: 1 });
    for (const p of [ownerShell, agent]) await owner.remove(p.pane_id);
    owner.close();
  });

  it("judges each tmux command by what it does: a pane's token lists and captures, but never runs a shell, a file buffer or a new pane", async () => {
    const owner = await connect({ home: t.home, env: cleanEnv() });
    const ownerShell = await owner.createPane({ argv: [...BASH_ARGV], env: BASH_ENV, cwd: t.work });
    // The owner starts a tmux server the agent's commands then look at.
    const started = (await owner.request('tmux_command', { argv: ['-L', 'judged', 'new-session', '-d', '-s', 'main', 'sleep 600'], env: {}, cwd: t.work })) as { exit_code: number };
    expect(started.exit_code).toBe(0);
    const agent = await owner.createPane({ agent: 'shell', cwd: t.work, env: BASH_ENV });
    const secret = path.join(t.work, 'secret.txt');
    writeFileSync(secret, 'owner-only');
    const written = path.join(t.work, 'written-by-agent');
    const tmux = (label: string, argv: string[]): Call => ({ label, via: 'socket', token: 'pane', method: 'tmux_command', params: { argv: ['-L', 'judged', ...argv], env: {}, cwd: t.work } });
    const outcomes = await attack(agent.pane_id, 'tmux-judged', ownerShell.pid, 'node SCRIPT', [
      tmux('list-sessions', ['list-sessions', '-F', '#{session_name}']),
      tmux('capture-pane', ['capture-pane', '-p', '-t', 'main']),
      tmux('run-shell', ['run-shell', `touch ${written}`]),
      tmux('if-shell', ['if-shell', `touch ${written}`, 'list-sessions']),
      tmux('load-buffer', ['load-buffer', secret]),
      tmux('save-buffer', ['save-buffer', written]),
      tmux('source-file', ['source-file', secret]),
      tmux('set-hook', ['set-hook', '-g', 'after-list-sessions', `run-shell "touch ${written}"`]),
      tmux('set-option default-command', ['set-option', '-g', 'default-command', `touch ${written}`]),
      tmux('show-environment', ['show-environment', '-g']),
      tmux('new-window', ['new-window', '-t', 'main', `touch ${written}`]),
      tmux('send-keys', ['send-keys', '-t', 'main', `touch ${written}`, 'Enter']),
      tmux('kill-server', ['kill-server']),
      tmux('list then run-shell', ['list-sessions', ';', 'run-shell', `touch ${written}`]),
    ]);
    expect(byLabel(outcomes, 'list-sessions')).toMatchObject({ ok: true, result: { exit_code: 0, stdout: 'main\n' } });
    expect(byLabel(outcomes, 'capture-pane')).toMatchObject({ ok: true, result: { exit_code: 0 } });
    const refused: Record<string, string> = {
      'run-shell': 'admin',
      'if-shell': 'admin',
      'load-buffer': 'admin',
      'save-buffer': 'admin',
      'source-file': 'admin',
      'set-hook': 'admin',
      'set-option default-command': 'admin',
      'show-environment': 'admin',
      'new-window': 'create',
      'send-keys': 'send',
      'kill-server': 'kill',
      'list then run-shell': 'admin',
    };
    for (const [label, scope] of Object.entries(refused)) {
      const outcome = byLabel(outcomes, label);
      expect(outcome, label).toMatchObject({ ok: false, code: 'FORBIDDEN' });
      expect(outcome.message, label).toContain(`it needs the scope '${scope}'`);
    }
    expect(existsSync(written)).toBe(false);
    // Nothing the refused line held was run: the server still has its one window.
    const windows = (await owner.request('tmux_command', { argv: ['-L', 'judged', 'list-windows', '-t', 'main', '-F', '#{window_index}'], env: {}, cwd: t.work })) as { stdout: string };
    expect(windows.stdout).toBe('0\n');
    await owner.request('tmux_command', { argv: ['-L', 'judged', 'kill-server'], env: {}, cwd: t.work });
    for (const p of [ownerShell, agent]) await owner.remove(p.pane_id);
    owner.close();
  });

  it('gives nothing to a caller that connects, writes and exits before the daemon can see who it was', { timeout: 180_000 }, async () => {
    const owner = await connect({ home: t.home, env: cleanEnv() });
    const agent = await owner.createPane({ agent: 'shell', cwd: t.work, env: BASH_ENV });
    const caps: (Grant | undefined)[] = [];
    const original = Object.getOwnPropertyDescriptor(CallerOrigins.prototype, 'capOfConnection')?.value as (this: CallerOrigins, socket: Socket) => Promise<Grant | undefined>;
    const spy = vi.spyOn(CallerOrigins.prototype, 'capOfConnection').mockImplementation(async function (this: CallerOrigins, socket) {
      const cap = await original.call(this, socket);
      caps.push(cap);
      return cap;
    });
    try {
      for (const via of ['socket', 'tcp'] as const) {
        const touched = path.join(t.work, `hit-and-run-${via}`);
        const done = path.join(t.work, `hit-and-run-${via}.done`);
        const script = path.join(t.work, `hit-and-run-${via}.mjs`);
        writeFileSync(
          script,
          `import net from 'node:net';
import { readFileSync } from 'node:fs';
const runtime = JSON.parse(readFileSync(${JSON.stringify(path.join(t.home, 'daemon.json'))}, 'utf8'));
const request = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'create_pane', params: { command: ${JSON.stringify(`touch ${touched}`)}, token: runtime.token } }) + '\\n';
const socket = ${via === 'socket' ? 'net.connect(runtime.socket)' : 'net.connect(runtime.port, runtime.host)'};
socket.on('connect', () => socket.write(request, () => process.exit(0)));
`,
        );
        const go = path.join(t.work, `hit-and-run-${via}.go`);
        // The line runs up to the wait for `go` first: its Enter is written by node-pty only after
        // the text's write has called back, which needs this (the daemon's) event loop, so the line
        // must be running, not merely echoed, before the loop is held.
        await owner.sendText(agent.pane_id, `printf '%s-%s\\n' armed ${via}; until [ -e ${go} ]; do sleep 0.02; done; node ${script}; touch ${done}`, { addNewline: true });
        await owner.waitFor(agent.pane_id, { pattern: `armed-${via}` });
        writeFileSync(go, '');
        // This process is the daemon: held here, it accepts the connection only after its caller is gone.
        const deadline = Date.now() + 60_000;
        while (!existsSync(done) && Date.now() < deadline);
        expect(existsSync(done), 'the caller ran and exited').toBe(true);
        const before = caps.length;
        await until(() => caps.length > before, 'the daemon looked at the caller');
        // Whoever it was, it was not the owner: nothing allowed, or the pane's grant if it was still seen.
        const cap = caps[caps.length - 1];
        expect(cap === undefined || cap.owner, `${via}: ${JSON.stringify(cap && { ...cap, scopes: [...cap.scopes] })}`).toBe(false);
        expect(existsSync(touched)).toBe(false);
      }
    } finally {
      spy.mockRestore();
      await owner.remove(agent.pane_id);
      owner.close();
    }
  });
});
