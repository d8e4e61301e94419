/**
 * A team run in the ledger (issue 24 item 2; seed 003 §9): its record (every change of state,
 * worker, tool call with its arguments, held text) is read back in order while it goes; both the
 * board and the record are sealed (the goal is nowhere in the ledger file in the clear); and after
 * the daemon stops mid-run, the next daemon on the same home lists the run as failed, with its
 * board, report and record, and refuses to steer it. Without the key, a run's board says why it
 * cannot be read, and nothing is lost.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { Daemon } from '../src/daemon/index.js';
import { connect, type SwitchboardClient } from '../src/index.js';
import { cleanEnv } from './support/cli.js';
import { SHELL_AGENT_ENV, tempDir } from './support/shell.js';
import { PLANNER_PROFILE_DATA, plannerProgram, type PlannerCall } from './support/scripted-planner.js';
import { boardUntil } from './support/team-board.js';

const scratch = tempDir('sb-team-record-');
const home = path.join(scratch.dir, 'home');
const work = path.join(scratch.dir, 'work');
mkdirSync(work);
mkdirSync(home, { mode: 0o700 });
const GOAL = 'write recorded.txt, a goal the ledger never shows in the clear';

const CALLS: PlannerCall[] = [
  ['tasks.add', { title: 'write recorded.txt' }],
  ['tabs.send', { tabId: 'executor-1', text: 'echo recorded > recorded.txt' }],
  ['tabs.wait', { tabId: 'executor-1', until: ['idle'], timeoutMs: 20_000 }],
  ['run.report_draft', { text: '# recorded.txt\nWritten before the daemon stopped.\n' }],
  ['tabs.send', { tabId: 'executor-1', text: 'git reset --hard' }],
  ['run.complete', { summary: 'never reached: the daemon stops first' }],
];
const agentsFile = path.join(scratch.dir, 'agents.json');
writeFileSync(agentsFile, JSON.stringify({ agents: [{ ...PLANNER_PROFILE_DATA, binary: { names: ['scripted-planner'], env: 'SCRIPTED_PLANNER_BIN' }, interactive_args: [plannerProgram(scratch.dir, path.join(scratch.dir, 'results.jsonl'), CALLS)] }] }));
const PRESET = { name: 'recorded', planner: 'lead', roles: [{ name: 'lead', agent: 'scripted-planner' }, { name: 'executor', agent: 'shell' }] };

const daemons: Daemon[] = [];
const clients: SwitchboardClient[] = [];
afterAll(async () => {
  for (const c of clients) c.close();
  for (const d of daemons) await d.close();
  scratch.cleanup();
});

async function startDaemon(): Promise<SwitchboardClient> {
  const daemon = await Daemon.start({ home, port: 0, agentsFile, checkResults: true, paneDefaults: { killGraceMs: 1_000 }, env: { ...process.env, SCRIPTED_PLANNER_BIN: process.execPath, ...SHELL_AGENT_ENV(work) } });
  daemons.push(daemon);
  const c = await connect({ home, env: cleanEnv() });
  clients.push(c);
  return c;
}

async function stopDaemon(c: SwitchboardClient): Promise<void> {
  c.close();
  await daemons.pop()?.close();
}

/** What the ledger file holds of team runs, read as anyone with the file could. */
function ledgerText(): { rows: string; kinds: string[] } {
  const db = new Database(path.join(home, 'ledger.db'), { readonly: true });
  try {
    const rows = db.prepare<[], { id: string; state: string; record: string }>('SELECT id, state, record FROM team_runs').all();
    const events = db.prepare<[], { kind: string; record: string }>('SELECT kind, record FROM team_events ORDER BY run_id, seq').all();
    return { rows: JSON.stringify(rows) + JSON.stringify(events), kinds: events.map((e) => e.kind) };
  } finally {
    db.close();
  }
}

describe('a team run in the ledger', () => {
  it('is recorded sealed as it goes, and outlives a daemon that stops mid-run as a failed run to read', async () => {
    let c = await startDaemon();
    const runId = (await c.teamRunStart({ preset: PRESET, goal: GOAL, folder: work })).run_id;
    const held = await boardUntil(c, runId, (b) => b.confirmations.length > 0, 'a text held by the risk gate');
    expect(held.confirmations.map((h) => h.text)).toEqual(['git reset --hard']);

    // The record so far, in order, each entry once.
    const { entries, next_after: nextAfter } = await c.teamRunEvents(runId);
    expect(nextAfter).toBeNull();
    expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
    const lines = entries.map((e) => (e.kind === 'call' ? `call ${String(e.method)} ${String(e.outcome)}` : e.kind === 'state' ? `state ${String(e.to)}` : e.kind));
    expect(lines).toEqual(expect.arrayContaining(['worker', 'state running', 'call tasks.add ok', 'call tabs.send ok', 'call tabs.wait ok', 'call run.report_draft ok', 'held']));
    expect(entries.find((e) => e.kind === 'call' && e.method === 'tabs.send')).toMatchObject({ by: 'planner', via: 'markers', params: { tabId: 'executor-1', text: 'echo recorded > recorded.txt' } });
    expect(entries.find((e) => e.kind === 'held')).toMatchObject({ worker: 'executor-1', text: 'git reset --hard', level: 'high' });
    // Paged: two at a time, from where the last page ended.
    const page = await c.teamRunEvents(runId, { afterSeq: 1, limit: 2 });
    expect(page).toMatchObject({ next_after: 3, entries: [{ seq: 2 }, { seq: 3 }] });

    // Sealed at rest: the ledger has the kinds and states in the clear, never the goal or a command.
    const ledger = ledgerText();
    // (A delivery may have been recorded since the read above: the planner goes on as it is typed to.)
    expect(ledger.kinds.slice(0, entries.length)).toEqual(entries.map((e) => e.kind));
    expect(ledger.rows).not.toContain('recorded.txt');
    expect(ledger.rows).not.toContain('git reset');
    expect(readFileSync(path.join(work, 'recorded.txt'), 'utf8')).toBe('recorded\n');

    // The daemon stops while the gate holds the text; the next one on the same home has the run, over.
    await stopDaemon(c);
    c = await startDaemon();
    const listed = (await c.teamRunList()).runs.find((r) => r.run_id === runId);
    expect(listed).toMatchObject({ goal: GOAL, preset: 'recorded', state: 'failed', workers: 1 });
    expect(listed?.ended_at).not.toBeNull();
    const board = await c.teamRunGet(runId);
    expect(board).toMatchObject({ state: 'failed', why: 'the daemon stopped while the run was going', goal: GOAL, confirmations: [], draft: '# recorded.txt\nWritten before the daemon stopped.\n' });
    expect(board.tasks.map((t) => t.title)).toEqual(['write recorded.txt']);
    // No terminal output is kept (seed 003 §9.1).
    expect(board.workers.map((w) => [w.id, w.last_lines])).toEqual([['executor-1', []]]);
    expect((await c.teamRunReport(runId)).markdown).toContain('Written before the daemon stopped.');
    const after = (await c.teamRunEvents(runId, { afterSeq: entries.length })).entries;
    expect(after.at(-1)).toMatchObject({ kind: 'state', from: 'running', to: 'failed', why: 'the daemon stopped while the run was going' });
    // A watch of it answers at once: it never changes again.
    expect((await c.teamRunGet(runId, { afterVersion: board.version, waitMs: 30_000 })).version).toBe(board.version);
    await expect(c.teamRunPause(runId)).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('has ended (failed)') as unknown });
    await expect(c.teamRunEvents('team-00000000')).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });

    // Without the key the run is still listed, with why its board cannot be read; its rows are untouched.
    await stopDaemon(c);
    const key = `${home}.key`;
    renameSync(key, `${key}.away`);
    try {
      c = await startDaemon();
      const sealed = (await c.teamRunList()).runs.find((r) => r.run_id === runId);
      expect(sealed).toMatchObject({ state: 'failed', sealed: expect.stringContaining('key') as unknown });
      await expect(c.teamRunGet(runId)).rejects.toMatchObject({ code: 'KEY_MISMATCH' });
      await stopDaemon(c);
    } finally {
      renameSync(`${key}.away`, key);
    }
    c = await startDaemon();
    expect((await c.teamRunGet(runId)).goal).toBe(GOAL);
  });
});
