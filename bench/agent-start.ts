/**
 * Time from pane creation to the idle prompt, for each real agent CLI, against the scripted model.
 *
 * Ours: one create_pane call with `agent`, which returns once the idle prompt has held on screen
 * for READY_SETTLE_MS, first-run dialogs answered by policy. The peer does the same job the way a
 * tmux-based orchestrator (CCB) has to: `tmux new-window`, then `capture-pane` in a loop, with the
 * same screen detector, the same answers sent with `send-keys`, and the same readiness rule. Each
 * start gets a fresh agent HOME and working directory, so both sides pass the first-run dialogs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  AgentCatalog,
  DEFAULT_FIRST_RUN_POLICY,
  DIALOG_REPEAT_MS,
  DIALOG_SETTLE_MS,
  READY_SETTLE_MS,
  decideDialog,
  menuChoiceFor,
  nextMenuKey,
  detectScreen,
  findAgentBinary,
  agentVersion,
  type AgentProfile,
} from '../src/agents/index.js';
import { ModelServer, HELLO_SCENARIO } from '../src/model-server/index.js';
import { findProcessesByEnv, terminateProcessTree } from '../src/platform/index.js';
import type { DaemonProcess } from './daemon-process.js';
import { percentile, sleep } from './stats.js';
import type { TmuxServer } from './tmux.js';

const AGENT_CLIS = ['claude', 'codex', 'gemini', 'opencode'] as const;
const COLS = 120;
const ROWS = 40;
const SAMPLES = 5;
const KEY_GAP_MS = 80;
/** How often the peer looks at the screen: a tmux orchestrator polls, and polling flat out would steal the CPU the CLI needs. */
const POLL_MS = 20;

interface Dirs {
  home: string;
  work: string;
  cleanup: () => void;
}

function freshDirs(agent: string): Dirs {
  const home = mkdtempSync(path.join(tmpdir(), `sb-bench-${agent}-home-`));
  const work = mkdtempSync(path.join(tmpdir(), `sb-bench-${agent}-work-`));
  return { home, work, cleanup: () => [home, work].forEach((d) => rmSync(d, { recursive: true, force: true })) };
}

/** Ours: create_pane with the agent; the call returns when it is ready. Returns ms. */
async function startOurs(daemon: DaemonProcess, agent: string, modelUrl: string): Promise<number> {
  const dirs = freshDirs(agent);
  const client = await daemon.connect();
  try {
    const t0 = performance.now();
    const created = await client.createPane({ agent, cwd: dirs.work, agent_home: dirs.home, model_url: modelUrl, cols: COLS, rows: ROWS });
    const ms = performance.now() - t0;
    await client.remove(created.pane_id);
    return ms;
  } finally {
    client.close();
    dirs.cleanup();
  }
}

/** The peer: tmux new-window, then poll capture-pane, answer dialogs, wait for a settled idle prompt. */
async function startTmux(tmux: TmuxServer, profile: AgentProfile, binary: string, version: string | undefined, modelUrl: string, marker: string): Promise<number> {
  const dirs = freshDirs(profile.data.name);
  const screens = profile.screensFor(version);
  let pane: string | undefined;
  try {
    const additions = profile.prepareSandbox({ home: dirs.home, modelUrl, cwd: dirs.work });
    const env = { ...profile.data.env, ...additions.env, SWITCHBOARD_PANE_ID: marker };
    const t0 = performance.now();
    pane = await tmux.newPaneArgv([binary, ...profile.data.interactive_args, ...additions.args], { cwd: dirs.work, env });
    let idleSince: number | undefined;
    let dialogSince: { id: string; at: number } | undefined;
    const answered = new Map<string, number>();
    for (let first = true; ; first = false) {
      if (!first) await sleep(POLL_MS);
      const now = performance.now();
      if (now - t0 > 90_000) throw new Error(`tmux: ${profile.data.name} never reached its idle prompt`);
      const lines = (await tmux.run(['capture-pane', '-p', '-t', pane])).split('\n').slice(0, ROWS);
      const seen = detectScreen(screens, { lines });
      if (seen.kind === 'dialog' && seen.dialog) {
        idleSince = undefined;
        const last = answered.get(seen.dialog.id);
        if (last !== undefined && now - last < DIALOG_REPEAT_MS) continue;
        if (dialogSince?.id !== seen.dialog.id) dialogSince = { id: seen.dialog.id, at: now };
        if (now - dialogSince.at < DIALOG_SETTLE_MS) continue;
        const decision = decideDialog(seen.dialog, DEFAULT_FIRST_RUN_POLICY);
        const choice = menuChoiceFor(seen.dialog, decision);
        if (choice) {
          // One step per look, as Switchboard does it: an arrow, then look again, until Enter. The
          // dialog has settled already: the next step does not wait for it again.
          let key: string;
          try {
            key = nextMenuKey(choice, lines);
          } catch {
            continue; // a half-drawn frame: look again (a menu that never fits ends at the 90 s limit)
          }
          await tmux.run(['send-keys', '-t', pane, key]);
          if (key === 'Enter') {
            answered.set(seen.dialog.id, now);
            dialogSince = undefined;
          } else await sleep(KEY_GAP_MS);
          continue;
        }
        dialogSince = undefined;
        answered.set(seen.dialog.id, now);
        for (const [i, key] of (seen.dialog[decision] as string[]).entries()) {
          if (i > 0) await sleep(KEY_GAP_MS);
          await tmux.run(['send-keys', '-t', pane, key]);
        }
        continue;
      }
      dialogSince = undefined;
      if (seen.kind !== 'idle') {
        idleSince = undefined;
        continue;
      }
      idleSince ??= now;
      if (now - idleSince >= READY_SETTLE_MS) return performance.now() - t0;
    }
  } finally {
    if (pane) await tmux.run(['kill-pane', '-t', pane]).catch(() => undefined);
    // What the CLI started outside the pane's process group carries the marker: end that too.
    for (const pid of findProcessesByEnv('SWITCHBOARD_PANE_ID', marker)) await terminateProcessTree(pid, { graceMs: 1_000 });
    dirs.cleanup();
  }
}

export interface AgentStartFigure {
  agent: string;
  version: string | undefined;
  ours: number[];
  peer: number[];
}

/**
 * Measures every installed CLI; `binaryDirs` is where the test line installed them. CLIs that are
 * not installed are skipped with a note.
 */
export async function measureAgentStarts(daemon: DaemonProcess, tmux: TmuxServer, binaryDirs: string[]): Promise<AgentStartFigure[]> {
  const model = await ModelServer.start({ scenario: HELLO_SCENARIO });
  const catalog = new AgentCatalog();
  const figures: AgentStartFigure[] = [];
  try {
    for (const agent of AGENT_CLIS) {
      const profile = catalog.get(agent);
      const binary = findAgentBinary(profile.data, process.env, binaryDirs);
      if (!binary) {
        console.log(`${agent}: not installed, skipped (run: node --import tsx scripts/install-agent-clis.ts)`);
        continue;
      }
      const version = await agentVersion(binary, profile.data.version_args ?? ['--version'], process.env);
      // One unmeasured start each, so both sides read the CLI from a warm disk cache.
      await startOurs(daemon, agent, model.url);
      await startTmux(tmux, profile, binary, version, model.url, `bench-tmux-${agent}-warm`);
      const ours: number[] = [];
      const peer: number[] = [];
      // Alternate the sides so a slow stretch of the machine hits both.
      for (let i = 0; i < SAMPLES; i++) {
        ours.push(await startOurs(daemon, agent, model.url));
        peer.push(await startTmux(tmux, profile, binary, version, model.url, `bench-tmux-${agent}-${i}`));
      }
      figures.push({ agent, version, ours: ours.sort((a, b) => a - b), peer: peer.sort((a, b) => a - b) });
    }
  } finally {
    await model.close();
  }
  return figures;
}

export const median = (sorted: number[]): number => percentile(sorted, 50);
