/**
 * Item 1 of issue 21, the launchers' and clients' side: inside an agent pane (token scopes read,
 * ask) the `tmux` launcher read daemon.json itself and called `tmux_command` with the owner's
 * token, so `tmux new-session -d "touch FILE"` from an agent ran as the owner. Every launcher and
 * client inside a pane now calls with the pane's own token, from the pane's variables, and a pane
 * whose token is not in its environment is refused rather than given the runtime file's.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Grant } from '../../src/api/authorize.js';
import { useTestDaemon } from '../support/daemon.js';
import { CLI, runCli } from '../support/cli.js';
import { tempDir } from '../support/shell.js';

const t = useTestDaemon();
const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const NODE_LAUNCHER = path.join(root, 'dist', 'cli', 'tmux', 'tmux-main.js');
const PYTHON_PACKAGE = path.join(root, 'clients', 'python');
const bin = tempDir('sb-pane-bin-');
const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** The ways a program in a pane calls the daemon's tmux front end. */
const LAUNCHERS: Record<string, string> = {
  'the Node launcher': `${q(process.execPath)} ${q(NODE_LAUNCHER)}`,
  'the C launcher': q(path.join(bin.dir, 'tmux')),
  '`switchboard tmux`': `${q(process.execPath)} ${q(CLI)} tmux`,
};

let grants: Grant[] = [];
let runs = 0;

beforeAll(async () => {
  // The daemon runs in this process: whatever calls it runs asynchronously.
  expect((await runCli(t.home, ['compat', 'install', '--dir', bin.dir])).code).toBe(0);
  const tokens = t.daemon.tokens;
  const resolve = tokens.resolve.bind(tokens);
  vi.spyOn(tokens, 'resolve').mockImplementation((presented) => {
    const grant = resolve(presented);
    if (grant) grants.push(grant);
    return grant;
  });
});

afterAll(() => {
  vi.restoreAllMocks();
  bin.cleanup();
});

/**
 * Runs `command` (a shell line) in an agent-like pane (scopes read and ask) whose home is the
 * daemon's, so that daemon.json is right there to be read; resolves with what it printed.
 */
async function inPane(command: string): Promise<{ paneId: string; code: number; stdout: string; stderr: string }> {
  const dir = path.join(t.work, `run-${++runs}`);
  const script = `mkdir -p ${q(dir)}; cd ${q(t.work)}; ${command} >${q(path.join(dir, 'out'))} 2>${q(path.join(dir, 'err'))}; echo $? >${q(path.join(dir, 'code'))}`;
  grants = [];
  const pane = t.daemon.panes.create({ argv: ['bash', '-c', script], env: { SWITCHBOARD_HOME: t.home }, scopes: ['read', 'ask'], cwd: t.work });
  await pane.waitForExit();
  const read = (name: string): string => readFileSync(path.join(dir, name), 'utf8');
  const result = { paneId: pane.id, code: Number(read('code').trim()), stdout: read('out'), stderr: read('err') };
  await t.daemon.panes.remove(pane.id, { graceMs: 500 });
  return result;
}

describe.runIf(process.platform === 'linux')('a program in an agent pane', () => {
  it('calls tmux_command with its pane\u2019s token, never the owner\u2019s, whichever launcher it runs', async () => {
    for (const [launcher, run] of Object.entries(LAUNCHERS)) {
      const marker = path.join(t.work, `owned-${launcher.replace(/\W/g, '')}`);
      const result = await inPane(`${run} -S ${q(path.join(t.work, 'pane.sock'))} new-session -d -s x ${q(`touch ${marker}`)}`);
      expect(grants.length, `${launcher}: ${result.stderr}`).toBeGreaterThan(0);
      // The daemon saw the pane's grant, and only that.
      for (const grant of grants) expect({ launcher, owner: grant.owner, pane: grant.paneId }).toEqual({ launcher, owner: false, pane: result.paneId });
      expect(result.code, launcher).not.toBe(0);
      expect(result.stderr, launcher).toMatch(new RegExp(`forbidden: the token of pane ${result.paneId} may not`));
      expect(existsSync(marker), launcher).toBe(false);
    }
  });

  it('is refused, and never handed the runtime file\u2019s token, when its pane\u2019s token is not in its environment', async () => {
    const withoutToken = 'env -u SWITCHBOARD_RPC_TOKEN -u ENSO_RPC_TOKEN';
    const callers: Record<string, string> = {
      ...Object.fromEntries(Object.entries(LAUNCHERS).map(([name, run]) => [name, `${withoutToken} ${run} -S ${q(path.join(t.work, 'pane.sock'))} list-sessions`])),
      'the CLI': `${withoutToken} ${q(process.execPath)} ${q(CLI)} status`,
      'the Python client': `${withoutToken} python3 -c ${q('import sys; sys.path.insert(0, sys.argv[1]); from switchboard_client import SwitchboardRPCClient as C; print(C().call("info"))')} ${q(PYTHON_PACKAGE)}`,
    };
    for (const [caller, command] of Object.entries(callers)) {
      const result = await inPane(command);
      expect(result.code, `${caller}: ${result.stdout}`).not.toBe(0);
      expect(result.stderr, caller).toMatch(new RegExp(`inside pane ${result.paneId} but its token \\(SWITCHBOARD_RPC_TOKEN\\) is not in the environment; refusing to use the runtime file`));
      expect(grants, caller).toEqual([]);
    }
  });

  it('with an explicit home, reads that home\u2019s runtime file, and the daemon still holds it to its pane\u2019s grant', async () => {
    const withoutToken = 'env -u SWITCHBOARD_RPC_TOKEN -u ENSO_RPC_TOKEN';
    const marker = path.join(t.work, 'made-with-home');
    const callers: Record<string, string> = {
      'the CLI with --home': `${withoutToken} ${q(process.execPath)} ${q(CLI)} --home ${q(t.home)} new -- touch ${q(marker)}`,
      'the Python client with home': `${withoutToken} python3 -c ${q('import sys; sys.path.insert(0, sys.argv[1]); from switchboard_client import SwitchboardRPCClient as C; print(C(home=sys.argv[2]).call("create_pane", {"command": "touch " + sys.argv[3]}))')} ${q(PYTHON_PACKAGE)} ${q(t.home)} ${q(marker)}`,
    };
    for (const [caller, command] of Object.entries(callers)) {
      const result = await inPane(command);
      // The runtime file's token is the owner's; what the pane's program gets with it is the pane's grant.
      expect(grants.map((g) => g.owner), caller).toContain(true);
      expect(result.code, caller).not.toBe(0);
      expect(result.stderr, caller).toMatch(new RegExp(`forbidden: the token of pane ${result.paneId} may not call create_pane`));
      expect(existsSync(marker), caller).toBe(false);
    }
  });
});
