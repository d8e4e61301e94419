/**
 * Node leases and the controller's directory on a real nats-server, with a 4 s lease TTL: a lease
 * is created, renewed and deleted on leave, a second live node of the name is refused, a lease
 * that is gone lapses and is registered again under a new epoch; the directory sees nodes join,
 * change, leave, and get lost when their process is killed or frozen past the TTL. Every wait is
 * on an event or a line a process printed; nothing sleeps.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Kvm } from '@nats-io/kv';
import { NodeDirectory, NodeLease, NODES_BUCKET, type DirectoryEvent, type LeaseChange, type NodeDescription } from '../../src/cluster/index.js';
import { silentLogger } from '../../src/core/logger.js';
import { EventLog, startTestCluster, type TestCluster } from '../support/cluster.js';
import { startNodeProcess, type NodeProcess } from '../support/cluster-nodes.js';
import { within } from '../support/switchboard-node.js';

/**
 * Short, so the tests that wait for a lease to be lost stay short; not shorter, since every other
 * test needs its leases held: a renewal is due every third of it, so a stall of the test process
 * (or the server) longer than two thirds of it lapses a lease. 2 s left a loaded 2-core CI
 * machine 1.3 s; 4 s leaves it 2.7 s.
 */
const TTL_MS = 4_000;
/** Directories opened one after another while a lease is rewritten without pause (kv.keys hung within 4 of them). */
const OPENINGS = 20;
/** A bound on one opening, which is a few requests; never a measure of how fast it was. */
const OPEN_WAIT_MS = 20_000;

let cluster: TestCluster;
let directory: NodeDirectory;
let changes: EventLog<DirectoryEvent>;
const leases: NodeLease[] = [];
const processes: NodeProcess[] = [];

beforeAll(async () => {
  cluster = await startTestCluster({ topology: { nodeTtlMs: TTL_MS } });
  directory = await NodeDirectory.open({ nc: cluster.controller.nc, logger: silentLogger });
  changes = new EventLog(directory.onChange);
});

afterEach(async () => {
  for (const lease of leases.splice(0)) await lease.leave();
  for (const node of processes.splice(0)) await node.kill();
});

afterAll(async () => {
  try {
    changes.dispose();
    await directory.close();
  } finally {
    // Even when the directory never opened (a beforeAll that failed half-way): the server goes.
    await cluster.close();
  }
});

const describeNode = (name: string, extra: Partial<NodeDescription> = {}): NodeDescription => ({ name, labels: ['linux'], clis: [{ name: 'claude', version: '2.1.0' }], repos: ['switchboard'], slots: { total: 2, free: 2 }, ...extra });

async function register(name: string, extra: Partial<NodeDescription> = {}): Promise<NodeLease> {
  const connection = await cluster.connect(`node-${name}`);
  const lease = await NodeLease.register({ nc: connection.nc, node: describeNode(name, extra), logger: silentLogger });
  leases.push(lease);
  return lease;
}

const isEvent = (kind: DirectoryEvent['kind'], name: string, epoch?: number) => (e: DirectoryEvent) => e.kind === kind && e.node.record.name === name && (epoch === undefined || e.node.record.epoch === epoch);

describe('a node lease', () => {
  it('is created, renewed every third of the TTL, and refused to a second live node of the name', async () => {
    const lease = await register('alpha');
    expect(lease.ttlMs).toBe(TTL_MS);
    expect(lease.state).toMatchObject({ kind: 'held', epoch: 1 });
    const log = new EventLog<LeaseChange>(lease.onStateChange);
    // Two renewals, each a new revision of the same epoch.
    const renewals = (): number => log.items.filter(({ from, to }) => from.kind === 'held' && to.kind === 'held' && to.revision > from.revision).length;
    await log.waitFor(() => renewals() >= 2, 'two renewals');
    expect(log.items.every(({ to }) => to.kind === 'held' && to.epoch === 1)).toBe(true);
    log.dispose();

    const other = await cluster.connect('node-alpha-2');
    await expect(NodeLease.register({ nc: other.nc, node: describeNode('alpha'), logger: silentLogger })).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringContaining("already registered as 'alpha'") });

    const joined = await changes.waitFor(isEvent('joined', 'alpha'), 'alpha joining');
    expect(joined.node.record).toMatchObject({ name: 'alpha', labels: ['linux'], clis: [{ name: 'claude', version: '2.1.0' }], slots: { total: 2, free: 2 }, epoch: 1, instance: lease.record.instance });
  });

  it('takes a name whose key holds something that is no node record only once it stayed so for a lease time: a live node of the name keeps it', async () => {
    // What any client can have the server write under a key: a JetStream API answer sent onto it.
    const kv = await new Kvm(cluster.controller.nc).open(NODES_BUCKET);
    const answer = '{"type":"io.nats.jetstream.api.v1.consumer_info_response"}';
    const live = await register('iota');
    await kv.put('node.iota', answer);
    const other = await cluster.connect('node-iota-2');
    await expect(NodeLease.register({ nc: other.nc, node: describeNode('iota'), logger: silentLogger })).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(live.state.kind).toBe('held');
    expect((await kv.get('node.iota'))?.json<{ instance?: string }>().instance).toBe(live.record.instance);
    // Nobody's name: taken.
    await kv.put('node.kappa', answer);
    expect((await register('kappa')).state.kind).toBe('held');
  });

  it('tells a slot change at once, and the directory chooses the least loaded node that fits', async () => {
    const beta = await register('beta', { slots: { total: 4, free: 4 } });
    const gamma = await register('gamma', { slots: { total: 2, free: 2 }, labels: ['linux', 'gpu'] });
    await changes.waitFor(isEvent('joined', 'gamma'), 'gamma joining');
    await changes.waitFor(isEvent('joined', 'beta'), 'beta joining');
    beta.setSlots({ total: 4, free: 1 });
    await changes.waitFor((e) => e.kind === 'updated' && e.node.record.name === 'beta' && e.node.record.slots.free === 1, 'beta with one free slot');
    expect(directory.choose({ backend: 'claude' }).map((r) => r.name).filter((n) => n !== 'alpha')).toEqual(['gamma', 'beta']);
    expect(directory.choose({ backend: 'claude', labels: ['gpu'] }).map((r) => r.name)).toEqual(['gamma']);
    expect(directory.choose({ backend: 'codex' })).toEqual([]);
    gamma.setSlots({ total: 2, free: 0 });
    await changes.waitFor((e) => e.kind === 'updated' && e.node.record.name === 'gamma' && e.node.record.slots.free === 0, 'gamma full');
    expect(directory.choose({ backend: 'claude', labels: ['gpu'] })).toEqual([]);
  });

  it('is deleted when the node leaves, which the directory tells as left', async () => {
    const lease = await register('delta');
    await changes.waitFor(isEvent('joined', 'delta'), 'delta joining');
    leases.splice(leases.indexOf(lease), 1);
    await lease.leave();
    expect(lease.state).toEqual({ kind: 'left', evidence: 'the node left the cluster' });
    await changes.waitFor(isEvent('left', 'delta'), 'delta leaving');
    expect(directory.get('delta')).toBeUndefined();
    // The delete marker, or nothing: the marker ages out of the bucket like any record, one TTL
    // after the leave, which a loaded machine may take to get here. Never the lease itself.
    const kv = await new Kvm(cluster.controller.nc).open(NODES_BUCKET);
    expect((await kv.get('node.delta'))?.operation ?? 'aged out').toMatch(/^(DEL|aged out)$/);
  });

  it('lapses when its key is gone, says so, and registers again under the next epoch', async () => {
    const lease = await register('epsilon');
    const log = new EventLog<LeaseChange>(lease.onStateChange);
    await changes.waitFor(isEvent('joined', 'epsilon', 1), 'epsilon joining');
    const kv = await new Kvm(cluster.controller.nc).open(NODES_BUCKET);
    await kv.delete('node.epsilon');
    await log.waitFor(({ to }) => to.kind === 'held' && to.epoch === 2, 'a new registration');
    // From the lapse on: a renewal due before the delete (every third of the TTL, and a loaded
    // machine may take that long to get to the delete) is a `held:1` before it, and is fine.
    const kinds = log.items.map(({ to }) => `${to.kind}:${'epoch' in to ? to.epoch : ''}`).filter((k, i, all) => k !== all[i - 1]);
    expect(kinds.slice(kinds.indexOf('lapsed:1'))).toEqual(['lapsed:1', 'registering:2', 'held:2']);
    expect(kinds.slice(0, kinds.indexOf('lapsed:1')).every((k) => k === 'held:1')).toBe(true);
    const lapsed = log.items.find(({ to }) => to.kind === 'lapsed')!.to;
    expect(lapsed).toMatchObject({ evidence: expect.stringContaining('wrong last sequence') });
    await changes.waitFor(isEvent('joined', 'epsilon', 2), 'epsilon joining again');
    log.dispose();
  });
});

describe('the node directory', () => {
  it('opens, knowing a node, while that node writes its lease without pause', async () => {
    const lease = await register('eta');
    // Every write of the lease starts the next one: the bucket never rests, which is when a lister
    // that waits for "nothing pending" or an idle heartbeat (kv.keys) never ended.
    let writing = true;
    let writes = 0;
    const rewrite = lease.onStateChange(({ to }) => {
      if (!writing || to.kind !== 'held') return;
      writes++;
      lease.setSlots({ total: 2, free: writes % 2 });
    });
    lease.setSlots({ total: 2, free: 1 });
    try {
      for (let i = 0; i < OPENINGS; i++) {
        const opened = await within(NodeDirectory.open({ nc: cluster.controller.nc, logger: silentLogger }), OPEN_WAIT_MS, () => {
          throw new Error(`opening ${i + 1} of the directory did not end within ${OPEN_WAIT_MS} ms (${writes} writes of the lease so far)`);
        });
        try {
          expect(opened.get('eta')?.record).toMatchObject({ name: 'eta', epoch: 1 });
        } finally {
          await opened.close();
        }
      }
      expect(writes).toBeGreaterThan(OPENINGS);
    } finally {
      writing = false;
      rewrite.dispose();
    }
  });

  it('tells a node process killed with SIGKILL as lost, once the server has dropped its lease', async () => {
    const node = await startNodeProcess({ url: cluster.server.url, name: 'zeta' });
    processes.push(node);
    await changes.waitFor(isEvent('joined', 'zeta'), 'zeta joining');
    node.signal('SIGKILL');
    await node.exited;
    const lost = await changes.waitFor(isEvent('lost', 'zeta'), 'zeta lost');
    expect(lost).toMatchObject({ evidence: expect.stringContaining('the lease is gone from the server') });
    expect(directory.get('zeta')).toBeUndefined();
  });

  it('tells a node killed as lost though something that is no node record is written under its key again and again', async () => {
    const node = await startNodeProcess({ url: cluster.server.url, name: 'theta' });
    processes.push(node);
    await changes.waitFor(isEvent('joined', 'theta'), 'theta joining');
    node.signal('SIGKILL');
    await node.exited;
    // What any client can have the server write there: a JetStream API answer sent onto the key.
    const kv = await new Kvm(cluster.controller.nc).open(NODES_BUCKET);
    const junk = setInterval(() => void kv.put('node.theta', '{"type":"io.nats.jetstream.api.v1.stream_info_response"}').catch(() => undefined), TTL_MS / 4);
    try {
      const lost = await changes.waitFor(isEvent('lost', 'theta'), 'theta lost');
      expect(lost).toMatchObject({ evidence: expect.stringContaining('no node record') });
    } finally {
      clearInterval(junk);
    }
  });

  it('tells a node frozen past the TTL as lost; thawed, the node finds its lease lapsed and joins under a new epoch', async () => {
    const node = await startNodeProcess({ url: cluster.server.url, name: 'eta' });
    processes.push(node);
    await changes.waitFor(isEvent('joined', 'eta', 1), 'eta joining');
    node.signal('SIGSTOP');
    await changes.waitFor(isEvent('lost', 'eta'), 'eta lost');
    node.signal('SIGCONT');
    await node.waitFor((line) => line.lease === 'lapsed' && line.epoch === 1, 'its lease lapsed');
    await node.waitFor((line) => line.lease === 'held' && line.epoch === 2, 'its lease held again');
    await changes.waitFor(isEvent('joined', 'eta', 2), 'eta joining under epoch 2');
    node.send('leave');
    await changes.waitFor(isEvent('left', 'eta'), 'eta leaving');
    await node.exited;
  });
});
