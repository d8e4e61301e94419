/**
 * CCB 8.6.10's start-ask-kill sequence, replayed through the `tmux` launcher that `switchboard
 * compat install` puts on PATH, with CCB's environment (no SWITCHBOARD_* variables, HOME
 * rewritten). The command lines are the ones recorded from CCB 8.6.10 against tmux 3.3a
 * (shared/reference/tmux-compat.md; CCB's own scripts are stand-ins that log their arguments):
 * a namespace (-S), a session with pane-border-status top, the mouse bindings and hooks CCB makes
 * at every start, a split, a real Codex and a real Claude Code respawned into the panes against the
 * scripted model, CCB 8's readiness reads, then for each CLI an ask as CCB 6 and 8 deliver it
 * (load-buffer from stdin, paste-buffer -p, Enter, delete-buffer, polling until the answer shows),
 * a resize that runs CCB's sidebar hook, and kill-server twice. Every line must answer as tmux does,
 * each answer must end up in its CLI's own transcript, and the panes must be ordinary Switchboard
 * panes. The first-run dialogs that only acknowledge (Claude Code's folder trust) are answered by
 * the daemon's policy, where CCB on real tmux waits on them; the test answers only the one the
 * policy leaves to a person (use the API key found in the environment).
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type SwitchboardClient } from '../../src/client/index.js';
import { AgentCatalog, detectScreen, findAgentBinary, menuChoiceFor, nextMenuKey, decideDialog, type AgentProfile, type FirstRunPolicy } from '../../src/agents/index.js';
import { useTestDaemon } from '../support/daemon.js';
import { CLI, cleanEnv } from '../support/cli.js';
import { LoopbackGuard } from '../support/loopback-guard.js';
import { sleep } from '../support/shell.js';
import { AGENT_BIN_DIRS } from './agent-flow.js';
import { RULES, useScriptedModel } from './scripted-model.js';
import { until } from '../support/processes.js';

const t = useTestDaemon();
const sm = useScriptedModel({ name: 'ccb8', rules: [RULES.sayHello] });
let client: SwitchboardClient;
let bin: string;
let socket: string;
/** CCB's daemon environment: PATH with the launcher first, a rewritten HOME, a shell; nothing of Switchboard's. */
let ccbEnv: Record<string, string>;

const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** Runs the installed `tmux` as CCB does: one process per command. */
function tmux(args: string[], stdin?: string): Promise<{ stdout: string; stderr: string; code: number }> {
  return new Promise((resolve) => {
    const child = execFile(path.join(bin, 'tmux'), ['-S', socket, ...args], { env: ccbEnv, cwd: t.work, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ stdout, stderr, code: err ? (typeof err.code === 'number' ? err.code : 1) : 0 });
    });
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(stdin ?? '');
  });
}

async function tmuxOk(args: string[], stdin?: string): Promise<string> {
  const out = await tmux(args, stdin);
  expect(out.stderr, `tmux ${args.join(' ')}`).toBe('');
  expect(out.code, `tmux ${args.join(' ')}`).toBe(0);
  return out.stdout;
}

/** The screen as CCB reads it. */
async function screen(pane: string): Promise<string[]> {
  return (await tmuxOk(['capture-pane', '-t', pane, '-p'])).replace(/\n$/, '').split('\n');
}

/** The dialogs the test itself answered, by id. */
const answeredByTest: string[] = [];

/**
 * Polls the pane (as CCB polls) until its CLI sits at its idle prompt. The daemon answers the
 * first-run dialogs that only acknowledge; the one it leaves to a person here, Claude Code's "use
 * this API key?", the test answers with send-keys as the user would (yes: it is the sandbox's key).
 */
async function untilIdle(profile: AgentProfile, pane: string, what: string, done: (lines: string[]) => boolean = () => true): Promise<string[]> {
  const screens = profile.screensFor(undefined);
  const policy: FirstRunPolicy = { trustFolder: true, useEnvApiKey: true, keepCurrentModel: true, tryNewFeatures: false, keepRetrying: false };
  const deadline = Date.now() + 120_000;
  let lines: string[] = [];
  while (Date.now() < deadline) {
    expect((await tmuxOk(['display-message', '-p', '-t', pane, '#{pane_dead}'])).trim(), `${what}: the CLI exited; screen:\n${lines.join('\n')}`).toBe('0');
    lines = await screen(pane);
    const detection = detectScreen(screens, { lines });
    if (detection.kind === 'dialog' && detection.dialog?.decides === 'use_env_api_key') {
      const dialog = detection.dialog;
      answeredByTest.push(dialog.id);
      const choice = menuChoiceFor(dialog, decideDialog(dialog, policy));
      const keys = choice ? [nextMenuKey(choice, lines)] : (dialog[decideDialog(dialog, policy)] as string[]);
      for (const key of keys) await tmuxOk(['send-keys', '-t', pane, key]);
      // A dialog redraws after each key: look again once it has.
      await sleep(300);
      continue;
    }
    if (detection.kind === 'idle' && done(lines)) return lines;
    await sleep(200);
  }
  throw new Error(`${what}: never idle (last: ${detectScreen(screens, { lines }).kind}); screen:\n${lines.join('\n')}`);
}

/** Every file under `dir` whose name matches. */
function filesUnder(dir: string, name: RegExp): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => path.join(dir, f))
    .filter((f) => name.test(path.basename(f)) && statSync(f).isFile());
}

beforeAll(async () => {
  client = await connect({ home: t.home, env: {} });
  bin = path.join(t.work, 'bin');
  // Installed as a user installs it (the built CLI); the test daemon's home is built in.
  execFileSync(process.execPath, [CLI, '--home', t.home, 'compat', 'install', '--dir', bin], { env: cleanEnv() });
  socket = path.join(t.work, 'proj', '.ccb', 'ccbd', 'tmux.sock');
  execFileSync('mkdir', ['-p', path.dirname(socket)]);
  ccbEnv = { PATH: `${bin}${path.delimiter}/usr/local/bin:/usr/bin:/bin`, HOME: path.join(t.work, 'ccb-home'), SHELL: '/bin/bash', LANG: 'C.UTF-8', TERM: 'xterm-256color' };
});

afterAll(async () => {
  await tmux(['kill-server']);
  client.close();
});

/** A stand-in for one of CCB's scripts: logs its arguments, one line a run. */
function standIn(file: string, log: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `#!/bin/sh\necho "$*" >> ${shq(log)}\n`, { mode: 0o755 });
}

/** Lines a stand-in logged. */
function logged(log: string): string[] {
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((l) => l !== '') : [];
}

/** CCB's pane command for an agent CLI in a scripted sandbox: a login shell, its exports, the CLI. */
function agentCommand(profile: AgentProfile, home: string, cwd: string, edit?: (home: string) => void): string {
  const additions = profile.prepareSandbox({ home, modelUrl: sm.model.url, cwd, env: {} });
  edit?.(home);
  const binary = findAgentBinary(profile.data, { PATH: AGENT_BIN_DIRS.join(path.delimiter) }, AGENT_BIN_DIRS);
  if (!binary) throw new Error(`${profile.data.name} is not installed (npm run test installs it)`);
  // Claude Code clones its plugin marketplace from GitHub at start unless told not to (found with
  // strace: a DNS query the loopback guard catches); CCB users' setups are theirs, the test stays offline.
  const offline: Record<string, string> = profile.data.name === 'claude' ? { CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL: '1' } : {};
  const vars: Record<string, string> = { ...profile.data.env, ...additions.env, ...offline, HOME: home, CI: 'false' };
  const exports = Object.entries(vars)
    .map(([k, v]) => `export ${k}=${shq(v)}`)
    .join('; ');
  const cli = [binary, ...profile.data.interactive_args, ...additions.args].map(shq).join(' ');
  return `/bin/bash -l -c ${shq(`${exports}; ${cli}`)}`;
}

describe("CCB 8's start, asks to Codex and Claude Code, and kill through the tmux front end", () => {
  it('every line answers as tmux does, the hooks run as on tmux, each answer is in its CLI transcript, kill-server twice', async () => {
    const session = 'ccb-proj-1234abcd';
    const dir = path.join(t.work, 'proj');
    // CCB's scripts, as its hooks name them.
    const ccb = path.join(t.work, 'ccb-install');
    const sidebarLog = path.join(t.work, 'sidebar.log');
    const borderLog = path.join(t.work, 'border.log');
    standIn(path.join(ccb, 'ccb'), sidebarLog);
    standIn(path.join(ccb, 'config', 'ccb-border.sh'), borderLog);

    // Start: no server yet, then the session CCB makes and decorates.
    expect(await tmux(['has-session', '-t', session])).toMatchObject({ code: 1, stderr: expect.stringMatching(/^(no server running on|error connecting to) /) as unknown });
    await tmuxOk(['start-server']);
    await tmuxOk(['new-session', '-d', '-x', '160', '-y', '48', '-s', session, '-n', 'main', '-c', dir]);
    // The -S path is a socket while the server runs, as tools that look for a running server expect.
    expect(statSync(socket).isSocket()).toBe(true);
    await tmuxOk(['set-option', '-t', session, 'remain-on-exit', 'on', ';', 'set-option', '-t', session, '@ccb_project_id', '1234abcd', ';', 'set-option', '-t', session, 'mouse', 'on']);
    // CCB 8 retries a binding tmux refuses for about 3 s at every start: each must be taken at once.
    await tmuxOk(['bind-key', '-T', 'root', 'MouseDown1Pane', 'select-pane -t = ; send-keys -M']);
    await tmuxOk(['bind-key', '-T', 'root', 'MouseDrag1Border', 'resize-pane', '-M']);
    await tmuxOk(['bind-key', '-T', 'copy-mode-vi', 'MouseDragEnd1Pane', 'send-keys', '-X', 'copy-pipe-and-cancel', "sh -lc 'cat > /dev/null'"]);
    await tmuxOk(['bind-key', '-T', 'root', 'WheelUpPane', 'if-shell -F -t = "#{mouse_any_flag}" "send-keys -M" "copy-mode -e"']);
    await tmuxOk(['set-window-option', '-t', session, 'pane-border-status', 'top']);
    const sidebar = (source: string): string =>
      `run-shell -b 'current_session="#{session_name}"; [ "$current_session" = ${session} ] || exit 0; guard=$(tmux -S ${socket} show-option -qv -t ${session} @ccb_sidebar_sync_guard 2>/dev/null || true); [ "$guard" = "1" ] && exit 0; ${ccb}/ccb __sidebar-resize-sync --tmux-socket ${socket} --session ${session} ${source}'`;
    await tmuxOk(['set-hook', '-t', session, 'after-resize-pane', sidebar('--source-pane "#{pane_id}"')]);
    await tmuxOk(['set-hook', '-g', 'window-resized', sidebar('--source-window "#{window_id}"')]);
    await tmuxOk(['set-hook', '-t', session, 'after-select-pane', `run-shell "${ccb}/config/ccb-border.sh \\"#{pane_id}\\""`]);
    // tmux keeps the hook's text as given: `$` printed escaped, never expanded when it was set.
    expect(await tmuxOk(['show-hooks', '-t', session])).toContain('[ \\"\\$current_session\\" = ccb-proj-1234abcd ]');

    const first = (await tmuxOk(['display-message', '-p', '-t', session, '#{pane_id}'])).trim();
    const second = (await tmuxOk(['split-window', '-h', '-l', '80', '-t', first, '-c', dir, '-P', '-F', '#{pane_id}'])).trim();
    expect([first, second]).toEqual(['%0', '%1']);

    const catalog = new AgentCatalog();
    const panes = { codex: first, claude: second } as const;
    const homes: Record<string, string> = {};
    for (const agent of ['codex', 'claude'] as const) {
      const home = sm.tempDir(`ccb-${agent}-home-`).dir;
      homes[agent] = home;
      await tmuxOk(['respawn-pane', '-k', '-t', panes[agent], '-c', dir, agentCommand(catalog.get(agent), home, dir)]);
      // Titles set with select-pane -T run no after-select-pane hook on tmux 3.3a.
      await tmuxOk(['select-pane', '-t', panes[agent], '-T', `CCB-${agent}`, ';', 'set-option', '-p', '-t', panes[agent], '@ccb_agent', agent]);
    }
    // CCB focuses the first pane: that select runs the border script, once, on that pane.
    await tmuxOk(['select-pane', '-t', first]);
    await until(() => logged(borderLog).length > 0, 'the border script to run');

    // CCB 8's readiness reads: the geometry (the border status line takes the top row), the cursor.
    expect(await tmuxOk(['list-panes', '-a', '-t', session, '-F', '#{pane_id}\t#{pane_left}\t#{pane_top}\t#{pane_width}\t#{pane_height}'])).toBe('%0\t0\t1\t79\t47\n%1\t80\t1\t80\t47\n');
    expect(await tmuxOk(['display-message', '-p', '-t', second, '#{pane_height}'])).toBe('47\n');

    // Ordinary Switchboard panes: listed under their tmux session and window, recognized as agents.
    const listed = (await client.list()).panes.filter((p) => p.tmux?.socket === socket);
    expect(listed.map((p) => [p.tmux?.pane, p.tmux?.session, p.tmux?.window, p.agent?.name]).sort()).toEqual([
      ['%0', session, 'main', 'codex'],
      ['%1', session, 'main', 'claude'],
    ]);
    expect(listed.map((p) => p.title).sort()).toEqual([`${session}:main.0 CCB-codex`, `${session}:main.1 CCB-claude`]);
    const guards = listed.map((p) => new LoopbackGuard(p.pane_id));
    try {
      for (const agent of ['codex', 'claude'] as const) {
        const profile = catalog.get(agent);
        const pane = panes[agent];
        await untilIdle(profile, pane, `${agent} start`);
        // Claude Code asks to trust the folder (its sandbox says nothing of it), and records the
        // answer: the daemon gave it by policy, where CCB on real tmux waits; the test answered
        // only the API key question.
        if (agent === 'claude') {
          // Claude Code may write its state a moment after its prompt shows.
          const trusted = (): boolean | undefined => {
            try {
              return (JSON.parse(readFileSync(path.join(homes.claude ?? '', '.claude.json'), 'utf8')) as { projects?: Record<string, { hasTrustDialogAccepted?: boolean }> }).projects?.[dir]?.hasTrustDialogAccepted;
            } catch {
              return undefined;
            }
          };
          await until(() => trusted() === true, 'Claude Code to record the folder trusted').catch(() => undefined);
          expect(trusted()).toBe(true);
        }
        expect(answeredByTest.filter((id) => id !== 'use_api_key')).toEqual([]);
        // CCB 8 reads the cursor and the last 120 lines before it delivers (Codex: its `›` prompt).
        expect(await tmuxOk(['display-message', '-p', '-t', pane, '#{cursor_x}|#{cursor_y}|#{pane_height}'])).toMatch(/^\d+\|\d+\|47\n$/);
        if (agent === 'codex') expect(await tmuxOk(['capture-pane', '-t', pane, '-p', '-S', '-120'])).toContain('›');
        // The ask, as CCB delivers it.
        const requestId = `req-${agent}-0001`;
        const buffer = `ccb-${requestId}`;
        await tmuxOk(['display-message', '-p', '-t', pane, '#{pane_in_mode}']);
        await tmuxOk(['load-buffer', '-b', buffer, '-'], `CCB_REQ_ID: ${requestId} say hello please`);
        await tmuxOk(['paste-buffer', '-p', '-t', pane, '-b', buffer]);
        // CCB pauses half a second here; the test waits for the paste to be on screen instead.
        await until(async () => (await screen(pane)).some((l) => l.includes(requestId)), `the request ${requestId} on screen`);
        await tmuxOk(['send-keys', '-t', pane, 'Enter']);
        await tmuxOk(['delete-buffer', '-b', buffer]);
        await untilIdle(profile, pane, `${agent} reply`, (lines) => lines.some((l) => l.includes('Hello from the scripted model.')));
        const captured = await tmuxOk(['capture-pane', '-t', pane, '-p', '-S', '-120']);
        expect(captured).toContain('Hello from the scripted model.');
      }

      // Each CLI has a private temporary folder under the daemon's home, as every agent it starts has
      // (Claude Code's own variable for it too), so what they leave there goes with them. Read once both
      // have answered: a pane respawned a moment ago may still be in its exec chain, its environment empty.
      for (const p of listed) {
        const environ = readFileSync(`/proc/${p.pid}/environ`, 'utf8').split('\0');
        const temp = environ.find((e) => e.startsWith('TMPDIR='))?.slice('TMPDIR='.length) ?? '';
        expect(path.dirname(temp), p.title).toBe(path.join(t.home, 'tmp'));
        if (p.agent?.name === 'claude') expect(environ).toContain(`CLAUDE_CODE_TMPDIR=${temp}`);
      }
      // Each CLI's own transcript holds the answer, under its anchor: CCB reads replies there, and a CLI
      // may write its transcript a moment after the screen shows the reply, so read until it is there.
      const transcript = async (dir: string, name: RegExp, wanted: string[]): Promise<string> => {
        let text = '';
        // Until the transcript holds it all; what is missing then shows in the expectations below.
        await until(() => {
          text = filesUnder(dir, name).map((f) => readFileSync(f, 'utf8')).join('\n');
          return wanted.every((w) => text.includes(w));
        }, `${wanted.join(', ')} in ${dir}`).catch(() => undefined);
        return text;
      };
      const codexLog = await transcript(path.join(homes.codex ?? '', '.codex', 'sessions'), /^rollout-.*\.jsonl$/, ['Hello from the scripted model.', 'task_complete']);
      expect(codexLog).toContain('CCB_REQ_ID: req-codex-0001');
      expect(codexLog).toContain('Hello from the scripted model.');
      expect(codexLog).toContain('task_complete');
      const claudeLog = await transcript(path.join(homes.claude ?? '', '.claude', 'projects'), /\.jsonl$/, ['CCB_REQ_ID: req-claude-0001', 'Hello from the scripted model.']);
      expect(claudeLog).toContain('CCB_REQ_ID: req-claude-0001');
      expect(claudeLog).toContain('Hello from the scripted model.');

      // The dashboard's view: both panes tracked as agents, idle after their turn.
      // The tracker calls an agent idle once its prompt has held still: wait for that, not a fixed time.
      const tracked = async (): Promise<string[]> => (await client.paneStates()).states.filter((s) => listed.some((p) => p.pane_id === s.pane_id)).map((s) => s.state).sort();
      await until(async () => (await tracked()).join() === 'idle,idle', 'both panes idle');
      expect(await tracked()).toEqual(['idle', 'idle']);
      guards.forEach((guard, i) => {
        guard.stop();
        expect(guard.outside, `${listed[i]?.agent?.name ?? '?'} talked to`).toEqual([]);
      });
      expect(guards.some((g) => g.seen.some((a) => a.endsWith(`:${sm.model.port}`)))).toBe(true);
    } finally {
      for (const guard of guards) guard.stop();
    }

    // A resize runs CCB's sidebar hook: `$current_session` reached the shell as written, the
    // formats were expanded for the resized pane, and the guard read back through the front end.
    await tmuxOk(['resize-pane', '-t', first, '-x', '100']);
    await until(() => logged(sidebarLog).length > 0, 'the sidebar hook to run');
    expect(logged(sidebarLog)).toEqual([`__sidebar-resize-sync --tmux-socket ${socket} --session ${session} --source-pane %0`]);
    // The border script ran for the one plain select-pane, never for the titles.
    expect(logged(borderLog)).toEqual(['%0']);

    // Kill: the first kill-server ends it all; a second finds no server, with one of the messages
    // CCB matches (tmux answers "server exited unexpectedly" while its server is still exiting).
    await tmuxOk(['kill-server']);
    expect(await tmux(['kill-server'])).toMatchObject({ code: 1, stderr: expect.stringMatching(/^(no server running on|server exited unexpectedly)/) as unknown });
    expect((await client.list()).panes.filter((p) => p.tmux?.socket === socket)).toEqual([]);
  }, 300_000);
});
