/**
 * Agents leave nothing in the temporary folder (issue 19): a daemon started as `switchboard daemon`
 * with a temporary folder of its own, standing for the system's /tmp, runs Claude Code, Codex,
 * Gemini CLI and OpenCode in panes and headless. Each gets a private folder under the daemon's
 * home, which holds what the CLI left there (OpenCode's unpacked native libraries, Claude Code's
 * per-folder state) while it runs and is gone once it ends; the daemon's temporary folder gains
 * nothing. After a SIGKILL of the daemon, the next start removes the folders its agents left.
 * (Codex's sandbox also keeps an empty /tmp/codex-daemon-<uid> whatever TMPDIR says: it is the
 * mount point that hides Codex's shared daemon socket from sandboxed commands, not the temporary
 * folder, and is not Switchboard's to move or remove.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connect, type SwitchboardClient } from '../../src/index.js';
import { CLI, cleanEnv, runCli } from '../support/cli.js';
import { daemonPidOf, exitOf, killMarked, until, waitForOutput } from '../support/processes.js';
import { AGENT_BIN_DIRS, OPENCODE_PLUGIN_DIR } from './agent-flow.js';
import { RULES, useScriptedModel } from './scripted-model.js';

const AGENTS = ['claude', 'codex', 'gemini', 'opencode'] as const;
const sm = useScriptedModel({ name: 'agent-temp', rules: [RULES.sayHello] });

/** A daemon process whose temporary folder is `systemTemp`, in `home`. */
async function startDaemon(home: string, systemTemp: string): Promise<{ child: ChildProcess; pid: number; client: SwitchboardClient }> {
  const env = { ...cleanEnv(), TMPDIR: systemTemp, TMP: systemTemp, TEMP: systemTemp, SWITCHBOARD_AGENT_PATH: AGENT_BIN_DIRS.join(path.delimiter), SWITCHBOARD_OPENCODE_PLUGIN_DIR: OPENCODE_PLUGIN_DIR };
  const child = spawn(process.execPath, [CLI, '--home', home, 'daemon', '--port', '0', '--no-dashboard', '--log-level', 'info'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  await waitForOutput(child, /listening on/);
  const pid = await daemonPidOf(home);
  return { child, pid, client: await connect({ home, env: cleanEnv() }) };
}

/** The private temporary folder an agent pane's process was given (Linux: its environment). */
function tempFolderOf(pid: number): string {
  const entry = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find((e) => e.startsWith('TMPDIR='));
  return entry?.slice('TMPDIR='.length) ?? '';
}

const homes: string[] = [];
afterAll(async () => {
  for (const home of homes) {
    await runCli(home, ['down']);
    await killMarked(home);
  }
});

describe.runIf(process.platform === 'linux')('an agent\u2019s private temporary folder', { timeout: 300_000 }, () => {
  it('holds what the CLI leaves while it runs, goes when it ends, in a pane and headless; the daemon\u2019s temporary folder gains nothing', async () => {
    const home = sm.tempDir('sb-tmp-home-').dir;
    const systemTemp = sm.tempDir('sb-tmp-system-').dir;
    homes.push(home);
    const { client, pid } = await startDaemon(home, systemTemp);
    const root = path.join(home, 'tmp');
    try {
      const panes = await Promise.all(
        AGENTS.map((agent) => client.createPane({ agent, cwd: sm.tempDir(`sb-tmp-${agent}-work-`).dir, agent_home: sm.tempDir(`sb-tmp-${agent}-home-`).dir, model_url: sm.model.url, ready_timeout_ms: 120_000 })),
      );
      const folders = panes.map((p) => tempFolderOf(p.pid));
      for (const folder of folders) {
        expect(path.dirname(folder)).toBe(root);
        expect(path.basename(folder)).toMatch(new RegExp(`^${pid}-[A-Za-z0-9]{6}$`));
      }
      expect(new Set(folders).size).toBe(AGENTS.length);
      // OpenCode unpacks its native libraries at every start: there, not in the system's folder.
      const opencode = folders[AGENTS.indexOf('opencode')] ?? '';
      expect(readdirSync(opencode).some((name) => name.endsWith('.so'))).toBe(true);
      // Claude Code keeps its per-folder state in CLAUDE_CODE_TMPDIR, moved there too.
      expect(readdirSync(folders[AGENTS.indexOf('claude')] ?? '').some((name) => name.startsWith('claude-'))).toBe(true);
      for (const pane of panes) await client.remove(pane.pane_id);
      for (const folder of folders) await until(() => !existsSync(folder), `${folder} to be removed with its pane`);

      // Headless: one run each, to its end.
      for (const agent of AGENTS) {
        const { session_id } = await client.runAgent({ agent, prompt: 'say hello please', cwd: sm.tempDir(`sb-tmp-${agent}-run-`).dir, agent_home: sm.tempDir(`sb-tmp-${agent}-run-home-`).dir, model_url: sm.model.url });
        await new Promise<void>((resolve) => void client.logSubscribe(session_id, {}, { log_finished: () => resolve() }));
        expect((await client.logGetHistory(session_id)).messages.some((m) => m.msg.type === 'normalized' && m.msg.entry.type === 'assistant_message'), agent).toBe(true);
      }
      expect(readdirSync(root)).toEqual([]);
      expect(readdirSync(systemTemp)).toEqual([]);
    } finally {
      client.close();
    }
  });

  it('left by a daemon killed with SIGKILL is removed when the next one starts, and it says so', async () => {
    const home = sm.tempDir('sb-tmp-crash-home-').dir;
    const systemTemp = sm.tempDir('sb-tmp-crash-system-').dir;
    homes.push(home);
    const first = await startDaemon(home, systemTemp);
    const panes = await Promise.all(
      (['claude', 'opencode'] as const).map((agent) => first.client.createPane({ agent, cwd: sm.tempDir(`sb-tmp-crash-${agent}-`).dir, agent_home: sm.tempDir(`sb-tmp-crash-${agent}-home-`).dir, model_url: sm.model.url, ready_timeout_ms: 120_000 })),
    );
    const folders = panes.map((p) => tempFolderOf(p.pid));
    first.client.close();
    process.kill(first.pid, 'SIGKILL');
    await exitOf(first.child);
    expect(folders.every((f) => existsSync(f))).toBe(true);
    const second = await startDaemon(home, systemTemp);
    try {
      expect((await second.client.info()).recovered).toMatchObject({ daemon_pids: [first.pid], temp_folders: 2 });
      expect(folders.some((f) => existsSync(f))).toBe(false);
      expect(readdirSync(path.join(home, 'tmp'))).toEqual([]);
      expect(readdirSync(systemTemp)).toEqual([]);
    } finally {
      second.client.close();
    }
  });
});
