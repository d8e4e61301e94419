/**
 * Many cluster nodes in one process, for the cluster bench's simulation (bench/cluster.ts): each
 * node is the real composition of `switchboard node` (startClusterNode: its own NATS connection,
 * lease, run service, SQLite node ledger and event publisher), with the scripted stand-in agent
 * (FakeBackend) instead of a CLI. The controller is not here: it is the bench process, so its CPU
 * is measured alone.
 *
 * Usage: node --import tsx bench/cluster-nodes.ts '{"url": "nats://…", "root": "/tmp/…", "nodes": 20, "slots": 25, "stepMs": 250}'
 * Says `{"ready": true, "nodes": 20}` on stdout once every node pulls its runs; ends its nodes
 * (their runs cancelled, as a node's shutdown does) and exits when stdin closes or at SIGTERM.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { silentLogger } from '../src/core/logger.js';
import { parseNatsOptions, startClusterNode } from '../src/daemon/index.js';
import { FakeBackend } from '../src/runs/index.js';

interface HostArgs {
  url: string;
  /** A folder under the bench's scratch folder: each node's home goes in it. */
  root: string;
  /** Where runs may work (the nodes' policy sandbox root). */
  sandbox: string;
  nodes: number;
  slots: number;
  /** The stand-in agent's pause between two of its entries (one run event each). */
  stepMs: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as HostArgs;
const started = await Promise.all(
  Array.from({ length: args.nodes }, async (_, i) => {
    const name = `sim-${String(i).padStart(2, '0')}`;
    const home = path.join(args.root, name);
    mkdirSync(home, { recursive: true, mode: 0o700 });
    // The policy's concurrency (4 by default) bounds what a node runs at once, whatever its slots: as many as its slots.
    writeFileSync(path.join(home, 'policy.yaml'), `sandbox:\n  roots: [${JSON.stringify(args.sandbox)}]\nlimits:\n  concurrency: ${args.slots}\n`);
    return startClusterNode({ home, nats: parseNatsOptions({ url: args.url }), name, labels: [name], slots: args.slots, backends: [new FakeBackend({ stepMs: args.stepMs })], logger: silentLogger });
  }),
);
process.stdout.write(`${JSON.stringify({ ready: true, nodes: started.length })}\n`);

let ending = false;
const end = async (): Promise<void> => {
  if (ending) return;
  ending = true;
  await Promise.all(started.map((node) => node.close().catch(() => undefined)));
  process.exit(0);
};
process.stdin.on('end', () => void end());
process.stdin.resume();
process.once('SIGTERM', () => void end());
