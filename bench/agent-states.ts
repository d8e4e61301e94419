/**
 * How fast and how truly Switchboard sees what an agent does: the time from an approval prompt
 * being drawn to the `waiting_approval` event, from the reply being finished to the `idle` event,
 * and how often a turn is called done while the agent still works, over many turns of each real
 * CLI against the scripted model.
 *
 * Each turn asks the model for a shell command that needs approval (`sleep 1`, then a file write),
 * and after the command's result the model pauses 1.2 s before its final reply: a stretch where
 * the screen can look idle while the turn is not over. CodingAgent.execute() drives the turn.
 *
 * The moments are taken from what is on screen, not from our detector: after every parsed chunk of
 * output the rendered screen is searched, as plain text, for the approval prompt's words and for the
 * turn's unique final words ("Done: turn 07 written."), whitespace dropped (a TUI may wrap them).
 * The chunk that first shows them is the moment they were drawn. (The raw output cannot serve:
 * Ink and ratatui redraw only the cells that change, so a reply that streams in never appears as
 * one run of text.) The time the PTY read itself takes is not counted.
 *
 * The peer, in the same run on the same pane: ccmanager's rule (a TypeScript tool on the same
 * node-pty + xterm stack), as documented in anchors.md: look at the screen every 100 ms, with the
 * same profile patterns, and call the agent idle only after 1,500 ms of an unchanged screen.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AgentCatalog, detectScreen, findAgentBinary, type Screens, type StateChange } from '../src/agents/index.js';
import { ModelServer, type Scenario } from '../src/model-server/index.js';
import type { Pane } from '../src/pane/index.js';
import { CodingAgent } from '../src/drivers/pane/index.js';
import { sleep } from './stats.js';

const STATE_CLIS = ['claude', 'codex', 'gemini', 'opencode'] as const;

/** The approval prompt's words on each CLI's screen (recorded screens in test/fixtures/screens). */
const APPROVAL_WORDS: Record<(typeof STATE_CLIS)[number], string> = {
  claude: 'Do you want to proceed?',
  codex: 'Would you like to run the following command?',
  gemini: 'Allow execution of',
  opencode: 'Permission required',
};

const PEER_POLL_MS = 100;
const PEER_IDLE_MS = 1_500;

const turnId = (i: number): string => String(i + 1).padStart(2, '0');
const finalWords = (i: number): string => `Done: turn ${turnId(i)} written.`;
const compact = (s: string): string => s.replace(/\s+/g, '');

function benchScenario(turns: number): Scenario {
  return {
    name: 'state-bench',
    title: 'State detection bench',
    rules: Array.from({ length: turns }, (_, i) => ({
      match: `turn-${turnId(i)}\\b`,
      steps: [
        { tool: 'shell' as const, command: `sleep 1 && echo turn-${turnId(i)} > bench-${turnId(i)}.txt`, description: `Write bench-${turnId(i)}.txt`, escalate: true },
        { text: finalWords(i), delay_ms: 1_200 },
      ],
    })),
  };
}

/** One turn's moments, in epoch ms. */
interface TurnTimes {
  start: number;
  approvalAbsentSeen: boolean;
  finalMessage?: string | null;
  approvalDrawn?: number;
  finalDrawn?: number;
  end?: number;
  ours: { approval?: number; idle?: number; falseIdle: boolean };
  peer: { approval?: number; idle?: number; falseIdle: boolean };
  status?: string;
}

export interface StateFigures {
  agent: string;
  version: string | undefined;
  turns: number;
  completed: number;
  /** The peer's figures count only the prompts it saw: one answered before its next look is missed (see peerMissedApprovals). */
  approvalLatency: { ours: number[]; peer: number[] };
  /** Approval prompts that came and went (answered by policy) between two of the peer's looks. */
  peerMissedApprovals: number;
  /** The same for our tracker (its events come on every render, so this should be 0). */
  ourMissedApprovals: number;
  idleLatency: { ours: number[]; peer: number[] };
  /** Turns called done (execute returned, or the peer's rule said idle) before the final reply was drawn. */
  falseCompletions: { ours: number; peer: number };
  /** Turns where our tracker emitted `idle` mid-turn (execute did not act on it). */
  falseIdleEvents: number;
  /** Turns without a measurable moment (a prompt never seen, a turn that failed), with why. */
  problems: string[];
}

/** ccmanager's rule on the same pane: a look every 100 ms; idle only after 1.5 s unchanged. */
class PollingPeer {
  private timer: NodeJS.Timeout | undefined;
  private lastScreen = '';
  private unchangedSince = Date.now();
  state: 'idle' | 'approval' | 'busy' = 'idle';
  constructor(
    private readonly pane: Pane,
    private readonly screens: Screens,
    private readonly onState: (state: 'idle' | 'approval' | 'busy', at: number) => void,
  ) {}
  start(): void {
    this.timer = setInterval(() => this.look(), PEER_POLL_MS);
  }
  stop(): void {
    clearInterval(this.timer);
  }
  private look(): void {
    const lines = this.pane.screenLines();
    const screen = lines.join('\n');
    const now = Date.now();
    if (screen !== this.lastScreen) {
      this.lastScreen = screen;
      this.unchangedSince = now;
    }
    const kind = detectScreen(this.screens, { lines }).kind;
    const next = kind === 'approval' || kind === 'dialog' ? 'approval' : kind === 'idle' && now - this.unchangedSince >= PEER_IDLE_MS ? 'idle' : 'busy';
    if (next !== this.state) {
      this.state = next;
      this.onState(next, now);
    }
  }
}

async function measureOne(agent: (typeof STATE_CLIS)[number], turns: number, binaryDirs: string[]): Promise<StateFigures> {
  const model = await ModelServer.start({ scenario: benchScenario(turns) });
  const home = mkdtempSync(path.join(tmpdir(), `sb-bench-states-${agent}-home-`));
  const work = mkdtempSync(path.join(tmpdir(), `sb-bench-states-${agent}-work-`));
  const times: TurnTimes[] = [];
  const problems: string[] = [];
  let current: TurnTimes | undefined;
  let currentIndex = -1;
  let version: string | undefined;
  let peer: PollingPeer | undefined;
  const approvalWords = compact(APPROVAL_WORDS[agent]);
  // Where each side stands, so a side already (wrongly) idle when the final words arrive is timed
  // from its early idle: a negative latency, rather than no sample at all.
  let ourIdleSince: number | undefined;
  let peerIdleSince: number | undefined;
  const lookForMoments = (pane: Pane): void => {
    if (!current || (current.approvalDrawn !== undefined && current.finalDrawn !== undefined)) return;
    const at = Date.now();
    const screen = compact(pane.screenLines().join(''));
    const approvalOnScreen = screen.includes(approvalWords);
    // Words left from the last turn's prompt are not this turn's: they must go first.
    if (!approvalOnScreen) current.approvalAbsentSeen = true;
    if (current.approvalDrawn === undefined && approvalOnScreen && current.approvalAbsentSeen) current.approvalDrawn = at;
    if (current.finalDrawn === undefined && screen.includes(compact(finalWords(currentIndex)))) {
      current.finalDrawn = at;
      if (ourIdleSince !== undefined) current.ours.idle ??= ourIdleSince;
      if (peerIdleSince !== undefined) current.peer.idle ??= peerIdleSince;
    }
  };
  const onOurState = (change: StateChange): void => {
    ourIdleSince = change.state === 'idle' ? change.at : undefined;
    if (!current) return;
    if (change.state === 'waiting_approval' && current.ours.approval === undefined) {
      current.ours.approval = change.at;
      if (process.env.SWITCHBOARD_BENCH_DEBUG && coding.pane && current.approvalDrawn === undefined) console.log(`\n[approval event before the words: ${Date.now() - change.at} ms after the event]\n${coding.pane.screenLines().filter((l) => l.trim()).join('\n')}`);
    }
    if (change.state === 'idle' && change.previous !== 'starting') {
      if (current.finalDrawn === undefined) current.ours.falseIdle = true;
      else current.ours.idle ??= change.at;
    }
  };
  const coding = new CodingAgent({
    tool: agent,
    autoApprove: true,
    sandbox: { home, modelUrl: model.url },
    binaryDirs,
    timeoutMs: 120_000,
    idleTimeoutMs: 60_000,
    onProgress: (e) => {
      if (e.type === 'state') onOurState(e.change);
      if (e.type === 'started') {
        version = e.version;
        const pane = coding.pane;
        if (!pane) return;
        pane.onOutput(() => lookForMoments(pane));
        const screens = new AgentCatalog().get(agent).screensFor(e.version);
        // A new session (the CLI restarted) gets a new peer; the old one would watch a dead pane.
        peer?.stop();
        peer = new PollingPeer(pane, screens, (state, at) => {
          peerIdleSince = state === 'idle' ? at : undefined;
          if (!current) return;
          if (state === 'approval') current.peer.approval ??= at;
          if (state === 'idle') {
            if (current.finalDrawn === undefined) current.peer.falseIdle = true;
            else current.peer.idle ??= at;
          }
        });
        peer.start();
      }
    },
  });
  try {
    for (let i = 0; i < turns; i++) {
      currentIndex = i;
      const screenNow = coding.pane ? compact(coding.pane.screenLines().join('')) : '';
      current = { start: Date.now(), approvalAbsentSeen: !screenNow.includes(approvalWords), ours: { falseIdle: false }, peer: { falseIdle: false } };
      times.push(current);
      const result = await coding.execute(`bench turn-${turnId(i)}: please write the file`, { workdir: work });
      current.end = Date.now();
      current.status = result.status;
      current.finalMessage = result.finalMessage;
      if (process.env.SWITCHBOARD_BENCH_DEBUG) {
        const rel = (t: number | undefined): string => (t === undefined ? '-' : String(t - (current?.start ?? 0)));
        console.log(`\n${agent} turn ${turnId(i)}: ${result.status} end=${rel(current.end)} approvalDrawn=${rel(current.approvalDrawn)} finalDrawn=${rel(current.finalDrawn)} ours=${JSON.stringify(current.ours)} peer=${JSON.stringify(current.peer)} final=${JSON.stringify(result.finalMessage)}`);
        console.log(result.states.map((s) => `${s.state}@${rel(s.at)}${s.evidence ? `(${s.evidence.rule}: ${s.evidence.line.slice(0, 60)})` : ''}`).join('\n'));
      }
      if (result.status !== 'completed') problems.push(`turn ${turnId(i)}: ${result.status}${result.errorMessage ? ` (${result.errorMessage.split('\n')[0] ?? ''})` : ''}`);
      // Let the peer's rule see the quiet screen it needs before the next turn starts.
      const deadline = Date.now() + PEER_IDLE_MS + 3_000;
      while (current.peer.idle === undefined && Date.now() < deadline) await sleep(50);
      process.stdout.write(`\r${agent}: turn ${i + 1}/${turns}`);
    }
    process.stdout.write('\n');
  } finally {
    peer?.stop();
    current = undefined;
    await coding.dispose();
    await model.close();
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  }
  const latency = (pick: (t: TurnTimes) => number | undefined, from: (t: TurnTimes) => number | undefined): number[] =>
    times.flatMap((t) => {
      const a = pick(t);
      const b = from(t);
      return a !== undefined && b !== undefined ? [a - b] : [];
    }).sort((x, y) => x - y);
  times.forEach((t, i) => {
    if (t.approvalDrawn === undefined) problems.push(`turn ${turnId(i)}: the approval prompt's words never showed on screen`);
    if (t.finalDrawn === undefined) problems.push(`turn ${turnId(i)}: the final reply's words never showed on screen`);
  });
  return {
    agent,
    version,
    turns,
    completed: times.filter((t) => t.status === 'completed').length,
    approvalLatency: { ours: latency((t) => t.ours.approval, (t) => t.approvalDrawn), peer: latency((t) => t.peer.approval, (t) => t.approvalDrawn) },
    idleLatency: { ours: latency((t) => t.ours.idle, (t) => t.finalDrawn), peer: latency((t) => t.peer.idle, (t) => t.finalDrawn) },
    falseCompletions: {
      // Returned as completed without the turn's final words on screen, or before they were drawn.
      ours: times.filter((t, i) => t.status === 'completed' && (t.finalDrawn === undefined || (t.end ?? 0) < t.finalDrawn || !(t.finalMessage ?? '').includes(finalWords(i)))).length,
      peer: times.filter((t) => t.peer.falseIdle).length,
    },
    falseIdleEvents: times.filter((t) => t.ours.falseIdle).length,
    peerMissedApprovals: times.filter((t) => t.approvalDrawn !== undefined && t.peer.approval === undefined).length,
    ourMissedApprovals: times.filter((t) => t.approvalDrawn !== undefined && t.ours.approval === undefined).length,
    problems,
  };
}

/** Measures every installed CLI over `turns` turns each; CLIs not installed are skipped with a note. */
export async function measureAgentStates(binaryDirs: string[], turns: number, only?: readonly string[]): Promise<StateFigures[]> {
  const catalog = new AgentCatalog();
  const figures: StateFigures[] = [];
  for (const agent of STATE_CLIS) {
    if (only && only.length > 0 && !only.includes(agent)) continue;
    if (!findAgentBinary(catalog.get(agent).data, process.env, binaryDirs)) {
      console.log(`${agent}: not installed, skipped (run: node --import tsx scripts/install-agent-clis.ts)`);
      continue;
    }
    figures.push(await measureOne(agent, turns, binaryDirs));
  }
  return figures;
}
