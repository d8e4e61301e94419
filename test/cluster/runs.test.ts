/**
 * Runs across machines on a real nats-server (issue 26): a controller in this process (a run
 * service whose RemoteRuns is the cluster, its ledger in SQLite or PostgreSQL by
 * $SWITCHBOARD_TEST_LEDGER) and a node as a process of its own, `switchboard node` with the plain
 * shell backend (no agent CLI). A run submitted on the controller runs on the node, and its events
 * come into the controller's ledger in order, each once, to `completed`; a cancel on the controller
 * reaches the node, and the run ends `cancelled`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstream } from '@nats-io/jetstream';
import { headers } from '@nats-io/transport-node';
import { NODE_HEADER } from '../../src/cluster/index.js';
import { eventMessage } from '../../src/cluster-runs/run-wire.js';
import type { RunEvent } from '../../src/ledger/run-events.js';
import { startTestController, type TestController } from '../support/cluster-controller.js';
import { followRun, type FollowedRun } from '../support/run-follow.js';
import { tempDir } from '../support/shell.js';
import { startSwitchboardNode } from '../support/switchboard-node.js';
import { useTestLedger } from '../support/test-ledger.js';

/** A bound on a wait for something that must happen; never a measure of how fast it did. */
const WAIT_MS = 60_000;

const testLedger = useTestLedger();
const scratch = tempDir('sb-cluster-runs-');
const work = path.join(scratch.dir, 'work');

/** The controller in this process (startTestController). */
let ctl: TestController | undefined;

const need = <T>(value: T | undefined): T => {
  if (value === undefined) throw new Error('the controller has not started');
  return value;
};

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  ctl = await startTestController(testLedger, scratch.dir);
}, WAIT_MS);

afterAll(async () => {
  await ctl?.close();
  scratch.cleanup();
});

/** Follows run `runId` on the controller from its first event to its done. */
const follow = (runId: string, onEvent?: (event: RunEvent) => void): FollowedRun => followRun(need(ctl).service, runId, onEvent);

/** Waits until the directory sees node `name`, as a submit needs. */
async function nodeSeen(name: string): Promise<void> {
  const { directory } = need(ctl).runs;
  if (directory.get(name)) return;
  await new Promise<void>((resolve) => {
    const sub = directory.onChange((change) => {
      if (change.node.record.name === name && change.kind !== 'left' && change.kind !== 'lost') {
        sub.dispose();
        resolve();
      }
    });
  });
}

describe('runs on a cluster node', () => {
  it('runs a run submitted on the controller on the node, its events in the controller’s ledger in order and once, to completed; and ends a cancelled one cancelled', { timeout: 3 * WAIT_MS }, async () => {
    const controller = need(ctl).service;
    const remote = need(ctl).runs;
    const recorded = need(ctl).ledger;
    const node = await startSwitchboardNode({ url: need(ctl).cluster.server.url, scratch: scratch.dir, name: 'node-one' });
    try {
      await nodeSeen('node-one');
      expect(remote.directory.get('node-one')?.record).toMatchObject({ name: 'node-one', clis: [{ name: 'shell' }], slots: { total: 2 } });

      const submitted = await controller.submit({ backend: 'shell', prompt: 'echo hello from the node; echo second line', cwd: work });
      expect(submitted).toMatchObject({ status: 'queued', node: 'node-one', backend: 'shell' });
      const first = follow(submitted.id);
      await first.ended;
      // Numbered by the node 1, 2, 3, … and each taken once.
      expect(first.events.map((e) => e.seq)).toEqual(first.events.map((_, i) => i + 1));
      expect(first.events.every((e) => e.run_id === submitted.id)).toBe(true);
      expect(first.events.map((e) => e.type)).toEqual(expect.arrayContaining(['input', 'decision', 'state', 'token', 'done']));
      expect(first.events.filter((e) => e.type === 'token').map((e) => String(e.data.text)).join('')).toContain('hello from the node\nsecond line');
      expect(first.events.at(-1)).toMatchObject({ type: 'done', data: { outcome: 'completed' } });
      expect(await controller.get(submitted.id)).toMatchObject({ status: 'completed', reason: 'finished', node: 'node-one', last_seq: first.events.length });
      // What the ledger keeps is what was streamed live.
      expect(await recorded.events(submitted.id, 0, 1_000)).toEqual(first.events);

      const long = await controller.submit({ backend: 'shell', prompt: 'sleep 600', cwd: work });
      let markRunning: () => void = () => undefined;
      const running = new Promise<void>((resolve) => (markRunning = resolve));
      const second = follow(long.id, (event) => {
        if (event.type === 'state' && event.data.to === 'running') markRunning();
      });
      await running;
      await controller.cancel(long.id);
      await second.ended;
      expect(second.events.map((e) => e.seq)).toEqual(second.events.map((_, i) => i + 1));
      expect(second.events.at(-1)).toMatchObject({ type: 'done', data: { outcome: 'cancelled' } });
      expect(await controller.get(long.id)).toMatchObject({ status: 'cancelled', reason: 'cancelled_by_user', node: 'node-one' });
      expect(await recorded.check()).toBe('ok');
    } finally {
      await node.stop();
    }
  });

  it('events another node sends under a run it was not sent to are dropped whole, and the run’s own events, with the same numbers, are all stored', { timeout: 3 * WAIT_MS }, async () => {
    const controller = need(ctl).service;
    const node = await startSwitchboardNode({ url: need(ctl).cluster.server.url, scratch: scratch.dir, name: 'node-own' });
    const gate = path.join(work, 'own-go');
    try {
      await nodeSeen('node-own');
      const run = await controller.submit({ backend: 'shell', prompt: `echo own waiting; while [ ! -f ${gate} ]; do sleep 0.1; done; echo own after`, cwd: work, node: 'node-own' });
      let markWaiting: (event: RunEvent) => void = () => undefined;
      const waiting = new Promise<RunEvent>((resolve) => (markWaiting = resolve));
      const followed = follow(run.id, (event) => {
        if (event.type === 'token' && String(event.data.text).includes('own waiting')) markWaiting(event);
      });
      const seen = await waiting;
      // Another node (its subject names it: the server's permissions hold a node to its own name)
      // sends the next numbers of this run first, saying in its header that it is the run's node,
      // under the message ids older versions gave them; the run's own node then sends the same numbers.
      const js = jetstream(need(ctl).cluster.controller.nc);
      for (let seq = seen.seq + 1; seq <= seen.seq + 3; seq++) {
        const h = headers();
        h.set(NODE_HEADER, 'node-own');
        const forged = eventMessage({ ...seen, seq, data: { ...seen.data, text: `forged ${String(seq)}\n` } });
        expect((await js.publish(`sb.events.node-intruder.${run.id}`, JSON.stringify(forged), { headers: h, msgID: `node-own:${run.id}:${String(seq)}` })).duplicate).toBe(false);
      }
      writeFileSync(gate, '');
      await followed.ended;
      const stored = await need(ctl).ledger.events(run.id, 0, 1_000);
      expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => i + 1));
      const text = stored.filter((e) => e.type === 'token').map((e) => String(e.data.text)).join('');
      expect(text).toContain('own after');
      expect(text).not.toContain('forged');
      expect(stored.at(-1)).toMatchObject({ type: 'done', data: { outcome: 'completed' } });
      expect(followed.events).toEqual(stored);
    } finally {
      await node.stop();
    }
  });

  it("runs a repository run in a worktree of the node's copy, on a branch of its own: its changes come as a patch event, and the branch is pushed to origin; a ref naming nothing ends it unstarted", { timeout: 3 * WAIT_MS }, async () => {
    const controller = need(ctl).service;
    const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' } });
    const origin = path.join(scratch.dir, 'origin.git');
    const copy = path.join(scratch.dir, 'app');
    git(scratch.dir, 'init', '--quiet', '--bare', '-b', 'main', origin);
    mkdirSync(copy);
    git(copy, 'init', '--quiet', '-b', 'main');
    git(copy, 'remote', 'add', 'origin', origin);
    writeFileSync(path.join(copy, 'README.md'), 'hello\n');
    git(copy, 'add', '.');
    git(copy, 'commit', '--quiet', '-m', 'first');
    git(copy, 'push', '--quiet', 'origin', 'HEAD:main');
    const node = await startSwitchboardNode({ url: need(ctl).cluster.server.url, scratch: scratch.dir, name: 'node-repo', repos: { app: copy } });
    try {
      await nodeSeen('node-repo');
      expect(need(ctl).runs.directory.get('node-repo')?.record.repos).toEqual(['app']);

      const run = await controller.submit({ backend: 'shell', prompt: "printf 'fixed\\n' > fix.txt && printf 'hello\\nmore\\n' > README.md && git rev-parse --abbrev-ref HEAD", repo: 'app', push: true });
      expect(run).toMatchObject({ node: 'node-repo', cwd: '.', repo: { name: 'app', branch: `switchboard/runs/${run.id}`, push: true } });
      const followed = follow(run.id);
      await followed.ended;
      expect(followed.events.at(-1)).toMatchObject({ type: 'done', data: { outcome: 'completed' } });
      // It ran on its own branch, not in the node's checkout.
      expect(followed.events.filter((e) => e.type === 'token').map((e) => String(e.data.text)).join('')).toContain(`switchboard/runs/${run.id}`);
      const patch = followed.events.find((e) => e.type === 'patch');
      expect(patch?.data).toMatchObject({ repo: 'app', branch: `switchboard/runs/${run.id}`, files: [{ path: 'README.md', change: 'modified' }, { path: 'fix.txt', change: 'added' }] });
      expect(String(patch?.data.diff)).toContain('+fixed');
      expect(followed.events.some((e) => e.type === 'notice' && String(e.data.text).includes(`pushed switchboard/runs/${run.id} to origin`))).toBe(true);
      // The patch and the push come before its end; the branch on origin holds the change, committed.
      expect(followed.events.findIndex((e) => e.type === 'patch')).toBeLessThan(followed.events.findIndex((e) => e.type === 'done'));
      expect(git(origin, 'show', `switchboard/runs/${run.id}:fix.txt`)).toBe('fixed\n');
      expect(git(origin, 'log', '-1', '--format=%s', `switchboard/runs/${run.id}`).trim()).toBe(`switchboard: run ${run.id}`);
      expect(git(copy, 'status', '--porcelain').trim()).toBe('');
      expect(existsSync(path.join(copy, 'fix.txt'))).toBe(false);

      const lost = await controller.submit({ backend: 'shell', prompt: 'echo never', repo: 'app', ref: 'no-such-branch' });
      const unstarted = follow(lost.id);
      await unstarted.ended;
      expect(await controller.get(lost.id)).toMatchObject({ status: 'failed', reason: 'spawn_failed', message: expect.stringContaining('no-such-branch names no commit') as unknown });
    } finally {
      await node.stop();
    }
  });
});
