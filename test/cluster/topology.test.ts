/**
 * The harness and the topology on a real nats-server: the server starts on a random loopback port
 * and leaves nothing behind; a restart keeps the store; ensureTopology lays everything out, can be
 * run again, brings changed settings up to date and refuses what cannot be changed in place.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { jetstream, jetstreamManager, RetentionPolicy } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { CLAIMS_BUCKET, connectCluster, ensureTopology, EVENTS_STREAM, NODES_BUCKET, parseNatsOptions, WORK_STREAM } from '../../src/cluster/index.js';
import { isProcessRunning } from '../../src/platform/index.js';
import { silentLogger } from '../../src/core/logger.js';
import { nextReconnect } from '../support/cluster.js';
import { startNatsServer, type NatsTestServer } from '../support/nats-server.js';

const servers: NatsTestServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
});

async function start(): Promise<NatsTestServer> {
  const server = await startNatsServer();
  servers.push(server);
  return server;
}

describe('the nats-server harness', () => {
  it('starts on a random loopback port, restarts on it with the store kept, and leaves nothing behind', async () => {
    const server = await start();
    expect(server.url).toMatch(/^nats:\/\/127\.0\.0\.1:\d+$/);
    const connection = await connectCluster(parseNatsOptions({ url: server.url }), { name: 'test', logger: silentLogger });
    const jsm = await jetstreamManager(connection.nc);
    await jsm.streams.add({ name: 'KEEP', subjects: ['keep.>'] });
    await jetstream(connection.nc).publish('keep.a', 'one');
    const firstPid = server.pid;
    const reconnected = nextReconnect(connection.nc);
    await server.restart();
    expect(server.pid).not.toBe(firstPid);
    expect(isProcessRunning(firstPid)).toBe(false);
    // The client reconnects by itself to the same port (a request made before that is lost: the
    // cluster's callers try again).
    await reconnected;
    expect((await jsm.streams.info('KEEP')).state.messages).toBe(1);
    await connection.close();
    const { dir, pid } = server;
    await server.stop();
    expect(isProcessRunning(pid)).toBe(false);
    expect(existsSync(dir)).toBe(false);
  });
});

describe('ensureTopology', () => {
  it('lays out the streams, the pool consumers and the buckets, and can run again', async () => {
    const server = await start();
    const connection = await connectCluster(parseNatsOptions({ url: server.url }), { name: 'test', logger: silentLogger });
    try {
      const jsm = await jetstreamManager(connection.nc);
      await ensureTopology(connection.nc, jsm, { pools: [{ name: 'main' }], nodeTtlMs: 2_000 });
      await ensureTopology(connection.nc, jsm, { pools: [{ name: 'main' }], nodeTtlMs: 2_000 });
      const work = await jsm.streams.info(WORK_STREAM);
      expect(work.config).toMatchObject({ subjects: ['sb.work.>'], retention: RetentionPolicy.Workqueue });
      expect((await jsm.streams.info(EVENTS_STREAM)).config).toMatchObject({ subjects: ['sb.events.>'], duplicate_window: 120e9, allow_direct: true });
      expect((await jsm.consumers.info(WORK_STREAM, 'pool_main')).config).toMatchObject({ filter_subject: 'sb.work.main', ack_policy: 'explicit', max_deliver: 1 });
      expect((await new Kvm(connection.nc).open(NODES_BUCKET).then((kv) => kv.status())).ttl).toBe(2_000);
      expect((await new Kvm(connection.nc).open(CLAIMS_BUCKET).then((kv) => kv.status())).history).toBe(1);

      // Another pool, a longer work ack wait and a shorter node TTL: added and brought up to date.
      await ensureTopology(connection.nc, jsm, { pools: [{ name: 'main' }, { name: 'gpu', maxRunsInFlight: 4 }], nodeTtlMs: 1_000, workAckWaitMs: 60_000 });
      expect((await jsm.consumers.info(WORK_STREAM, 'pool_main')).config.ack_wait).toBe(60e9);
      expect((await jsm.consumers.info(WORK_STREAM, 'pool_gpu')).config).toMatchObject({ filter_subject: 'sb.work.gpu', max_ack_pending: 4 });
      expect((await new Kvm(connection.nc).open(NODES_BUCKET).then((kv) => kv.status())).ttl).toBe(1_000);
    } finally {
      await connection.close();
    }
  });

  it('refuses a stream laid out before with settings that cannot change in place', async () => {
    const server = await start();
    const connection = await connectCluster(parseNatsOptions({ url: server.url }), { name: 'test', logger: silentLogger });
    try {
      const jsm = await jetstreamManager(connection.nc);
      await jsm.streams.add({ name: WORK_STREAM, subjects: ['sb.work.>'], retention: RetentionPolicy.Limits });
      await expect(ensureTopology(connection.nc, jsm, { pools: [] })).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringContaining(`stream ${WORK_STREAM} exists with other retention`) });
    } finally {
      await connection.close();
    }
  });
});
