/**
 * Control requests on a real nats-server: the controller asks a node and a node asks the
 * controller, with checked parameters and results; a failure comes back with its stable code; a
 * node nobody serves is NODE_UNREACHABLE at once, and one that does not answer is TIMEOUT.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controllerControlClient, nodeControlClient, serveControllerControl, serveNodeControl, type ControlHandlers, type NODE_CONTROL_OPS } from '../../src/cluster/index.js';
import { SwitchboardError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import { startTestCluster, type TestCluster } from '../support/cluster.js';

let cluster: TestCluster;
/**
 * A bound on a reply that must come (a handler in this very process answers at once): never a
 * measure of how fast. nats.js's own default is 1 s and ControlClient's 5 s, which a loaded CI
 * machine can exceed.
 */
const REPLY_MS = 30_000;

beforeAll(async () => {
  cluster = await startTestCluster();
});

afterAll(async () => {
  await cluster.close();
});

/** A node answering `ping` as told, and any other operation as having nothing of it. */
async function serveNode(name: string, handlers: Pick<ControlHandlers<typeof NODE_CONTROL_OPS>, 'ping'>): Promise<{ dispose(): void }> {
  const node = await cluster.connect(`node-${name}`);
  const serving = serveNodeControl(node.nc, name, { cancel: () => Promise.resolve({ found: false }), interrupt: () => Promise.resolve({ found: false }), shelve: () => Promise.resolve({ shelved: false }), ...handlers }, silentLogger);
  await node.nc.flush();
  return serving;
}

describe('control requests', () => {
  it('reach a node and come back checked', async () => {
    const serving = await serveNode('ctl-a', { ping: () => Promise.resolve({ node: 'ctl-a', epoch: 3 }) });
    try {
      expect(await nodeControlClient(cluster.controller.nc, 'ctl-a', REPLY_MS).call('ping', {})).toEqual({ node: 'ctl-a', epoch: 3 });
    } finally {
      serving.dispose();
    }
  });

  it('to a node nobody serves fail at once with NODE_UNREACHABLE', async () => {
    const started = Date.now();
    await expect(nodeControlClient(cluster.controller.nc, 'nobody', 20_000).call('ping', {})).rejects.toMatchObject({ code: 'NODE_UNREACHABLE', message: 'node nobody is not connected (nobody listens on sb.node.nobody.ctl)' });
    // "No responders" is the server's answer, not the end of the 20 s wait.
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('carry a handler’s stable code back, and refuse bad parameters on both ends', async () => {
    const serving = await serveNode('ctl-b', { ping: () => Promise.reject(new SwitchboardError('CONFLICT', 'busy right now', { why: 'test' })) });
    try {
      const client = nodeControlClient(cluster.controller.nc, 'ctl-b', REPLY_MS);
      await expect(client.call('ping', {})).rejects.toMatchObject({ code: 'CONFLICT', message: 'busy right now', details: { why: 'test' } });
      await expect(client.call('ping', { extra: 1 } as unknown as Record<string, never>)).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
      // A request that skips the client's checks is refused by the node.
      const reply = await cluster.controller.nc.request('sb.node.ctl-b.ctl', JSON.stringify({ v: 1, op: 'ping', params: { extra: 1 } }), { timeout: REPLY_MS });
      expect(reply.json()).toMatchObject({ ok: false, error: { code: 'INVALID_PARAMS' } });
      const unknown = await cluster.controller.nc.request('sb.node.ctl-b.ctl', JSON.stringify({ v: 1, op: 'reboot', params: {} }), { timeout: REPLY_MS });
      expect(unknown.json()).toMatchObject({ ok: false, error: { code: 'METHOD_NOT_FOUND' } });
    } finally {
      serving.dispose();
    }
  });

  it('that get no answer in time fail with TIMEOUT', async () => {
    let answer: () => void = () => undefined;
    const serving = await serveNode('ctl-c', { ping: () => new Promise((resolve) => (answer = () => resolve({ node: 'ctl-c', epoch: 1 }))) });
    try {
      await expect(nodeControlClient(cluster.controller.nc, 'ctl-c', 300).call('ping', {})).rejects.toMatchObject({ code: 'TIMEOUT' });
    } finally {
      answer();
      serving.dispose();
    }
  });

  it('from a node reach the controller on sb.ctl.<node>.<op>; one that says it is another node is refused, an older node’s sb.ctl.<op> is answered', async () => {
    const seen: string[] = [];
    const serving = serveControllerControl(cluster.controller.nc, { ping: ({ node }) => (seen.push(node), Promise.resolve({ at: 42 })), join: ({ node }) => Promise.resolve({ pool: node }), refused: () => Promise.resolve({ ended: false }), last_event: ({ node }) => (seen.push(`last_event ${node}`), Promise.resolve({ seq: 7 })) }, silentLogger);
    await cluster.controller.nc.flush();
    try {
      const node = await cluster.connect('node-ctl-d');
      expect(await controllerControlClient(node.nc, 'ctl-d', REPLY_MS).call('ping', { node: 'ctl-d' })).toEqual({ at: 42 });
      expect(seen).toEqual(['ctl-d']);
      // Under one node's name, saying it is another: refused before the handler.
      await expect(controllerControlClient(node.nc, 'ctl-d', REPLY_MS).call('ping', { node: 'ctl-e' })).rejects.toMatchObject({ code: 'FORBIDDEN', message: 'node ctl-d may not ping as node ctl-e' });
      expect(seen).toEqual(['ctl-d']);
      // The subject names the operation; a body naming another is refused.
      const mismatch = await node.nc.request('sb.ctl.ctl-d.ping', JSON.stringify({ v: 1, op: 'other', params: {} }), { timeout: REPLY_MS });
      expect(mismatch.json()).toMatchObject({ ok: false, error: { code: 'METHOD_NOT_FOUND' } });
      // An older node's subject, naming no node: taken on its word.
      const older = await node.nc.request('sb.ctl.ping', JSON.stringify({ v: 1, op: 'ping', params: { node: 'ctl-old' } }), { timeout: REPLY_MS });
      expect(older.json()).toEqual({ ok: true, result: { at: 42 } });
      expect(seen).toEqual(['ctl-d', 'ctl-old']);
      // But what only a node's own subjects may say is never answered on its word.
      const olderLast = await node.nc.request('sb.ctl.last_event', JSON.stringify({ v: 1, op: 'last_event', params: { node: 'ctl-old', run_id: 'r1' } }), { timeout: REPLY_MS });
      expect(olderLast.json()).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
      expect(await controllerControlClient(node.nc, 'ctl-d', REPLY_MS).call('last_event', { node: 'ctl-d', run_id: 'r1' })).toEqual({ seq: 7 });
      expect(seen).toEqual(['ctl-d', 'ctl-old', 'last_event ctl-d']);
    } finally {
      serving.dispose();
    }
  });
});
