/**
 * A node of the cluster as a process of its own, for the tests that kill, freeze or race nodes
 * (test/cluster/): it connects to NATS, holds a lease and, given a pool, pulls work. It says what
 * happens on stdout, one JSON line each, and takes commands on stdin, one a line. It exits when
 * stdin closes, so it never outlives the test that started it (unless frozen: the test kills it).
 *
 * Usage: node --import tsx test/support/cluster-node.ts '{"url": "nats://…", "name": "node-a", "pool": "main", "slots": 1}'
 * Out: {"ready":true,"instance":"…"}, {"lease":"held","epoch":1}, {"work":"started","run":"r1"}, …
 * In: `finish <run>` (that run ends), `leave` (leaves the cluster and exits).
 */
import { createInterface } from 'node:readline';
import { connectCluster, parseNatsOptions, NodeLease, WorkPuller } from '../../src/cluster/index.js';
import { silentLogger } from '../../src/core/logger.js';

interface NodeArgs {
  url: string;
  name: string;
  pool?: string;
  slots?: number;
  pullExpiresMs?: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as NodeArgs;
const say = (line: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify(line)}\n`);
};

const connection = await connectCluster(parseNatsOptions({ url: args.url }), { name: `test-node-${args.name}`, logger: silentLogger });
const slots = args.slots ?? 1;
const lease = await NodeLease.register({ nc: connection.nc, node: { name: args.name, labels: [], clis: [{ name: 'fake', version: '1' }], repos: [], slots: { total: slots, free: slots } }, logger: silentLogger });
lease.onStateChange(({ to }) => say({ lease: to.kind, epoch: 'epoch' in to ? to.epoch : undefined }));

/** Runs going, each ended by a `finish <run>` command. */
const finishers = new Map<string, () => void>();
const puller =
  args.pool === undefined
    ? undefined
    : await WorkPuller.start({
        nc: connection.nc,
        pool: args.pool,
        node: args.name,
        instance: lease.record.instance,
        slots,
        logger: silentLogger,
        ...(args.pullExpiresMs !== undefined && { pullExpiresMs: args.pullExpiresMs }),
        run: (item) => new Promise<void>((resolve) => finishers.set(item.run_id, resolve)),
      });
puller?.onWork((event) => say({ work: event.kind, run: 'item' in event ? event.item.run_id : undefined }));
puller?.onSlotsChanged((s) => lease.setSlots(s));
say({ ready: true, instance: lease.record.instance, epoch: lease.record.epoch });

const quit = async (): Promise<void> => {
  await puller?.stop();
  await lease.leave();
  await connection.close();
  process.exit(0);
};
const commands = createInterface({ input: process.stdin });
commands.on('line', (line) => {
  const [command, run] = line.trim().split(/\s+/);
  if (command === 'finish' && run !== undefined) finishers.get(run)?.();
  else if (command === 'leave') void quit();
});
commands.on('close', () => void quit());
