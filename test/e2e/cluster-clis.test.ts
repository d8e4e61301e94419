/**
 * Issue 26's first acceptance line: a controller (in this process, on a real nats-server) and three
 * `switchboard node` processes, runs of all four structured agent CLIs (Claude Code, Codex, Gemini
 * CLI, OpenCode) against the scripted model, spread over the nodes by backend, labels and slots:
 *
 * - east: claude, codex, label east, 2 slots;
 * - west: gemini, codex, opencode, label west, 2 slots;
 * - edge: opencode, claude, label west, 1 slot.
 *
 * Every run's first answer is held by the model until all of them are going, so they take their
 * slots at once: claude (label east) on east; codex on west (the least loaded of the two with it);
 * gemini on west (the only one), which fills it; opencode on edge (west is full); a second codex on
 * east (west is full); and a claude with label west, for which edge (the only node with both) is
 * full, waits on the controller, queued, first in edge's line, and runs there once edge's run has
 * ended. The controller counts the runs it sent a node against its slots until they end, so a
 * node's lease not renewed yet cannot draw a second run to its last slot. Each run completes with
 * the model's words, started once, its events numbered without a gap.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunView } from '../../src/runs/run-service.js';
import { startTestController, type TestController } from '../support/cluster-controller.js';
import { until } from '../support/processes.js';
import { followRun, type FollowedRun } from '../support/run-follow.js';
import { endRunProcessesIn } from '../support/run-processes.js';
import { startSwitchboardNode, within, type SwitchboardNode } from '../support/switchboard-node.js';
import { atTestProcessEnd } from '../support/test-process-end.js';
import { useTestLedger } from '../support/test-ledger.js';
import { AGENT_BIN_DIRS } from './agent-flow.js';
import { useScriptedModel } from './scripted-model.js';

/** A bound on a wait for something that must happen; never a measure of how fast it did. */
const WAIT_MS = 120_000;
const GATE = 'all-runs-going';

const testLedger = useTestLedger();
const scripted = useScriptedModel({
  name: 'cluster-clis',
  title: 'Four CLIs on three nodes',
  rules: [{ match: 'say which node', steps: [{ text: 'Answered from the cluster.', wait_for: GATE }] }],
});
const scratch = scripted.tempDir('sb-cluster-clis-');
atTestProcessEnd(() => endRunProcessesIn(scratch.dir));
afterAll(() => endRunProcessesIn(scratch.dir));

interface NodePlan {
  name: string;
  backends: string[];
  labels: string[];
  slots: number;
}

const NODES: NodePlan[] = [
  { name: 'east', backends: ['claude', 'codex'], labels: ['east'], slots: 2 },
  { name: 'west', backends: ['gemini', 'codex', 'opencode'], labels: ['west'], slots: 2 },
  { name: 'edge', backends: ['opencode', 'claude'], labels: ['west'], slots: 1 },
];

/** What is asked, in order, and the node each must go to. */
const RUNS: { backend: string; labels: string[]; on: string }[] = [
  { backend: 'claude', labels: ['east'], on: 'east' },
  { backend: 'codex', labels: [], on: 'west' },
  { backend: 'gemini', labels: [], on: 'west' },
  { backend: 'opencode', labels: [], on: 'edge' },
  { backend: 'codex', labels: [], on: 'east' },
];

describe('a controller and three nodes', () => {
  it('runs all four CLIs at once, each on a node with its backend and labels, within their slots', { timeout: 4 * WAIT_MS }, async () => {
    const work = path.join(scratch.dir, 'work');
    mkdirSync(work, { recursive: true });
    // Room for every run at once: the controller's own limit (4 by default) would hold the fifth back.
    const controller: TestController = await startTestController(testLedger, scratch.dir, { policy: { limits: { concurrency: 8 } } });
    const nodes: SwitchboardNode[] = [];
    try {
      const env = { SWITCHBOARD_AGENT_PATH: AGENT_BIN_DIRS.join(path.delimiter) };
      // Each node its own CLI homes, as separate hosts have (two Claude Codes on one home wait on each other's lock).
      const agentOf = (node: string): { home: string; modelUrl: string } => ({ home: path.join(scratch.dir, `agents-${node}`), modelUrl: scripted.model.url });
      nodes.push(...(await Promise.all(NODES.map((n) => startSwitchboardNode({ url: controller.cluster.server.url, scratch: scratch.dir, name: n.name, labels: n.labels, slots: n.slots, backends: n.backends, agent: agentOf(n.name), env })))));
      // Each node as the controller sees it: every CLI healthy against the model.
      await until(() => NODES.every((plan) => controller.service.nodes().nodes.some((n) => n.name === plan.name && plan.backends.every((b) => n.clis.some((c) => c.name === b)))), 'every node with all its CLIs', WAIT_MS);

      const submitted: RunView[] = [];
      const followed: FollowedRun[] = [];
      for (const r of RUNS) {
        const run = await controller.service.submit({ backend: r.backend, prompt: `say which node you are on (${r.backend})`, cwd: work, labels: r.labels });
        submitted.push(run);
        followed.push(followRun(controller.service, run.id));
      }
      expect(submitted.map((r) => `${r.backend}@${r.node ?? '?'}`)).toEqual(RUNS.map((r) => `${r.backend}@${r.on}`));
      // All five are going at once, held by the model, and every slot is taken: one more waits for a slot on edge.
      await until(() => scripted.model.heldAt(GATE) >= RUNS.length, 'every run to reach the model', WAIT_MS);
      const waiting = await controller.service.submit({ backend: 'claude', prompt: 'say which node you are on (one too many)', cwd: work, labels: ['west'] });
      expect(waiting).toMatchObject({ status: 'queued', node: 'edge', queue_position: 0 });
      submitted.push(waiting);
      followed.push(followRun(controller.service, waiting.id));

      scripted.model.openGate(GATE);
      await within(Promise.all(followed.map((f) => f.ended)), WAIT_MS, () => {
        throw new Error(`not every run ended: ${JSON.stringify(followed.map((f) => f.events.at(-1)?.type))}`);
      });
      for (const [i, run] of submitted.entries()) {
        const view = await controller.service.get(run.id);
        expect(view.status, `${run.backend} on ${run.node ?? '?'}: ${view.message}`).toBe('completed');
        const tokens = (followed[i]?.events ?? []).filter((e) => e.type === 'token').map((e) => String(e.data.text)).join('');
        expect(tokens, `${run.backend} on ${run.node ?? '?'}`).toContain('Answered from the cluster.');
        // Started once, events numbered 1..n with nothing missing or twice.
        const events = await controller.ledger.events(run.id, 0, 10_000);
        expect(events.map((e) => e.seq)).toEqual(events.map((_, k) => k + 1));
        expect(events.filter((e) => e.type === 'state' && e.data.to === 'running')).toHaveLength(1);
      }
      expect(new Set(submitted.map((r) => r.node))).toEqual(new Set(['east', 'west', 'edge']));
      // The one that waited started only once edge's other run had ended: never two on its one slot.
      const edgeRuns = await Promise.all(submitted.filter((r) => r.node === 'edge').map((r) => controller.service.get(r.id)));
      const [before, after] = edgeRuns.sort((a, b) => (a.started_at ?? 0) - (b.started_at ?? 0));
      expect(after?.id).toBe(waiting.id);
      expect(after?.started_at ?? 0).toBeGreaterThanOrEqual(before?.ended_at ?? Infinity);
      expect(new Set(submitted.map((r) => r.backend))).toEqual(new Set(['claude', 'codex', 'gemini', 'opencode']));
    } finally {
      for (const node of nodes) await node.stop();
      endRunProcessesIn(scratch.dir);
      await controller.close();
    }
  });
});
