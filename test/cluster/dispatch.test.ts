/**
 * Dispatch on a real nats-server: work items on a pool's queue, pulled by nodes with free slots,
 * each run started at most once. Two nodes race for many runs and for two deliveries of one run;
 * a node frozen (SIGSTOP) with a run in hand wakes after the controller abandoned it and does not
 * start it, or, when nobody abandoned it, starts it (nobody else did). A node that pulls a second
 * item of a run it has in hand acknowledges it without starting anything.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { jetstream, type PubAck } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { CLAIMS_BUCKET, WORK_STREAM, WorkDispatcher, WorkPuller, workSubject, type WorkEvent, type WorkItem } from '../../src/cluster/index.js';
import { silentLogger } from '../../src/core/logger.js';
import { EventLog, startTestCluster, type TestCluster } from '../support/cluster.js';
import { startNodeProcess, type NodeProcess } from '../support/cluster-nodes.js';
import { until } from '../support/processes.js';

let cluster: TestCluster;
let dispatcher: WorkDispatcher;
const pullers: WorkPuller[] = [];
const processes: NodeProcess[] = [];
/** Runs going on in-process nodes, ended by a test. */
const going = new Map<string, () => void>();

beforeAll(async () => {
  // The frozen nodes pull pools of their own, so a waiting pull on one is surely theirs.
  cluster = await startTestCluster({ topology: { pools: [{ name: 'main' }, { name: 'cold-a' }, { name: 'cold-b' }] } });
  dispatcher = await WorkDispatcher.open(cluster.controller.nc, silentLogger);
});

afterEach(async () => {
  for (const finish of going.values()) finish();
  going.clear();
  for (const puller of pullers.splice(0)) {
    await puller.stop();
    await puller.idle();
  }
  for (const node of processes.splice(0)) await node.kill();
});

afterAll(async () => {
  await cluster.close();
});

async function node(name: string, slots: number, run: (item: WorkItem) => Promise<void>): Promise<{ puller: WorkPuller; events: EventLog<WorkEvent> }> {
  const connection = await cluster.connect(`node-${name}`);
  const puller = await WorkPuller.start({ nc: connection.nc, pool: 'main', node: name, instance: `${name}-instance`, slots, run, logger: silentLogger, pullExpiresMs: 1_000 });
  pullers.push(puller);
  return { puller, events: new EventLog(puller.onWork) };
}

/** A run that lasts until the test ends it. */
const heldRun = (item: WorkItem): Promise<void> => new Promise((resolve) => going.set(item.run_id, resolve));

const consumerInfo = (pool: string) => cluster.jsm.consumers.info(WORK_STREAM, `pool_${pool}`);

describe('dispatch', () => {
  it('starts each of many runs exactly once across two racing nodes, never beyond their slots', async () => {
    const a = await node('node-a', 2, () => Promise.resolve());
    const b = await node('node-b', 2, () => Promise.resolve());
    const lowest = { free: 2 };
    for (const { puller } of [a, b]) puller.onSlotsChanged((s) => (lowest.free = Math.min(lowest.free, s.free)));
    const runs = Array.from({ length: 20 }, (_, i) => `race-${i}`);
    for (const run of runs) await dispatcher.dispatch({ run_id: run, pool: 'main', payload: { prompt: run } });
    const finished = (): WorkEvent[] => [...a.events.items, ...b.events.items].filter((e) => e.kind === 'finished');
    await until(() => finished().length === runs.length, 'every run to finish');
    const started = [...a.events.items, ...b.events.items].flatMap((e) => (e.kind === 'started' ? [e.item.run_id] : []));
    expect(started.sort()).toEqual([...runs].sort());
    expect(lowest.free).toBeGreaterThanOrEqual(0);
    for (const run of runs) {
      const holder = await dispatcher.claimOf('main', run);
      const ranOn = a.events.items.some((e) => e.kind === 'started' && e.item.run_id === run) ? 'node-a' : 'node-b';
      expect(holder).toMatchObject({ holder: ranOn, role: 'node' });
    }
    // Each item was acknowledged when its run ended, so the queue is empty.
    expect((await cluster.jsm.streams.info(WORK_STREAM)).state.messages).toBe(0);
    const first = [...a.events.items, ...b.events.items].find((e) => e.kind === 'started');
    expect(first).toMatchObject({ item: { pool: 'main', payload: { prompt: expect.stringMatching(/^race-/) } } });
  });

  it('stores a dispatch retried with the same run id once', async () => {
    const first = await dispatcher.dispatch({ run_id: 'retried', pool: 'main', payload: null });
    const again = await dispatcher.dispatch({ run_id: 'retried', pool: 'main', payload: null });
    expect(first.duplicate).toBe(false);
    expect(again).toEqual({ streamSeq: first.streamSeq, duplicate: true });
    // Taken off the queue for the next tests.
    expect((await dispatcher.abandon('main', 'retried', first.streamSeq)).won).toBe(true);
  });

  it('lets only one of two nodes start a run delivered twice; the other finds it claimed', async () => {
    const a = await node('node-c', 1, heldRun);
    const b = await node('node-d', 1, heldRun);
    // Two items for one run, as a controller that dispatched it again after the duplicate window would.
    const js = jetstream(cluster.controller.nc);
    for (let i = 0; i < 2; i++) await js.publish(workSubject('main'), JSON.stringify({ run_id: 'twice', pool: 'main', payload: i, dispatched_at: Date.now() }));
    const events = (): WorkEvent[] => [...a.events.items, ...b.events.items];
    await until(() => events().some((e) => e.kind === 'started') && events().some((e) => e.kind === 'claim-lost'), 'one start and one lost claim');
    expect(events().filter((e) => e.kind === 'started')).toHaveLength(1);
    const starter = a.events.items.some((e) => e.kind === 'started') ? 'node-c' : 'node-d';
    const lost = events().find((e) => e.kind === 'claim-lost');
    expect(lost).toMatchObject({ holder: { holder: starter, role: 'node', instance: `${starter}-instance` } });
  });

  it('acknowledges a second item of a run a node has in hand without starting it, and gives its slot back at once', async () => {
    const a = await node('node-e', 2, heldRun);
    // Two items for one run on one pool, as a controller that restarted past the duplicate window
    // sends a run whose first item is still queued: both come to the same node, whose claim lets both through.
    const js = jetstream(cluster.controller.nc);
    const items = [];
    for (let i = 0; i < 2; i++) items.push(await js.publish(workSubject('main'), JSON.stringify({ run_id: 'in-hand', pool: 'main', payload: i, dispatched_at: Date.now() })));
    const [first, second] = items as [PubAck, PubAck];
    const duplicate = await a.events.waitFor((e) => e.kind === 'duplicate', 'the second item refused as a duplicate');
    expect(duplicate).toMatchObject({ item: { run_id: 'in-hand', payload: 1 }, streamSeq: second.seq });
    // The first may still be winning its claim when the second comes: it is in hand from its delivery on.
    await a.events.waitFor((e) => e.kind === 'started', 'the run started');
    expect(a.events.items.filter((e) => e.kind === 'started')).toMatchObject([{ item: { run_id: 'in-hand', payload: 0 } }]);
    await until(() => a.puller.slots.free === 1, 'the duplicate\'s slot given back while the run goes on');
    expect(await dispatcher.isQueued(second.seq)).toBe(false);
    expect(await dispatcher.isQueued(first.seq)).toBe(true);

    going.get('in-hand')?.();
    await a.events.waitFor((e) => e.kind === 'finished' && e.item.run_id === 'in-hand', 'the run finished');
    await until(async () => !(await dispatcher.isQueued(first.seq)), 'the first item acknowledged once its run ended');
    expect(a.events.items.filter((e) => e.kind === 'started')).toHaveLength(1);
    expect(a.puller.slots.free).toBe(2);
  });

  it('keeps a frozen node that wakes after the controller abandoned its run from starting it', async () => {
    const frozen = await startNodeProcess({ url: cluster.server.url, name: 'frozen', pool: 'cold-a', pullExpiresMs: 30_000 });
    processes.push(frozen);
    // Its pull is waiting on the server: the run goes to it.
    await until(async () => (await consumerInfo('cold-a')).num_waiting >= 1, 'the frozen node to wait for work');
    frozen.signal('SIGSTOP');
    const { streamSeq } = await dispatcher.dispatch({ run_id: 'late', pool: 'cold-a', payload: null });
    await until(async () => (await consumerInfo('cold-a')).num_ack_pending === 1, 'the run to be delivered to the frozen node');
    expect(await dispatcher.abandon('cold-a', 'late', streamSeq)).toEqual({ won: true });
    frozen.signal('SIGCONT');
    await frozen.waitFor((line) => line.work === 'claim-lost' && line.run === 'late', 'the run found claimed');
    expect(frozen.lines.some((line) => line.work === 'started')).toBe(false);
    expect(await dispatcher.claimOf('cold-a', 'late')).toMatchObject({ holder: 'controller', role: 'controller' });
  });

  it('lets a frozen node that wakes start its run when nobody abandoned it; abandoning it then fails, naming the node', async () => {
    const frozen = await startNodeProcess({ url: cluster.server.url, name: 'sleeper', pool: 'cold-b', pullExpiresMs: 30_000 });
    processes.push(frozen);
    await until(async () => (await consumerInfo('cold-b')).num_waiting >= 1, 'the node to wait for work');
    frozen.signal('SIGSTOP');
    await dispatcher.dispatch({ run_id: 'woken', pool: 'cold-b', payload: null });
    await until(async () => (await consumerInfo('cold-b')).num_ack_pending === 1, 'the run to be delivered to the frozen node');
    frozen.signal('SIGCONT');
    await frozen.waitFor((line) => line.work === 'started' && line.run === 'woken', 'the run started');
    const outcome = await dispatcher.abandon('cold-b', 'woken');
    expect(outcome).toMatchObject({ won: false, holder: { holder: 'sleeper', role: 'node' } });
    frozen.send('finish woken');
    await frozen.waitFor((line) => line.work === 'finished' && line.run === 'woken', 'the run finished');
  });

  it('counts a claim the run’s own node made under run.<id> before it was upgraded, and fences that key when it gives a run up; one naming another node there counts for nothing', async () => {
    const kv = await new Kvm(cluster.controller.nc).open(CLAIMS_BUCKET, { allow_direct: true });
    const older = { holder: 'main', role: 'node', instance: 'older-instance', at: Date.now() };
    await kv.create('run.legacy-1', JSON.stringify(older));
    expect(await dispatcher.claimOf('main', 'legacy-1')).toEqual(older);
    expect(await dispatcher.abandon('main', 'legacy-1')).toEqual({ won: false, holder: older });
    // Given up: the older key is taken too, so a node not yet upgraded finds the run taken there.
    expect(await dispatcher.claimOf('main', 'legacy-2')).toBeUndefined();
    expect(await dispatcher.abandon('main', 'legacy-2')).toEqual({ won: true });
    expect(await dispatcher.claimOf('main', 'legacy-2')).toMatchObject({ holder: 'controller', role: 'controller' });
    expect((await kv.get('run.legacy-2'))?.json()).toMatchObject({ holder: 'controller', role: 'controller' });
    await expect(kv.create('run.legacy-2', JSON.stringify(older))).rejects.toThrow(/wrong last sequence/);
    // Under its pool: the same run id of another pool is another claim.
    expect(await dispatcher.claimOf('cold-a', 'legacy-3')).toBeUndefined();
    // Another node's name under the older key (any older node's user may write there): not the run's claim.
    await kv.create('run.legacy-4', JSON.stringify({ ...older, holder: 'intruder' }));
    expect(await dispatcher.claimOf('main', 'legacy-4')).toBeUndefined();
    expect(await dispatcher.abandon('main', 'legacy-4')).toEqual({ won: true });
  });
});
