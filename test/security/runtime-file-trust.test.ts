/**
 * Item 6 of issue 21 (and item 11's warning): the runtime-file trust rule lived only in the
 * TypeScript client. `switchboard tmux`, the Node `tmux` launcher and the Python client used a
 * daemon.json of mode 0666 or a symbolic link, and 0644 was taken silently everywhere. One rule in
 * every reader now (the C launcher included): a link, a file others can write, not the user's or
 * in a folder others can write is refused, naming the file and what is wrong; a file others can
 * only read is used with one warning on stderr saying `chmod 600`. Also item 6: a tmux command that
 * starts no server sends the daemon only the variables tmux itself takes from a client, never the
 * caller's API keys.
 */
import { execFile } from 'node:child_process';
import { chmodSync, renameSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TmuxService, type TmuxRequest } from '../../src/tmux/service.js';
import { useTestDaemon } from '../support/daemon.js';
import { cleanEnv, runCli, type CliResult } from '../support/cli.js';
import { tempDir } from '../support/shell.js';

const t = useTestDaemon();
const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const NODE_LAUNCHER = path.join(root, 'dist', 'cli', 'tmux', 'tmux-main.js');
const PYTHON_PACKAGE = path.join(root, 'clients', 'python');
const bin = tempDir('sb-trust-bin-');
const SECRET = 'sk-test-0123456789-do-not-send';

function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(file, args, { env, cwd: t.work, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
    child.stdin?.end();
  });
}

const readerEnv = (): NodeJS.ProcessEnv => ({ ...cleanEnv(), SWITCHBOARD_HOME: t.home, SB_TEST_API_KEY: SECRET });
const socket = (): string => path.join(t.work, 'trust.sock');
const PYTHON_CALL = 'import sys; sys.path.insert(0, sys.argv[1]); from switchboard_client import SwitchboardRPCClient as C; c = C(home=sys.argv[2]); print("version", c.call("info")["version"])';

/** Every reader of the runtime file, doing one thing that needs the daemon. */
const READERS: Record<string, () => Promise<CliResult>> = {
  'the CLI': () => runCli(t.home, ['status']),
  '`switchboard tmux`': () => runCli(t.home, ['tmux', '-S', socket(), 'list-sessions'], { env: readerEnv() }),
  'the Node launcher': () => run(process.execPath, [NODE_LAUNCHER, '-S', socket(), 'list-sessions'], readerEnv()),
  'the C launcher': () => run(path.join(bin.dir, 'tmux'), ['-S', socket(), 'list-sessions'], readerEnv()),
  'the Python client': () => run('python3', ['-c', PYTHON_CALL, PYTHON_PACKAGE, t.home], readerEnv()),
};

const file = (): string => path.join(t.home, 'daemon.json');

// The daemon runs in this process: whatever calls it runs asynchronously, never with execFileSync.
beforeAll(async () => {
  expect((await runCli(t.home, ['compat', 'install', '--dir', bin.dir])).code).toBe(0);
  // A tmux server in the namespace the readers list, started with a trusted file.
  expect((await run(process.execPath, [NODE_LAUNCHER, '-S', socket(), 'new-session', '-d', '-s', 'keep', 'sleep 600'], readerEnv())).code).toBe(0);
});

afterAll(async () => {
  vi.restoreAllMocks();
  await run(process.execPath, [NODE_LAUNCHER, '-S', socket(), 'kill-server'], readerEnv());
  bin.cleanup();
});

describe.runIf(process.platform === 'linux')('the runtime file, in every reader', () => {
  it('is used silently when it is the daemon\u2019s own (0600)', async () => {
    for (const [reader, read] of Object.entries(READERS)) {
      const result = await read();
      expect(result.code, `${reader}: ${result.stderr}`).toBe(0);
      expect(result.stderr, reader).toBe('');
    }
  });

  it('is refused when others can write it (0666), naming the file and the mode', async () => {
    chmodSync(file(), 0o666);
    try {
      for (const [reader, read] of Object.entries(READERS)) {
        const result = await read();
        expect(result.code, reader).not.toBe(0);
        expect(result.stderr, reader).toMatch(/refusing to trust the runtime file: .*daemon\.json can be written by other users \(mode 666\)/);
      }
    } finally {
      chmodSync(file(), 0o600);
    }
  });

  it('is refused when it is a symbolic link', async () => {
    const real = path.join(t.home, 'elsewhere.json');
    renameSync(file(), real);
    symlinkSync(real, file());
    try {
      for (const [reader, read] of Object.entries(READERS)) {
        const result = await read();
        expect(result.code, reader).not.toBe(0);
        expect(result.stderr, reader).toMatch(/refusing to trust the runtime file: .*daemon\.json is a symbolic link/);
      }
    } finally {
      renameSync(real, file());
    }
  });

  it('is used with one warning when others can read it (0644): the token is exposed', async () => {
    chmodSync(file(), 0o644);
    try {
      for (const [reader, read] of Object.entries(READERS)) {
        const result = await read();
        expect(result.code, `${reader}: ${result.stderr}`).toBe(0);
        const warnings = result.stderr.split('\n').filter((line) => line.includes('can be read by other users'));
        expect(warnings, `${reader}: ${result.stderr}`).toHaveLength(1);
        expect(warnings[0], reader).toContain(file());
        expect(warnings[0], reader).toContain(`chmod 600 ${file()}`);
      }
    } finally {
      chmodSync(file(), 0o600);
    }
  });
});

describe.runIf(process.platform === 'linux')('the environment a tmux command sends', () => {
  it('carries no API key on a command that starts no server, and the whole environment on one that does', async () => {
    const seen: TmuxRequest[] = [];
    const service = await t.daemon.services.tmux.get();
    const original = service.run.bind(service);
    const spy = vi.spyOn(service, 'run').mockImplementation((...args: Parameters<TmuxService['run']>) => {
      seen.push(args[0]);
      return original(...args);
    });
    const env = { ...readerEnv(), TERM: 'xterm-256color', DISPLAY: ':7' };
    const callers = {
      'the Node launcher': (args: string[]) => run(process.execPath, [NODE_LAUNCHER, ...args], env),
      'the C launcher': (args: string[]) => run(path.join(bin.dir, 'tmux'), args, env),
      '`switchboard tmux`': (args: string[]) => runCli(t.home, ['tmux', ...args], { env }),
    };
    try {
      for (const [caller, call] of Object.entries(callers)) {
        seen.length = 0;
        expect((await call(['-S', socket(), 'list-sessions'])).code, caller).toBe(0);
        expect(seen, caller).toHaveLength(1);
        const sent = seen[0]?.env ?? {};
        expect(sent.SB_TEST_API_KEY, caller).toBeUndefined();
        expect(Object.values(sent).join('\n'), caller).not.toContain(SECRET);
        // What tmux itself takes from a client is still there.
        expect(sent.TERM, caller).toBe('xterm-256color');
        expect(sent.DISPLAY, caller).toBe(':7');
        // A command that starts a server gives it the environment, as tmux's does.
        seen.length = 0;
        const fresh = path.join(t.work, `fresh-${caller.replace(/\W/g, '')}.sock`);
        expect((await call(['-S', fresh, 'new-session', '-d', '-s', 'one', 'sleep 600'])).code, caller).toBe(0);
        expect(seen[0]?.env.SB_TEST_API_KEY, caller).toBe(SECRET);
        expect((await call(['-S', fresh, 'kill-server'])).code, caller).toBe(0);
      }
    } finally {
      spy.mockRestore();
    }
  });
});
