import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { spawn as spawnPty } from 'node-pty';
import { Screen } from '../src/pane/screen.js';
import { connect } from '../src/client/index.js';
import { isProcessRunning } from '../src/platform/index.js';
import { CLI, cleanEnv, runCli, spawnCli } from './support/cli.js';
import { sleep, tempDir } from './support/shell.js';
import { until } from './support/processes.js';

let home: { dir: string; cleanup: () => void };
let work: { dir: string; cleanup: () => void };
const sb = (...args: string[]) => runCli(home.dir, args);

beforeAll(async () => {
  home = tempDir('sb-cli-home-');
  work = tempDir('sb-cli-work-');
  const up = await sb('up', '--port', '0');
  expect(up.code, up.stderr).toBe(0);
  expect(up.stdout).toMatch(/^started \(pid \d+\), listening on 127\.0\.0\.1:\d+ and .*switchboard\.sock/);
});

afterAll(async () => {
  const down = await sb('down');
  expect(down.stdout).toMatch(/stopped|no daemon running/);
  home.cleanup();
  work.cleanup();
});

async function newShell(title: string): Promise<string> {
  const created = await runCli(home.dir, ['new', '--title', title, '--cwd', work.dir, '--env', 'PS1=PROMPT$ ', '--', 'bash', '--norc', '--noprofile'], {});
  expect(created.code, created.stderr).toBe(0);
  const id = created.stdout.trim();
  expect(id).toMatch(/^p[0-9a-f]{8}$/);
  expect((await sb('wait', id, '--text', 'PROMPT\\$', '--timeout', '15')).code).toBe(0);
  return id;
}

describe('switchboard CLI', () => {
  it('reports an already running daemon and its status', async () => {
    const again = await sb('up', '--port', '0');
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^already running \(pid \d+\)/);
    const status = await sb('status');
    expect(status.stdout).toMatch(/^switchboard \d+\.\d+\.\d+, pid \d+, up \d+ s, on 127\.0\.0\.1:\d+ and /);
    const json = JSON.parse((await sb('status', '--json')).stdout) as { name: string };
    expect(json.name).toBe('switchboard');
  });

  it('creates, lists, types into, reads, waits on, resizes, kills and removes panes', async () => {
    const id = await newShell('cli-worker');
    expect((await sb('send', 'cli-worker', 'echo typed-$((2+3))', '--enter')).code).toBe(0);
    // The output and the prompt bash draws after it, which the read below expects too.
    const waited = await sb('wait', id.slice(0, 5), '--text', '^typed-5\\nPROMPT\\$', '--flags', 'm');
    expect(waited).toMatchObject({ code: 0, stdout: expect.stringMatching(/^typed-5\n/) as unknown });
    const read = await sb('read', id, '--lines', '2');
    expect(read.stdout).toBe('typed-5\nPROMPT$\n');

    expect((await sb('keys', id, 'e', 'c', 'h', 'o', 'Space', 'k', 'e', 'y', 's', 'Enter')).code).toBe(0);
    expect((await sb('wait', id, '--text', '^keys$', '--flags', 'm')).code).toBe(0);

    expect((await sb('paste', id, 'echo pasted')).code).toBe(0);
    await sb('keys', id, 'Enter');
    expect((await sb('wait', id, '--text', '^pasted$', '--flags', 'm')).code).toBe(0);

    await runCli(home.dir, ['send', id, '-'], { input: 'echo from-stdin' });
    await sb('keys', id, 'Enter');
    expect((await sb('wait', id, '--text', '^from-stdin$', '--flags', 'm')).code).toBe(0);

    expect((await sb('resize', id, '90', '25')).code).toBe(0);
    await sb('send', id, 'stty size', '--enter');
    expect((await sb('wait', id, '--text', '^25 90$', '--flags', 'm')).code).toBe(0);

    const screen = await sb('read', id, '--screen');
    expect(screen.stdout.split('\n').length).toBeGreaterThanOrEqual(25);
    await sb('send', id, "printf '\\033[32mgreen\\033[0m\\n'", '--enter');
    await sb('wait', id, '--text', '^green$', '--flags', 'm');
    expect((await sb('read', id, '--ansi')).stdout).toContain('\x1b[0;32mgreen\x1b[0m');

    const ls = await sb('ls');
    expect(ls.stdout).toMatch(/^ID\s+TITLE\s+AGENT\s+STATE\s+PID\s+SIZE\s+COMMAND\n/);
    expect(ls.stdout).toMatch(new RegExp(`${id}\\s+cli-worker\\s+-\\s+running\\s+\\d+\\s+90x25\\s+bash --norc --noprofile`));
    const lsJson = JSON.parse((await sb('ls', '--json')).stdout) as { pane_id: string }[];
    expect(lsJson.map((p) => p.pane_id)).toContain(id);

    expect((await sb('wait', id, '--text', 'never-there', '--timeout', '0.2')).code).toBe(2);

    const killed = await sb('kill', id);
    // An interactive shell ignores TERM but ends on the hangup sent first, as when a terminal closes.
    expect(killed.stdout).toBe(`${id} killed (SIGHUP)\n`);
    expect((await sb('ls')).stdout).toMatch(new RegExp(`${id}\\s+cli-worker\\s+-\\s+(killed|exited)`));
    expect((await sb('rm', id)).code).toBe(0);
    expect((await sb('ls')).stdout).not.toContain(id);
  });

  it('runs a one-word command through the shell', async () => {
    const created = await sb('new', '--cwd', work.dir, '--', 'echo shell-$((7*6)); sleep 30');
    const id = created.stdout.trim();
    expect((await sb('wait', id, '--text', 'shell-42')).code).toBe(0);
    await sb('kill', id, '--rm');
  });

  it('says what went wrong in one line, with a non-zero exit', async () => {
    const missing = await sb('read', 'no-such-pane');
    expect(missing).toMatchObject({ code: 1, stdout: '', stderr: 'switchboard: pane not found: no-such-pane\n' });
    await newShell('twin');
    await newShell('twin');
    const ambiguous = await sb('read', 'twin');
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toMatch(/^switchboard: ambiguous pane 'twin': p[0-9a-f]{8} \(twin\), p[0-9a-f]{8} \(twin\)\n$/);
    const badKey = await sb('keys', 'cli', 'Entr');
    expect(badKey.code).toBe(1);
    const usage = await sb('send');
    expect(usage.code).toBe(64);
    expect(usage).toMatchObject({ stdout: '', stderr: 'switchboard send: missing PANE (see switchboard send --help)\n' });
    const unknown = await sb('frobnicate');
    expect(unknown).toMatchObject({ code: 64, stderr: "switchboard: unknown command 'frobnicate' (see switchboard --help)\n" });
    const elsewhere = tempDir();
    const noDaemon = await runCli(elsewhere.dir, ['ls']);
    elsewhere.cleanup();
    expect(noDaemon).toMatchObject({ code: 1, stderr: 'switchboard: no daemon running: start one with `switchboard up`\n' });
    const help = await sb('--help');
    expect(help.stdout).toContain('switchboard attach PANE');
    const ls = JSON.parse((await sb('ls', '--json')).stdout) as { pane_id: string; title: string }[];
    for (const pane of ls.filter((p) => p.title === 'twin')) await sb('rm', pane.pane_id);
  });

  it('attaches this terminal to a pane: draws it, forwards keys, follows resizes, detaches', async () => {
    const id = await newShell('attach-me');
    const outer = new Screen({ cols: 100, rows: 20, scrollbackRows: 100 });
    const attach = spawnPty(process.execPath, [CLI, '--home', home.dir, 'attach', id], { cols: 100, rows: 20, env: cleanEnv() });
    attach.onData((d) => outer.write(d));
    const exited = new Promise<number>((resolve) => attach.onExit(({ exitCode }) => resolve(exitCode)));
    const onOuter = (predicate: () => boolean, what: string): Promise<void> =>
      until(predicate, what).catch(() => {
        throw new Error(`attach: never saw ${what}; outer screen:\n${outer.screenLines().join('\n')}`);
      });
    await onOuter(() => outer.screenLines().some((l) => l.startsWith('PROMPT$')), 'the prompt');
    const client = await connect({ home: home.dir, env: cleanEnv() });
    try {
      expect((await client.getScreen(id)).cols).toBe(100);
      attach.write('echo through-attach\r');
      await onOuter(() => outer.screenLines().includes('through-attach'), 'typed output');
      expect((await client.getText(id, { lines: 5 })).text).toContain('through-attach');
      attach.resize(80, 15);
      await until(async () => (await client.getScreen(id)).cols === 80, 'the resize');
      expect((await client.getScreen(id)).rows).toBe(15);
      attach.write('\x1d');
      expect(await exited).toBe(0);
      expect((await client.isAlive(id)).alive).toBe(true);
      await client.remove(id);
    } finally {
      client.close();
      outer.dispose();
    }
  });
});

describe('switchboard daemon in the foreground', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('shuts down cleanly on %s and ends its panes', async (signal) => {
    const dir = tempDir('sb-fg-');
    const daemon = spawnCli(dir.dir, ['daemon', '--port', '0']);
    let stdout = '';
    daemon.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    const exited = new Promise<number | null>((resolve) => daemon.on('exit', (code) => resolve(code)));
    await until(() => stdout.includes('listening on'), 'the daemon to listen');
    expect(stdout).toMatch(/switchboard daemon \(pid \d+\) listening on 127\.0\.0\.1:\d+ and /);
    const client = await connect({ home: dir.dir, env: cleanEnv() });
    const pane = await client.createPane({ argv: ['bash', '-c', 'sleep 300 & sleep 301 & wait'], cwd: dir.dir });
    await sleep(200);
    client.close();
    daemon.kill(signal);
    expect(await exited).toBe(0);
    expect(isProcessRunning(pane.pid)).toBe(false);
    expect(existsSync(path.join(dir.dir, 'daemon.json'))).toBe(false);
    expect(existsSync(path.join(dir.dir, 'switchboard.sock'))).toBe(false);
    dir.cleanup();
  });

  it('refuses an output budget outside 1 MiB to 64 GiB with a usage error, before starting, on daemon and on up', async () => {
    const dir = tempDir('sb-outmem-');
    try {
      for (const [command, bad] of [['daemon', '0'], ['daemon', '65537'], ['daemon', 'lots'], ['up', '0']] as const) {
        // `up` checks its daemon's options itself, before starting one in the background.
        const result = await runCli(dir.dir, [command, '--port', '0', '--output-memory', bad]);
        expect(result.code).toBe(64);
        expect(result.stderr).toMatch(/--output-memory (is in MiB, from 1 to 65536|needs a whole number)/);
        expect(existsSync(path.join(dir.dir, 'daemon.json'))).toBe(false);
      }
    } finally {
      dir.cleanup();
    }
  });

  it('logs to the home when started with up, and down stops it and its panes', async () => {
    const dir = tempDir('sb-updown-');
    // Options reach the daemon `up` starts: here the output budget, in MiB.
    expect((await runCli(dir.dir, ['up', '--port', '0', '--output-memory', '20'])).code).toBe(0);
    const info = JSON.parse(readFileSync(path.join(dir.dir, 'daemon.json'), 'utf8')) as { pid: number };
    const created = await runCli(dir.dir, ['new', '--', 'sleep', '300']);
    const client = await connect({ home: dir.dir, env: cleanEnv() });
    expect((await client.info()).output_budget.total_bytes).toBe(20 * 1024 * 1024);
    const pid = (await client.isAlive(created.stdout.trim())).pid ?? 0;
    client.close();
    expect((await runCli(dir.dir, ['down'])).stdout).toBe(`stopped (pid ${info.pid})\n`);
    expect(isProcessRunning(info.pid)).toBe(false);
    expect(isProcessRunning(pid)).toBe(false);
    expect(readFileSync(path.join(dir.dir, 'daemon.log'), 'utf8')).toMatch(/listening/);
    dir.cleanup();
  });
});
