/**
 * How a controller plays a node pane's frames (cluster-panes/cluster-panes.ts), on a real
 * nats-server against a scripted node that answers the pane operations itself, so each case the
 * network can make happens on purpose: frames published while the attach or a redraw is being
 * answered (the answer holds them: dropped; the ones after it: played after it, in order), a frame
 * lost on the way (a redraw, then only what follows it), a node that no longer has the attachment
 * (the terminal is told), the last frames lost with nothing after them (the renewal tells), and,
 * with a real NodePaneServer, a program's last output before its exit, a removed pane's terminal
 * told, and a controller that stops renewing (the node ends it).
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveControl, nodePanesSubject, paneOutputSubject, type ControlHandlers } from '../../src/cluster/index.js';
import { AgentCatalog, AgentPanes } from '../../src/agents/index.js';
import { ClusterPanes } from '../../src/cluster-panes/cluster-panes.js';
import { NodePaneServer } from '../../src/cluster-panes/node-pane-server.js';
import { NODE_PANE_OPS, type OutputFrame } from '../../src/cluster-panes/pane-wire.js';
import type { TerminalSink } from '../../src/api/index.js';
import { silentLogger } from '../../src/core/logger.js';
import { PaneRegistry } from '../../src/pane/index.js';
import { startNatsServer, type NatsTestServer } from '../support/nats-server.js';
import { until } from '../support/processes.js';
import { tempDir } from '../support/shell.js';

const WAIT_MS = 30_000;

let server: NatsTestServer | undefined;
let nc: NatsConnection | undefined;
const scratch = tempDir('sb-pane-frames-');

beforeAll(async () => {
  server = await startNatsServer();
  nc = await connect({ servers: server.url });
}, WAIT_MS);

afterAll(async () => {
  await nc?.close();
  await server?.stop();
  scratch.cleanup();
}, WAIT_MS);

const need = <T>(value: T | undefined): T => {
  if (value === undefined) throw new Error('NATS has not started');
  return value;
};

/** What a terminal attached through ClusterPanes was given, in order. */
function recordingSink(): { events: string[]; sink: TerminalSink } {
  const events: string[] = [];
  return {
    events,
    sink: {
      output: (text) => void events.push(text),
      exit: (exit) => void events.push(`exit ${String(exit.exit_code)}`),
      fail: (error) => void events.push(`fail ${error.code}`),
      reset: () => void events.push('reset'),
    },
  };
}

/** A node that answers with `handlers` (the rest refuse), publishing frames of its own choosing. */
function scriptedNode(name: string, handlers: Partial<ControlHandlers<typeof NODE_PANE_OPS>>): { publish: (attachment: string, frame: OutputFrame) => void; dispose: () => void } {
  const refuse = (): Promise<never> => Promise.reject(new Error('not scripted'));
  const all = { list: refuse, call: refuse, attach: refuse, redraw: refuse, input: refuse, resize: refuse, keep: () => Promise.resolve({ gone: [], sent: {} }), detach: () => Promise.resolve({}), ...handlers } as ControlHandlers<typeof NODE_PANE_OPS>;
  const served = serveControl({ nc: need(nc), subject: nodePanesSubject(name), ops: NODE_PANE_OPS, handlers: all, logger: silentLogger });
  return { publish: (attachment, frame) => need(nc).publish(paneOutputSubject(name, attachment), JSON.stringify(frame)), dispose: () => served.dispose() };
}

describe('a node pane terminal on the controller', () => {
  it('joins without a gap: frames the answer holds are dropped, later ones follow it in order; a lost frame brings a redraw', { timeout: WAIT_MS }, async () => {
    let redraws = 0;
    const node = scriptedNode('s1', {
      attach: ({ attachment }) => {
        // Output that came while the node took the replay: frame 1 is in it, frame 2 is not.
        node.publish(attachment, { seq: 1, output: '[in the replay]' });
        node.publish(attachment, { seq: 2, output: '[after the replay]' });
        return Promise.resolve({ replay: '[replay]', seq: 1 });
      },
      redraw: ({ attachment }) => {
        redraws += 1;
        node.publish(attachment, { seq: 6, output: '[in the screen]' });
        node.publish(attachment, { seq: 7, output: '[after the screen]' });
        return Promise.resolve({ screen: '[screen now]', seq: 6 });
      },
    });
    const panes = new ClusterPanes({ nc: need(nc), nodes: () => ['s1'], logger: silentLogger });
    const { events, sink } = recordingSink();
    const attachment = panes.terminal({ node: 's1', pane: 'p1' }).attach(sink);
    try {
      await until(() => events.length >= 2, 'the replay and the frame after it', WAIT_MS);
      expect(events).toEqual(['[replay]', '[after the replay]']);
      const id = (attachment as unknown as { id: string }).id;
      node.publish(id, { seq: 3, output: '[three]' });
      // Frame 4 is lost on the way: 5 is not played, the screen is drawn again instead.
      node.publish(id, { seq: 5, output: '[five, after a gap]' });
      await until(() => events.includes('[after the screen]'), 'the redraw and the frame after it', WAIT_MS);
      node.publish(id, { seq: 8, exit: { exit_code: 0, signal: null } });
      await until(() => events.includes('exit 0'), 'the exit', WAIT_MS);
      // The terminal is reset before the screen is drawn again: what it had missed may have changed its modes.
      expect(events).toEqual(['[replay]', '[after the replay]', '[three]', 'reset', '[screen now]', '[after the screen]', 'exit 0']);
      expect(redraws).toBe(1);
    } finally {
      attachment.dispose();
      panes.close();
      node.dispose();
    }
  });

  it('a node that no longer has the attachment, or a node that cannot attach: the terminal is told why', { timeout: WAIT_MS }, async () => {
    const node = scriptedNode('s2', {
      attach: () => Promise.resolve({ replay: '', seq: 0 }),
      keep: ({ attachments }) => Promise.resolve({ gone: [...attachments], sent: {} }),
    });
    const panes = new ClusterPanes({ nc: need(nc), nodes: () => ['s2'], logger: silentLogger, keepEveryMs: 50 });
    try {
      const gone = recordingSink();
      panes.terminal({ node: 's2', pane: 'p1' }).attach(gone.sink);
      await until(() => gone.events.includes('fail PANE_NOT_FOUND'), 'the attachment given up', WAIT_MS);
      const nobody = recordingSink();
      panes.terminal({ node: 'nobody', pane: 'p1' }).attach(nobody.sink);
      await until(() => nobody.events.length > 0, 'the attach refused', WAIT_MS);
      expect(nobody.events).toEqual(['fail NODE_UNREACHABLE']);
    } finally {
      panes.close();
      node.dispose();
    }
  });

  it('the last frames lost, with nothing after them: the renewal says how many were sent, the screen is drawn again, and the exit told once', { timeout: WAIT_MS }, async () => {
    let id = '';
    let renewals = 0;
    /** What the renewals say was sent: nothing, until the test has sent its frames (published on this connection before any answer that says so). */
    let sent = 0;
    const node = scriptedNode('s4', {
      attach: ({ attachment }) => {
        id = attachment;
        return Promise.resolve({ replay: '[replay]', seq: 0 });
      },
      // Frames 1 and 2 were sent; only 1 arrived (2, the program's exit, was lost on the way, and nothing came after it).
      keep: ({ attachments }) => {
        renewals += 1;
        return Promise.resolve({ gone: [], sent: Object.fromEntries(attachments.map((a) => [a, sent])) });
      },
      redraw: () => Promise.resolve({ screen: '[screen now]', seq: 2, exit: { exit_code: 0, signal: null } }),
    });
    const panes = new ClusterPanes({ nc: need(nc), nodes: () => ['s4'], logger: silentLogger, keepEveryMs: 50 });
    const { events, sink } = recordingSink();
    const attachment = panes.terminal({ node: 's4', pane: 'p1' }).attach(sink);
    try {
      await until(() => events.includes('[replay]'), 'the replay', WAIT_MS);
      node.publish(id, { seq: 1, output: '[one]' });
      sent = 2;
      await until(() => events.includes('exit 0'), 'the redraw after the renewal, and the exit it says', WAIT_MS);
      // Renewals go on (each says 2 was sent, all 2 played now): the screen is drawn once and the exit told once.
      await until(() => renewals >= 3, 'two more renewals', WAIT_MS);
      expect(events).toEqual(['[replay]', '[one]', 'reset', '[screen now]', 'exit 0']);
    } finally {
      attachment.dispose();
      panes.close();
      node.dispose();
    }
  });

  it("a program's last output comes before its exit, and a removed pane's terminal is told", { timeout: WAIT_MS }, async () => {
    const registry = new PaneRegistry({ logger: silentLogger });
    const agentPanes = new AgentPanes(registry, AgentCatalog.load());
    const server = new NodePaneServer({ nc: need(nc), node: 's5', panes: registry, agentPanes, logger: silentLogger });
    const panes = new ClusterPanes({ nc: need(nc), nodes: () => ['s5'], logger: silentLogger });
    try {
      // Prints its last words when told to and exits at once, well inside the node's frame delay.
      const last = registry.create({ argv: [process.execPath, '-e', "process.stdin.once('data', () => { process.stdout.write('last words\\n'); process.exit(4); })"], cwd: scratch.dir });
      const ending = recordingSink();
      const toLast = panes.terminal({ node: 's5', pane: last.id }).attach(ending.sink);
      await until(() => ending.events.length > 0, 'the (empty) replay', WAIT_MS);
      toLast.write(Buffer.from('go\r'));
      await until(() => ending.events.includes('exit 4'), 'the exit', WAIT_MS);
      const exitAt = ending.events.indexOf('exit 4');
      expect(ending.events.slice(0, exitAt).join('')).toContain('last words');
      toLast.dispose();

      const kept = registry.create({ argv: [process.execPath, '-e', 'setInterval(() => {}, 1000)'], cwd: scratch.dir });
      const removed = recordingSink();
      panes.terminal({ node: 's5', pane: kept.id }).attach(removed.sink);
      await until(() => removed.events.length > 0, 'the replay', WAIT_MS);
      await registry.remove(kept.id, { graceMs: 0 });
      await until(() => removed.events.includes('fail PANE_NOT_FOUND'), 'the terminal told its pane is gone', WAIT_MS);
    } finally {
      panes.close();
      server.dispose();
      agentPanes.dispose();
      await registry.close({ graceMs: 0 });
    }
  });

  it('a node ends an attachment its controller stopped renewing, and says so', { timeout: WAIT_MS }, async () => {
    const registry = new PaneRegistry({ logger: silentLogger });
    const pane = registry.create({ argv: [process.execPath, '-e', 'setInterval(() => {}, 1000)'], cwd: scratch.dir });
    const agentPanes = new AgentPanes(registry, AgentCatalog.load());
    const server = new NodePaneServer({ nc: need(nc), node: 's3', panes: registry, agentPanes, logger: silentLogger, keepForMs: 300 });
    // A controller that never renews (its renewals are an hour apart), as one that died would.
    const panes = new ClusterPanes({ nc: need(nc), nodes: () => ['s3'], logger: silentLogger, keepEveryMs: 3_600_000 });
    try {
      const { events, sink } = recordingSink();
      panes.terminal({ node: 's3', pane: pane.id }).attach(sink);
      await until(() => events.includes('fail TIMEOUT'), 'the node ending the attachment', WAIT_MS);
    } finally {
      panes.close();
      server.dispose();
      agentPanes.dispose();
      await registry.close({ graceMs: 0 });
    }
  });
});
