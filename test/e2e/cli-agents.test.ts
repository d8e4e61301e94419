/**
 * The user's path through the `switchboard` command: a scripted model from `switchboard
 * model-server`, a daemon from `switchboard up`, and each real CLI opened with `switchboard new
 * --agent X`, prompted with `switchboard prompt` and read back with `switchboard wait` and `ls`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { cleanEnv, runCli, spawnCli } from '../support/cli.js';
import { LoopbackGuard } from '../support/loopback-guard.js';
import { tempDir } from '../support/shell.js';
import { AGENT_BIN_DIRS, flowScenario, OPENCODE_PLUGIN_DIR } from './agent-flow.js';

const CLIS = ['claude', 'codex', 'gemini', 'opencode'] as const;

let home: { dir: string; cleanup: () => void };
let modelServer: ChildProcess;
let modelUrl: string;
let modelOutput = '';
const agentEnv = (): NodeJS.ProcessEnv => ({
  ...cleanEnv(),
  SWITCHBOARD_AGENT_PATH: AGENT_BIN_DIRS.join(path.delimiter),
  SWITCHBOARD_OPENCODE_PLUGIN_DIR: OPENCODE_PLUGIN_DIR,
});
const sb = (...args: string[]) => runCli(home.dir, args, { env: agentEnv(), timeoutMs: 90_000 });

beforeAll(async () => {
  home = tempDir('sb-cli-agents-home-');
  const scenarioFile = path.join(home.dir, 'scenario.json');
  writeFileSync(scenarioFile, JSON.stringify(flowScenario(400)));
  modelServer = spawnCli(home.dir, ['model-server', '--scenario', scenarioFile, '--port', '0']);
  modelServer.stdout?.setEncoding('utf8').on('data', (chunk: string) => (modelOutput += chunk));
  modelUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`model-server did not start: ${modelOutput}`)), 15_000);
    modelServer.stdout?.on('data', () => {
      const url = /at (http:\/\/127\.0\.0\.1:\d+)/.exec(modelOutput)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve(url);
      }
    });
  });
  const up = await sb('up', '--port', '0');
  expect(up.code, up.stderr).toBe(0);
});

afterAll(async () => {
  await sb('down');
  if (modelServer.exitCode === null) {
    const exited = new Promise((resolve) => modelServer.once('exit', resolve));
    modelServer.kill('SIGTERM');
    await exited;
  }
  home.cleanup();
});

describe('switchboard new --agent, with the real CLIs', () => {
  it('lists every built-in agent with the program it found', async () => {
    const listed = await sb('agents', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    const agents = JSON.parse(listed.stdout) as { name: string; builtin: boolean; binary: string | null }[];
    expect(agents.map((a) => a.name)).toEqual(expect.arrayContaining([...CLIS, 'aider', 'shell']));
    for (const name of CLIS) expect(agents.find((a) => a.name === name)?.binary).toContain(path.join('test', 'agent-clis'));
  });

  it.each(CLIS)('%s: opens a pane ready at the idle prompt, takes a prompt, and shows the reply', { timeout: 180_000 }, async (name) => {
    const agentHome = tempDir(`sb-cli-${name}-home-`);
    const work = tempDir(`sb-cli-${name}-work-`);
    let id: string | undefined;
    try {
      const created = await sb('new', '--agent', name, '--cwd', work.dir, '--agent-home', agentHome.dir, '--model-url', modelUrl);
      expect(created.code, created.stderr).toBe(0);
      id = created.stdout.trim();
      expect(id).toMatch(/^p[0-9a-f]{8}$/);
      expect(created.stderr).toMatch(new RegExp(`^${name} \\d+\\.\\d+\\.\\d+ ready in \\d+ ms`));
      const guard = new LoopbackGuard(id);
      try {
        const ls = await sb('ls');
        expect(ls.stdout).toMatch(new RegExp(`${id}\\s+\\S+\\s+${name}\\s+running`));

        const prompted = await sb('prompt', id, 'say hello please');
        expect(prompted.code, prompted.stderr).toBe(0);
        const waited = await sb('wait', id, '--text', 'Hello from the scripted model', '--timeout', '60');
        // On failure, show the screen: the one thing that tells why a CLI did not answer.
        if (waited.code !== 0) expect.fail(`${waited.stderr}\nscreen:\n${(await sb('read', id, '--screen')).stdout}`);
        expect((await sb('read', id)).stdout).toContain('Hello from the scripted model.');
      } finally {
        guard.stop();
      }
      expect(guard.outside).toEqual([]);
      expect(guard.seen.length).toBeGreaterThan(0);
    } finally {
      if (id) expect((await sb('rm', id)).code).toBe(0);
      agentHome.cleanup();
      work.cleanup();
    }
  });

  it('serves the scripted model from the command line and counts what it served', async () => {
    const exited = new Promise((resolve) => modelServer.once('exit', resolve));
    modelServer.kill('SIGTERM');
    expect(await exited).toBe(0);
    const served = Number(/served (\d+) requests/.exec(modelOutput)?.[1]);
    // Four CLIs each sent at least their prompt's request.
    expect(served).toBeGreaterThanOrEqual(CLIS.length);
  });
});
