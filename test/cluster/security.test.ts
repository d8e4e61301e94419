/**
 * Security on a real nats-server with NKey users and TLS from a test CA: a node's user with only
 * nodePermissions() does its whole job (lease, work, claims, cancel marks read, events published
 * and read back, control both ways, its panes served to the controller) and
 * nothing of another node's; an unknown key and no key are refused; TLS is verified against the
 * CA given, and mutual TLS wants the client's certificate.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { createUser } from '@nats-io/nkeys';
import {
  CLAIMS_BUCKET,
  connectCluster,
  ConversationShelf,
  ensurePool,
  EVENTS_STREAM,
  controllerControlClient,
  EventIntake,
  EventPublisher,
  lastEventSeq,
  nodeControlClient,
  nodeInboxPrefix,
  NodeLease,
  nodePermissions,
  NODES_BUCKET,
  parseNatsOptions,
  RunClaims,
  serveControllerControl,
  serveNodeControl,
  WorkDispatcher,
  WorkPuller,
  type DeliveredEvent,
  type WorkEvent,
} from '../../src/cluster/index.js';
import { silentLogger } from '../../src/core/logger.js';
import { AgentCatalog, AgentPanes } from '../../src/agents/index.js';
import { LogService } from '../../src/logs/index.js';
import { ClusterPanes, NodePaneServer } from '../../src/cluster-panes/index.js';
import { PaneRegistry } from '../../src/pane/index.js';
import { errorMessage } from '../../src/core/errors.js';
import { until } from '../support/processes.js';
import { EventLog, startTestCluster, type TestCluster } from '../support/cluster.js';
import { startNatsServer } from '../support/nats-server.js';
import { Emitter } from '../../src/core/emitter.js';

let cluster: TestCluster;
/** A bound on a control reply that must come: ControlClient's default 5 s is not one on a loaded CI machine. */
const REPLY_MS = 30_000;
/**
 * node-a under the block of permissions earlier versions gave a node: with a direct get of its own
 * events, which a node may no longer make (reflected.ts). What the server sends on such a node's
 * say-so is refused all the same, for a cluster not yet given the new block.
 */
function olderNodePermissions(): ReturnType<typeof nodePermissions> {
  const current = nodePermissions('node-a', ['main']);
  return { ...current, publish: { allow: [...current.publish.allow, '$JS.API.DIRECT.GET.SB_EVENTS.sb.events.node-a.*'] } };
}
/** The flags of node-a's user: its seed and the CA, as `switchboard node` would take them. */
let nodeFlags: { nkeyFile: string; caFile: string };

beforeAll(async () => {
  cluster = await startTestCluster({
    server: { tls: 'server', users: [{ name: 'controller' }, { name: 'node-a', permissions: nodePermissions('node-a', ['main']) }, { name: 'older-node-a', permissions: olderNodePermissions() }] },
    controllerFlags: (server) => ({ nkeyFile: server.user('controller').seedFile, caFile: server.tls!.caFile }),
  });
  nodeFlags = { nkeyFile: cluster.server.user('node-a').seedFile, caFile: cluster.server.tls!.caFile };
});

afterAll(async () => {
  await cluster.close();
});

describe('a node user with only its permissions', () => {
  it('keeps its lease, takes and claims work, publishes events and answers and asks control requests', async () => {
    const node = await cluster.connect('node-a', nodeFlags, nodeInboxPrefix('node-a'));
    expect(node.nc.info?.tls_required).toBe(true);
    const lease = await NodeLease.register({ nc: node.nc, node: { name: 'node-a', labels: [], clis: [], repos: [], slots: { total: 1, free: 1 } }, logger: silentLogger });

    const serving = serveNodeControl(node.nc, 'node-a', { ping: () => Promise.resolve({ node: 'node-a', epoch: lease.record.epoch }), cancel: () => Promise.resolve({ found: false }), interrupt: () => Promise.resolve({ found: false }), shelve: () => Promise.resolve({ shelved: false }) }, silentLogger);
    await node.nc.flush();
    expect(await nodeControlClient(cluster.controller.nc, 'node-a', REPLY_MS).call('ping', {})).toEqual({ node: 'node-a', epoch: 1 });
    const controllerServing = serveControllerControl(cluster.controller.nc, { ping: () => Promise.resolve({ at: 1 }), join: ({ node }) => Promise.resolve({ pool: node }), refused: () => Promise.resolve({ ended: false }), last_event: () => Promise.resolve({ seq: 0 }) }, silentLogger);
    await cluster.controller.nc.flush();
    expect(await controllerControlClient(node.nc, 'node-a', REPLY_MS).call('ping', { node: 'node-a' })).toEqual({ at: 1 });
    // Not under another node's name (the server refuses it), nor as another node under its own (the controller does).
    await expect(controllerControlClient(node.nc, 'node-b', REPLY_MS).call('ping', { node: 'node-b' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(controllerControlClient(node.nc, 'node-a', REPLY_MS).call('refused', { node: 'node-b', run_id: 'secure-x', reason: 'made up' })).rejects.toMatchObject({ code: 'FORBIDDEN', message: 'node node-a may not refused as node node-b' });

    const written = new Emitter<DeliveredEvent>();
    const writes = new EventLog(written.event);
    const intake = await EventIntake.start({ nc: cluster.controller.nc, sink: { lastSeq: () => Promise.resolve(0), write: (d) => Promise.resolve(written.fire(d)) }, logger: silentLogger });
    const publisher = new EventPublisher({ nc: node.nc, node: 'node-a', logger: silentLogger });
    const puller = await WorkPuller.start({
      nc: node.nc,
      pool: 'main',
      node: 'node-a',
      instance: lease.record.instance,
      slots: 1,
      logger: silentLogger,
      pullExpiresMs: 1_000,
      run: async (item) => {
        await publisher.publish({ schema_version: 'v2', run_id: item.run_id, seq: 1, type: 'done' });
      },
    });
    const work = new EventLog<WorkEvent>(puller.onWork);
    try {
      const dispatcher = await WorkDispatcher.open(cluster.controller.nc, silentLogger);
      await dispatcher.dispatch({ run_id: 'secure-1', pool: 'main', payload: null });
      expect(await work.waitFor((e) => e.kind === 'finished', 'the run to finish')).toEqual({ kind: 'finished', item: expect.objectContaining({ run_id: 'secure-1' }) });
      expect(await dispatcher.claimOf('main', 'secure-1')).toMatchObject({ holder: 'node-a' });
      expect(await writes.waitFor((d) => d.event.run_id === 'secure-1', 'its event')).toMatchObject({ node: 'node-a', event: { seq: 1 } });
      // Its own lease is its to delete.
      await lease.leave();
      expect(lease.state.kind).toBe('left');
    } finally {
      work.dispose();
      writes.dispose();
      await puller.stop();
      await intake.close();
      serving.dispose();
      controllerServing.dispose();
      // A test that failed before leaving: else its renewals go on against a closed connection.
      await lease.leave();
    }
  });

  it("may not write another node's lease or register under its name", async () => {
    const node = await cluster.connect('node-a-2', nodeFlags, nodeInboxPrefix('node-a'));
    const kv = await new Kvm(node.nc).open(NODES_BUCKET, { allow_direct: true });
    await expect(kv.put('node.node-b', '{}')).rejects.toThrow(/Permissions Violation for Publish to "\$KV\.sb_nodes\.node\.node-b"/);
    await expect(NodeLease.register({ nc: node.nc, node: { name: 'node-b', labels: [], clis: [], repos: [], slots: { total: 1, free: 1 } }, logger: silentLogger })).rejects.toMatchObject({ code: 'CONNECTION_FAILED', message: expect.stringContaining('Permissions Violation') });
  });
});

describe("a node user and its CLIs' conversations", () => {
  it("keeps copies on its own shelf (written, replaced, read back whole), and may neither read nor write another node's", { timeout: 60_000 }, async () => {
    // The controller lays out each node's shelf at its join.
    await ConversationShelf.ensure(cluster.controller.nc, 'node-a');
    await ConversationShelf.ensure(cluster.controller.nc, 'node-b');
    const otherShelf = await ConversationShelf.open(cluster.controller.nc, 'node-b');
    await otherShelf.put('claude', 'of-node-b', { data: Buffer.from('node-b only'), relative: 'projects/-w/of-node-b.jsonl' });
    const node = await cluster.connect('node-a-shelf', nodeFlags, nodeInboxPrefix('node-a'));
    const own = await ConversationShelf.open(node.nc, 'node-a');
    // Larger than a chunk (128 KiB), so it goes as several.
    const first = Buffer.alloc(300 * 1024, 'first turn\n');
    await own.put('claude', 'conv-1', { data: first, relative: 'projects/-w/conv-1.jsonl' });
    const second = Buffer.concat([first, Buffer.from('second turn\n')]);
    await own.put('claude', 'conv-1', { data: second, relative: 'projects/-w/conv-1.jsonl' });
    const read = await own.get('claude', 'conv-1');
    expect(Buffer.from(read?.data ?? []).equals(second)).toBe(true);
    expect(read?.relative).toBe('projects/-w/conv-1.jsonl');
    expect(await own.get('claude', 'never-kept')).toBeUndefined();
    // What the controller reads of it for a resume elsewhere.
    expect(Buffer.from((await (await ConversationShelf.open(cluster.controller.nc, 'node-a')).get('claude', 'conv-1'))?.data ?? []).equals(second)).toBe(true);
    // And copies, chunk by chunk, onto the shelf of the node a resume goes to.
    expect(await (await ConversationShelf.open(cluster.controller.nc, 'node-a')).copyTo('claude', 'conv-1', otherShelf)).toBe(second.length);
    const carried = await otherShelf.get('claude', 'conv-1');
    expect(Buffer.from(carried?.data ?? []).equals(second)).toBe(true);
    expect(carried?.relative).toBe('projects/-w/conv-1.jsonl');

    const other = await ConversationShelf.open(node.nc, 'node-b');
    await expect(other.get('claude', 'of-node-b')).rejects.toThrow(/Permissions Violation/);
    await expect(other.put('claude', 'of-node-b', { data: Buffer.from('overwritten'), relative: 'projects/-w/of-node-b.jsonl' })).rejects.toThrow(/Permissions Violation/);
    expect(Buffer.from((await otherShelf.get('claude', 'of-node-b'))?.data ?? []).toString()).toBe('node-b only');
  });

  it('may not make a consumer, even on its own shelf (one delivers wherever its maker says); a link it shelves is not followed, nor a copy unlike its digest carried', { timeout: 60_000 }, async () => {
    await ConversationShelf.ensure(cluster.controller.nc, 'node-a');
    await ConversationShelf.ensure(cluster.controller.nc, 'node-b');
    await (await ConversationShelf.open(cluster.controller.nc, 'node-b')).put('claude', 'secret-of-b', { data: Buffer.from('node-b only'), relative: 'projects/-w/secret-of-b.jsonl' });
    const node = await cluster.connect('node-a-consumer', nodeFlags, nodeInboxPrefix('node-a'));
    const jsm = await jetstreamManager(node.nc, { checkAPI: false });
    await expect(jsm.consumers.add('OBJ_sb_conversations_node-a', { name: 'to-node-b', deliver_subject: 'sb.node.node-b.ctl', ack_policy: AckPolicy.None })).rejects.toThrow(/Permissions Violation/);
    // A copy that is a link to node-b's conversation, written by node-a on its own shelf.
    const name = 'claude/linked';
    const metaSubject = `$O.sb_conversations_node-a.M.${Buffer.from(name).toString('base64url').padEnd(Math.ceil(name.length / 3) * 4, '=')}`;
    const link = { name, bucket: 'sb_conversations_node-a', nuid: 'made-up', size: 11, chunks: 1, mtime: new Date().toISOString(), digest: '', deleted: false, options: { link: { bucket: 'sb_conversations_node-b', name: 'claude/secret-of-b' } } };
    await jetstream(node.nc, { checkAPI: false }).publish(metaSubject, JSON.stringify(link));
    // The controller reads node-a's shelf for a resume elsewhere: refused, node-b's copy never read.
    await expect((await ConversationShelf.open(cluster.controller.nc, 'node-a')).get('claude', 'linked')).rejects.toMatchObject({ code: 'INVALID_REQUEST' });

    // A copy whose bytes are not what its digest says is not carried: the shelf it would go to keeps what it had.
    const targetShelf = await ConversationShelf.open(cluster.controller.nc, 'node-b');
    await targetShelf.put('claude', 'forged', { data: Buffer.from('kept\n'), relative: 'projects/-w/forged.jsonl' });
    const forged = 'claude/forged';
    const chunk = Buffer.alloc(200 * 1024, 'x');
    const js = jetstream(node.nc, { checkAPI: false });
    await js.publish('$O.sb_conversations_node-a.C.forged-nuid', chunk);
    await js.publish(`$O.sb_conversations_node-a.M.${Buffer.from(forged).toString('base64url').padEnd(Math.ceil(forged.length / 3) * 4, '=')}`, JSON.stringify({ name: forged, bucket: 'sb_conversations_node-a', nuid: 'forged-nuid', size: chunk.length, chunks: 1, mtime: new Date().toISOString(), digest: 'SHA-256=not-its-digest', deleted: false, options: { max_chunk_size: 256 * 1024 } }));
    await expect((await ConversationShelf.open(cluster.controller.nc, 'node-a')).copyTo('claude', 'forged', targetShelf)).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    expect(Buffer.from((await targetShelf.get('claude', 'forged'))?.data ?? []).toString()).toBe('kept\n');
  });
});

describe("a node user and the server's answers to it", () => {
  it('may make no direct get: one answers with stored bytes on whatever subject its asker names', { timeout: 60_000 }, async () => {
    const node = await cluster.connect('node-a-direct', nodeFlags, nodeInboxPrefix('node-a'));
    const jsm = await jetstreamManager(node.nc, { checkAPI: false });
    await expect(jsm.direct.getMessage('SB_EVENTS', { last_by_subj: 'sb.events.node-a.any' })).rejects.toThrow(/Permissions Violation/);
    await expect(jsm.direct.getMessage(`KV_${NODES_BUCKET}`, { last_by_subj: `$KV.${NODES_BUCKET}.node.node-a` })).rejects.toThrow(/Permissions Violation/);
    await expect(jsm.direct.getMessage(`KV_${CLAIMS_BUCKET}`, { last_by_subj: `$KV.${CLAIMS_BUCKET}.cancel.any` })).rejects.toThrow(/Permissions Violation/);
  });

  it("under an older block with direct gets, cannot have one's answer put bytes of its own on another node's subjects: node-b's control and work queue refuse them", { timeout: 60_000 }, async () => {
    const node = await cluster.connect('node-a-reflect', { nkeyFile: cluster.server.user('older-node-a').seedFile, caFile: cluster.server.tls!.caFile }, nodeInboxPrefix('node-a'));
    // node-b, standing in on the controller's connection: its control requests and its work queue.
    const cancels: string[] = [];
    const serving = serveNodeControl(cluster.controller.nc, 'node-b', { ping: () => Promise.resolve({ node: 'node-b', epoch: 1 }), cancel: ({ run_id }) => (cancels.push(run_id), Promise.resolve({ found: true })), interrupt: () => Promise.resolve({ found: false }), shelve: () => Promise.resolve({ shelved: false }) }, silentLogger);
    await ensurePool(await jetstreamManager(cluster.controller.nc), { name: 'node-b' });
    const ran: string[] = [];
    const puller = await WorkPuller.start({ nc: cluster.controller.nc, pool: 'node-b', node: 'node-b', instance: 'reflect', slots: 1, logger: silentLogger, pullExpiresMs: 1_000, run: (item) => (ran.push(item.run_id), Promise.resolve()) });
    const work = new EventLog<WorkEvent>(puller.onWork);
    // What arrives on node-b's control subject, as it comes (one subscription, told to every listener).
    const arriving = new Emitter<string>();
    const raw = cluster.controller.nc.subscribe('sb.node.node-b.ctl', { callback: (_err, m) => arriving.fire(m.string()) });
    const seen = new EventLog<string>(arriving.event);
    // Both subscriptions on node-b's control subject are the server's before anything is sent there.
    await cluster.controller.nc.flush();
    try {
      // node-a stores bytes of its choosing on its own event subject, as it may...
      const js = jetstream(node.nc, { checkAPI: false });
      await js.publish('sb.events.node-a.forged-ctl', JSON.stringify({ v: 1, op: 'cancel', params: { run_id: 'victim' } }));
      await js.publish('sb.events.node-a.forged-work', JSON.stringify({ run_id: 'forged-run', pool: 'node-b', payload: null, dispatched_at: Date.now() }));
      // ...and asks for them back by direct get, naming node-b's subjects to answer on: the server does.
      node.nc.publish('$JS.API.DIRECT.GET.SB_EVENTS.sb.events.node-a.forged-ctl', '', { reply: 'sb.node.node-b.ctl' });
      node.nc.publish('$JS.API.DIRECT.GET.SB_EVENTS.sb.events.node-a.forged-work', '', { reply: 'sb.work.node-b' });
      expect(await seen.waitFor((text) => text.includes('victim'), 'the forged request on node-b\'s control subject')).toContain('"op":"cancel"');
      // The work queue's stream kept the forged item; node-b's puller refuses it, and runs nothing.
      expect(await work.waitFor((e) => e.kind === 'refused', 'the forged work item refused')).toMatchObject({ kind: 'refused', reason: expect.stringContaining("on another client's say-so") });
      // node-b answers a real request after it: the forged cancel never reached its handler.
      expect(await nodeControlClient(cluster.controller.nc, 'node-b', REPLY_MS).call('ping', {})).toEqual({ node: 'node-b', epoch: 1 });
      expect(cancels).toEqual([]);
      expect(ran).toEqual([]);
    } finally {
      seen.dispose();
      raw.unsubscribe();
      work.dispose();
      await puller.stop();
      serving.dispose();
    }
  });
});

describe("a node user and the server's answers to it, on the key-value buckets", () => {
  it("cannot take another node's lease nor stop another node's run by having a JetStream API answer sent onto their keys", { timeout: 60_000 }, async () => {
    const node = await cluster.connect('node-a-junk', nodeFlags, nodeInboxPrefix('node-a'));
    const controllerKv = await new Kvm(cluster.controller.nc).open(NODES_BUCKET);
    const controllerClaims = await new Kvm(cluster.controller.nc).open(CLAIMS_BUCKET);
    /** node-a asks for something it may ask for, naming `subject` to answer on: the server answers there. */
    const answerOnto = async (subject: string, bucket: typeof controllerKv, key: string): Promise<void> => {
      node.nc.publish(`$JS.API.STREAM.INFO.KV_${NODES_BUCKET}`, '', { reply: subject });
      await until(async () => (await bucket.get(key))?.string().includes('io.nats.jetstream.api') === true, `the answer stored under ${key}`);
    };
    const description = (name: string): Parameters<typeof NodeLease.register>[0]['node'] => ({ name, labels: [], clis: [], repos: [], slots: { total: 1, free: 1 } });

    // A lease held by node-b: the answer written over it is written over in turn at its next renewal.
    const lease = await NodeLease.register({ nc: cluster.controller.nc, node: description('node-b'), logger: silentLogger });
    const changes: string[] = [];
    const watching = lease.onStateChange((change) => changes.push(change.to.kind));
    try {
      await answerOnto(`$KV.${NODES_BUCKET}.node.node-b`, controllerKv, 'node.node-b');
      lease.setSlots({ total: 1, free: 0 });
      await until(async () => (await controllerKv.get('node.node-b'))?.json<{ instance?: string }>().instance === lease.record.instance, "node-b's record back under its key");
      expect(lease.state.kind).toBe('held');
      expect(changes.filter((kind) => kind !== 'held')).toEqual([]);
    } finally {
      watching.dispose();
      await lease.leave();
    }

    // An answer under a run's cancel key is no mark: the run is not stopped.
    await answerOnto(`$KV.${CLAIMS_BUCKET}.cancel.secure-junk`, controllerClaims, 'cancel.secure-junk');
    expect(await (await RunClaims.open(node.nc, 'read')).stopMarked('secure-junk')).toBeUndefined();
  });
});

describe("a node user and its panes", () => {
  it("serves its panes to the controller (listed, attached, typed into), and may not publish another node's pane frames", async () => {
    const node = await cluster.connect('node-a-panes', nodeFlags, nodeInboxPrefix('node-a'));
    const registry = new PaneRegistry({ logger: silentLogger });
    const catalog = AgentCatalog.load();
    const agentPanes = new AgentPanes(registry, catalog);
    const logs = new LogService(registry, catalog, { agentPanes });
    const program = "process.stdin.on('data', (d) => process.stdout.write('got ' + d.toString().trim() + '\\n'))";
    const pane = registry.create({ argv: [process.execPath, '-e', program], cwd: process.cwd() });
    const server = new NodePaneServer({ nc: node.nc, node: 'node-a', panes: registry, agentPanes, logs: logs.logs, logger: silentLogger });
    const panes = new ClusterPanes({ nc: cluster.controller.nc, nodes: () => ['node-a'], logger: silentLogger });
    const seen: string[] = [];
    const watch = cluster.controller.nc.subscribe('sb.pane.>', { callback: (_err, m) => void seen.push(m.subject) });
    // The node's subscriptions are on the server before anything asks it.
    await node.nc.flush();
    let output = '';
    const failures: string[] = [];
    const attachment = panes.terminal({ node: 'node-a', pane: pane.id }).attach({ output: (t) => void (output += t), exit: () => undefined, fail: (e) => void failures.push(e.code), reset: () => undefined });
    try {
      await until(async () => (await panes.list()).some((p) => p.pane_id === `node-a/${pane.id}` && p.node === 'node-a'), 'the pane in the listing', REPLY_MS);
      attachment.write(Buffer.from('secret-free\r'));
      await until(() => output.includes('got secret-free'), 'the typing echoed through the attachment', REPLY_MS).catch((err: unknown) => {
        throw new Error(`${errorMessage(err)}; the terminal got ${JSON.stringify(output)}, failures: ${failures.join(', ') || 'none'}`);
      });
      // Frames under another node's name are refused by the server; its own next one arrives, and nothing before it.
      node.nc.publish('sb.pane.node-b.aaaaaaaaaaaaaaaa', JSON.stringify({ seq: 1, output: 'forged' }));
      node.nc.publish('sb.pane.node-a.bbbbbbbbbbbbbbbb', JSON.stringify({ seq: 1, output: 'own' }));
      await until(() => seen.includes('sb.pane.node-a.bbbbbbbbbbbbbbbb'), 'its own frame', REPLY_MS);
      expect(seen.filter((s) => s.startsWith('sb.pane.node-b.'))).toEqual([]);
      expect(failures).toEqual([]);
    } finally {
      attachment.dispose();
      watch.unsubscribe();
      panes.close();
      server.dispose();
      logs.dispose();
      agentPanes.dispose();
      await registry.close({ graceMs: 0 });
    }
  });
});

describe('a node user and the runs it holds', () => {
  it("reads the controller's cancel marks and a run's last event back, and may not write a cancel mark", async () => {
    const node = await cluster.connect('node-a-3', nodeFlags, nodeInboxPrefix('node-a'));
    const controllerClaims = await RunClaims.open(cluster.controller.nc, 'fence');
    await controllerClaims.markStopped('secure-2', 'cancel');
    // An interrupt marked after a cancel leaves the cancel; one alone says interrupt, and a cancel then overrides it.
    await controllerClaims.markStopped('secure-2', 'interrupt');
    await controllerClaims.markStopped('secure-4', 'interrupt');
    const claims = await RunClaims.open(node.nc, 'read');
    expect(await claims.stopMarked('secure-2')).toBe('cancel');
    expect(await claims.stopMarked('secure-3')).toBeUndefined();
    expect(await claims.stopMarked('secure-4')).toBe('interrupt');
    await controllerClaims.markStopped('secure-4', 'cancel');
    expect(await claims.stopMarked('secure-4')).toBe('cancel');
    const kv = await new Kvm(node.nc).open(CLAIMS_BUCKET, { allow_direct: true });
    await expect(kv.put('cancel.secure-3', '{}')).rejects.toThrow(/Permissions Violation for Publish to "\$KV\.sb_claims\.cancel\.secure-3"/);
    // Claims of its own pool's runs only: not another pool's, nor the key older versions used.
    await expect(kv.put('run.other-pool.secure-3', '{}')).rejects.toThrow(/Permissions Violation for Publish to "\$KV\.sb_claims\.run\.other-pool\.secure-3"/);
    await expect(kv.put('run.secure-3', '{}')).rejects.toThrow(/Permissions Violation for Publish to "\$KV\.sb_claims\.run\.secure-3"/);
    expect((await claims.claim('main', 'secure-3', { holder: 'node-a', role: 'node', instance: 'node-a-3', at: Date.now() })).won).toBe(true);
    // A run an older controller gave up under the older key: the node reads that key, and does not take the run.
    const controllerKv = await new Kvm(cluster.controller.nc).open(CLAIMS_BUCKET, { allow_direct: true });
    await controllerKv.create('run.secure-6', JSON.stringify({ holder: 'controller', role: 'controller', instance: 'older-controller', at: Date.now() }));
    expect(await claims.claim('main', 'secure-6', { holder: 'node-a', role: 'node', instance: 'node-a-3', at: Date.now() })).toMatchObject({ won: false, holder: { role: 'controller' } });
    const publisher = new EventPublisher({ nc: node.nc, node: 'node-a', logger: silentLogger });
    for (const seq of [1, 2]) await publisher.publish({ schema_version: 'v2', run_id: 'secure-2', seq, type: 'token' });
    // Its last event of a run, asked of the controller (a node may make no direct get: reflected.ts).
    const controllerJsm = await jetstreamManager(cluster.controller.nc);
    const lastEvents = serveControllerControl(cluster.controller.nc, { ping: () => Promise.resolve({ at: 1 }), join: ({ node: n }) => Promise.resolve({ pool: n }), refused: () => Promise.resolve({ ended: false }), last_event: async ({ node: n, run_id }) => ({ seq: (await lastEventSeq(controllerJsm, n, run_id)) ?? 0 }) }, silentLogger);
    await cluster.controller.nc.flush();
    try {
      expect(await publisher.lastPublished('secure-2')).toBe(2);
      expect(await publisher.lastPublished('secure-none')).toBe(0);
    } finally {
      lastEvents.dispose();
    }
    // Events under another node's name are refused by the server (the subject says who sent an
    // event); its own next one is stored, and nothing of the other's before it.
    node.nc.publish('sb.events.node-b.secure-2', JSON.stringify({ schema_version: 'v2', run_id: 'secure-2', seq: 3, type: 'token' }));
    await publisher.publish({ schema_version: 'v2', run_id: 'secure-2', seq: 3, type: 'token' });
    const stored = await cluster.jsm.streams.info(EVENTS_STREAM, { subjects_filter: 'sb.events.*.secure-2' });
    expect(stored.state.subjects).toEqual({ 'sb.events.node-a.secure-2': 3 });
    const jsm = await jetstreamManager(node.nc, { checkAPI: false });
    await expect(jsm.direct.getMessage(EVENTS_STREAM, { last_by_subj: 'sb.events.node-b.secure-2' })).rejects.toThrow(/Permissions Violation/);
  });
});

describe('credentials', () => {
  it('refuses a key the server does not know, and no key at all, as FORBIDDEN', async () => {
    const stranger = path.join(cluster.server.dir, 'stranger.nk');
    writeFileSync(stranger, new TextDecoder().decode(createUser().getSeed()), { mode: 0o600 });
    await expect(connectCluster(parseNatsOptions({ url: cluster.server.url, nkeyFile: stranger, caFile: nodeFlags.caFile }), { name: 'stranger', logger: silentLogger })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(connectCluster(parseNatsOptions({ url: cluster.server.url, caFile: nodeFlags.caFile }), { name: 'anonymous', logger: silentLogger })).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });
});

describe('TLS', () => {
  it('is required for a server that is not on this machine, before anything connects', () => {
    expect(() => parseNatsOptions({ url: 'nats://192.0.2.10:4222', nkeyFile: nodeFlags.nkeyFile })).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS', message: expect.stringContaining('needs TLS') }));
  });

  it('verifies the server against the CA given, and refuses one it cannot verify', async () => {
    // tls:// with no CA: the system's CAs, which do not know the test CA.
    await expect(connectCluster(parseNatsOptions({ url: cluster.server.url.replace('nats://', 'tls://'), nkeyFile: nodeFlags.nkeyFile }), { name: 'no-ca', logger: silentLogger })).rejects.toMatchObject({ code: 'CONNECTION_FAILED', message: expect.stringMatching(/certificate/) });
    // No TLS asked for, against a server that requires it.
    await expect(connectCluster(parseNatsOptions({ url: cluster.server.url, nkeyFile: nodeFlags.nkeyFile }), { name: 'plain', logger: silentLogger })).rejects.toMatchObject({ code: 'CONNECTION_FAILED' });
  });

  it('with client certificates: a client with the CA’s certificate connects, one without is refused', async () => {
    const server = await startNatsServer({ tls: 'mutual' });
    try {
      const tls = server.tls!;
      const connection = await connectCluster(parseNatsOptions({ url: server.url, caFile: tls.caFile, certFile: tls.clientCertFile, keyFile: tls.clientKeyFile }), { name: 'mtls', logger: silentLogger });
      expect(connection.nc.info?.tls_verify).toBe(true);
      await connection.close();
      await expect(connectCluster(parseNatsOptions({ url: server.url, caFile: tls.caFile }), { name: 'no-cert', logger: silentLogger })).rejects.toMatchObject({ code: 'CONNECTION_FAILED' });
    } finally {
      await server.stop();
    }
  });
});
