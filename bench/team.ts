/**
 * `npm run bench -- team` (issue 24): seed 003's two timings.
 * - Goal to every worker ready: `team_run_start` with a planner and three workers of different
 *   makes (Claude Code, Codex, Gemini CLI against the scripted model, first-run dialogs answered),
 *   until the board shows each worker idle at its prompt. Beside it, the same three CLIs opened one
 *   after another with `create_pane` (each call returns at the idle prompt): what a run that
 *   opened its team in turn would take. Alternated, median of 3.
 * - A worker's completion to its delivery into an idle planner: a planner (marker lines) waits on a
 *   scripted worker with `tabs.wait`; the worker (2 s a task, so the planner is idle by then)
 *   stamps the time it finished, the planner the time the result's Enter reached it; split at the
 *   end of tabs.wait in the run's record. 30 rounds.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ModelServer, HELLO_SCENARIO } from '../src/model-server/index.js';
import type { SwitchboardClient } from '../src/index.js';
import { PLANNER_PROFILE_DATA, plannerProgram, taskWorkerProgram, type PlannerCall } from '../test/support/scripted-planner.js';
import { DaemonProcess } from './daemon-process.js';
import { percentile } from './stats.js';

export interface TeamFigure {
  name: string;
  unit: string;
  value: number;
  peer: number | null;
  better: 'lower' | 'higher';
}

const WORKER_AGENTS = ['claude', 'codex', 'gemini'] as const;
const SAMPLES = 3;
const ROUNDS = 30;
const BOARD_WAIT_MS = 5_000;
const READY_TIMEOUT_MS = 180_000;

function scratchDir(label: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), `sb-bench-team-${label}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Watches the board by version until `done` holds; throws with the board past the time limit. */
async function boardWhen(client: SwitchboardClient, runId: string, done: (b: Awaited<ReturnType<SwitchboardClient['teamRunGet']>>) => boolean, what: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let board = await client.teamRunGet(runId);
  while (!done(board)) {
    if (Date.now() > deadline) throw new Error(`${what}: not seen; the board: ${JSON.stringify(board)}`);
    board = await client.teamRunGet(runId, { afterVersion: board.version, waitMs: BOARD_WAIT_MS });
  }
}

async function teamReady(client: SwitchboardClient, modelUrl: string): Promise<number> {
  const scratch = scratchDir('ready');
  const work = path.join(scratch.dir, 'work');
  mkdirSync(work);
  try {
    const preset = { name: 'bench-mixed', planner: 'lead', roles: [{ name: 'lead', agent: 'bench-planner' }, ...WORKER_AGENTS.map((agent) => ({ name: `${agent}-worker`, agent }))] };
    const t0 = performance.now();
    const { run_id: runId } = await client.teamRunStart({ preset, goal: 'say hello', folder: work, agent_home: path.join(scratch.dir, 'homes'), model_url: modelUrl });
    await boardWhen(client, runId, (b) => b.workers.length === WORKER_AGENTS.length && b.workers.every((w) => w.state === 'idle'), 'every worker idle');
    const ms = performance.now() - t0;
    await client.teamRunEnd(runId, { closeAgents: true });
    return ms;
  } finally {
    scratch.cleanup();
  }
}

/** The same three CLIs, each opened once the one before is ready. */
async function oneAfterAnother(client: SwitchboardClient, modelUrl: string): Promise<number> {
  const scratch = scratchDir('serial');
  try {
    const t0 = performance.now();
    const panes: string[] = [];
    for (const agent of WORKER_AGENTS) {
      const work = path.join(scratch.dir, `${agent}-work`);
      mkdirSync(work);
      panes.push((await client.createPane({ agent, cwd: work, agent_home: path.join(scratch.dir, `${agent}-home`), model_url: modelUrl })).pane_id);
    }
    const ms = performance.now() - t0;
    for (const pane of panes) await client.remove(pane);
    return ms;
  } finally {
    scratch.cleanup();
  }
}

interface DeliveryTimes {
  /** The worker's own stamp as its command finished, to the result's Enter in the planner. */
  total: number[];
  /** The worker's stamp to the end of the planner's tabs.wait (the run seeing the worker idle). */
  seen: number[];
  /** The end of tabs.wait to the Enter in the planner: the delivery itself. */
  delivery: number[];
}

/** Per round: a worker's completion, the run seeing it, and the result typed into the planner. */
async function deliveries(client: SwitchboardClient, scratch: string): Promise<DeliveryTimes> {
  const work = path.join(scratch, 'work');
  mkdirSync(work);
  const preset = { name: 'bench-delivery', planner: 'lead', roles: [{ name: 'lead', agent: 'delivery-planner' }, { name: 'executor', agent: 'bench-worker' }] };
  const { run_id: runId } = await client.teamRunStart({ preset, goal: 'finish and report, 30 times', folder: work });
  await boardWhen(client, runId, (b) => b.state === 'completed', 'the delivery run completed');
  const record = (await client.teamRunEvents(runId, { limit: 500 })).entries;
  await client.teamRunEnd(runId, { closeAgents: true });
  const received = readFileSync(path.join(scratch, 'received.txt'), 'utf8').trim().split('\n').map(Number);
  // Results in order: send, wait, send, wait, …; each wait's result follows its round's stamp.
  const waitsReceived = received.filter((_, i) => i % 2 === 1).slice(0, ROUNDS);
  const waitsEnded = record.filter((e) => e.kind === 'call' && e['method'] === 'tabs.wait').map((e) => e.ts);
  const times: DeliveryTimes = { total: [], seen: [], delivery: [] };
  waitsReceived.forEach((at, k) => {
    const done = Number(readFileSync(path.join(work, `done-${k}`), 'utf8'));
    const ended = waitsEnded[k] ?? Number.NaN;
    times.total.push(at - done);
    times.seen.push(ended - done);
    times.delivery.push(at - ended);
  });
  for (const list of [times.total, times.seen, times.delivery]) list.sort((a, b) => a - b);
  return times;
}

function deliveryCalls(): PlannerCall[] {
  const calls: PlannerCall[] = [];
  for (let k = 0; k < ROUNDS; k++) {
    calls.push(['tabs.send', { tabId: 'executor-1', text: `task ${k}` }]);
    calls.push(['tabs.wait', { tabId: 'executor-1', until: ['idle'], timeoutMs: 30_000 }]);
  }
  calls.push(['run.complete', { summary: 'delivered' }]);
  return calls;
}

export async function measureTeam(binaryDirs: string[]): Promise<TeamFigure[]> {
  const scratch = scratchDir('daemon');
  const agentsFile = path.join(scratch.dir, 'agents.json');
  writeFileSync(
    agentsFile,
    JSON.stringify({
      agents: [
        { ...PLANNER_PROFILE_DATA, name: 'bench-planner', binary: { names: ['bench-planner'], env: 'SCRIPTED_PLANNER_BIN' }, interactive_args: [plannerProgram(scratch.dir, path.join(scratch.dir, 'idle.jsonl'), [])] },
        // Each task takes 2 s: long enough for the planner to be idle again (seen idle) before it ends.
        { ...PLANNER_PROFILE_DATA, name: 'bench-worker', binary: { names: ['bench-worker'], env: 'SCRIPTED_PLANNER_BIN' }, interactive_args: [taskWorkerProgram(scratch.dir, path.join(scratch.dir, 'work'), 2_000)] },
        {
          ...PLANNER_PROFILE_DATA,
          name: 'delivery-planner',
          binary: { names: ['delivery-planner'], env: 'SCRIPTED_PLANNER_BIN' },
          interactive_args: [plannerProgram(scratch.dir, path.join(scratch.dir, 'delivery.jsonl'), deliveryCalls(), { timesTo: path.join(scratch.dir, 'received.txt') })],
        },
      ],
    }),
  );
  const model = await ModelServer.start({ scenario: HELLO_SCENARIO });
  const daemon = await DaemonProcess.start({
    SWITCHBOARD_AGENTS: agentsFile,
    SCRIPTED_PLANNER_BIN: process.execPath,
    SWITCHBOARD_AGENT_PATH: binaryDirs.join(path.delimiter),
    ...(process.env.SWITCHBOARD_OPENCODE_PLUGIN_DIR !== undefined ? { SWITCHBOARD_OPENCODE_PLUGIN_DIR: process.env.SWITCHBOARD_OPENCODE_PLUGIN_DIR } : {}),
  });
  const client = await daemon.connect();
  try {
    // One unmeasured round of each, so both read the CLIs from a warm disk cache.
    await teamReady(client, model.url);
    await oneAfterAnother(client, model.url);
    const ours: number[] = [];
    const peer: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      ours.push(await teamReady(client, model.url));
      peer.push(await oneAfterAnother(client, model.url));
    }
    ours.sort((a, b) => a - b);
    peer.sort((a, b) => a - b);
    const delivered = await deliveries(client, scratch.dir);
    if ((delivered.total[0] ?? 0) < 0) console.log(`  a result reached the planner ${-(delivered.total[0] ?? 0)} ms before its worker finished: tabs.wait saw the worker idle before the command ran`);
    const round = (name: string, list: number[]): TeamFigure[] =>
      [50, 99].map((q) => ({ name: `team: ${name} p${q}`, unit: 'ms', value: percentile(list, q), peer: null, better: 'lower' as const }));
    return [
      { name: `team: goal to every worker ready (${WORKER_AGENTS.join(', ')}) median`, unit: 'ms', value: percentile(ours, 50), peer: percentile(peer, 50), better: 'lower' },
      ...round('worker completion to delivery into an idle planner', delivered.total),
      ...round('worker completion to the run seeing it (tabs.wait ends)', delivered.seen),
      ...round('tabs.wait result typed into the idle planner (its Enter)', delivered.delivery),
    ];
  } finally {
    client.close();
    await daemon.stop();
    await model.close();
    scratch.cleanup();
  }
}
