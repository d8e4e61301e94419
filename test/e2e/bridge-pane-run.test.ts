/**
 * A bridge run in a terminal (`run_submit` with `mode: pty`) is one of the daemon's panes, with the
 * real Claude Code CLI against the scripted model: `list` and the dashboard's `pane_states` show
 * it while it runs, and a tool call the governance policy leaves open ("ask") waits for a person,
 * who answers it with `answer_approval`. The run's ledger records governance asking and the
 * person's answer, and the run completes with the file written. (The bridge's PTY backend used to
 * make panes in a registry of its own, which nothing else could see.)
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { connect, type SwitchboardClient } from '../../src/index.js';
import { startTestDaemon } from '../support/daemon.js';
import { cleanEnv } from '../support/cli.js';
import { until } from '../support/processes.js';
import { AGENT_BIN_DIRS, useAgentBinaries } from './agent-flow.js';
import { RULES, useScriptedModel } from './scripted-model.js';

useAgentBinaries();
const scripted = useScriptedModel({ name: 'bridge-pane-run', title: 'A bridge run in a daemon pane', rules: [RULES.writeFileByShell] });

async function claudePanes(c: SwitchboardClient): Promise<string[]> {
  return (await c.list()).panes.filter((p) => p.agent?.name === 'claude').map((p) => p.pane_id);
}

describe('a bridge run in a terminal', () => {
  it('is a daemon pane: listed, on the dashboard, its open approval answered with answer_approval', { timeout: 240_000 }, async () => {
    const root = scripted.tempDir('sb-bridge-pane-').dir;
    const work = path.join(root, 'work');
    mkdirSync(work);
    const policyFile = path.join(root, 'policy.yaml');
    writeFileSync(policyFile, `sandbox:\n  roots: [${JSON.stringify(work)}]\napprovals:\n  rules:\n    - tool: shell\n      decision: ask\n`);
    const d = await startTestDaemon({ bridge: { agentHome: path.join(root, 'agents'), modelUrl: scripted.model.url, policyFile, binaryDirs: AGENT_BIN_DIRS } });
    const c = await connect({ home: d.home, env: cleanEnv() });
    try {
      const { run } = await c.runSubmit({ backend: 'claude', mode: 'pty', prompt: 'write a file please', cwd: work, keep_alive: false });
      // The run's pane is one of the daemon's: listed with its agent.
      const paneId = await untilFound('the run pane in list', async () => (await claudePanes(c))[0]);
      // The dashboard's view: the pane waits on the approval governance left open.
      const waiting = await untilFound('the approval in pane_states', async () => (await c.paneStates()).states.find((s) => s.pane_id === paneId && s.state === 'waiting_approval' && s.approval !== null));
      expect(waiting.approval?.tool).toBe('shell');
      expect(waiting.approval?.command).toContain('tool_out.txt');
      // Recorded as asked, and nothing runs until a person answers.
      const asked = await untilFound('the ask in the ledger', async () => decisionsOf(await c.runEvents(run.id)).find((d) => d.decision === 'ask'));
      expect(asked).toMatchObject({ by: 'none', rule: expect.stringMatching(/rules\[0\]$/) as unknown });
      await c.answerApproval(paneId, 'allow', waiting.approval?.id ?? undefined);

      await until(async () => ['completed', 'failed', 'cancelled'].includes((await c.runGet(run.id)).run.status), 'the run to end', 180_000);
      const ended = (await c.runGet(run.id)).run;
      const page = await c.runEvents(run.id, { limit: 10_000 });
      const events = page.events;
      expect(ended.status, JSON.stringify(events.slice(-8))).toBe('completed');
      expect(readFileSync(path.join(work, 'tool_out.txt'), 'utf8')).toBe('hello-from-tool\n');
      const decisions = decisionsOf(page);
      expect(decisions).toEqual(expect.arrayContaining([expect.objectContaining({ decision: 'ask', by: 'none' }), expect.objectContaining({ decision: 'allow', by: 'person' })]));
      // keep_alive false: the pane goes with the run.
      await until(async () => (await claudePanes(c)).length === 0, 'the run pane removed');
    } finally {
      c.close();
      await d.stop();
    }
  });
});

interface Decision {
  decision: string;
  by: string;
  rule: string;
}

/** The decision events of a page (schema v2: structured data). */
function decisionsOf(page: { events: readonly { type: string; schema_version: string }[] }): Decision[] {
  return page.events.flatMap((e) => (e.type === 'decision' && 'data' in e ? [e.data as Decision] : []));
}

/** Polls until `find` gives something (the daemon's view moves on its own). */
async function untilFound<T>(what: string, find: () => Promise<T | undefined>): Promise<T> {
  let found: T | undefined;
  await until(async () => (found = await find()) !== undefined, what, 120_000);
  return found as T;
}
