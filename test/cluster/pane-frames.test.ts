/**
 * How a controller plays a node pane's frames (cluster-panes/cluster-panes.ts), on a real
 * nats-server against a scripted node that answers the pane operations itself, so each case the
 * network can make happens on purpose: frames published while the attach or a redraw is being
 * answered (the answer holds them: dropped; the ones after it: played after it, in order), a frame
 * lost on the way (a redraw, then only what follows it), a node that no longer has the attachment
 * (the terminal is told), the last frames lost with nothing after them (the renewal tells), and,
 * with a real NodePaneServer, a program's last output before its exit, a removed pane's terminal
 * told, a controller that stops renewing (the node ends it), and a wait whose caller has gone (the
 * node stops it).
 */
import { mkdirSync, symlinkSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { homedir } from 'node:os';
import path from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveControl, nodePanesSubject, paneOutputSubject, type ControlHandlers } from '../../src/cluster/index.js';
import { AgentCatalog, AgentPanes } from '../../src/agents/index.js';
import { LogService } from '../../src/logs/index.js';
import { Sandbox } from '../../src/governance/index.js';
import { ClusterPanes } from '../../src/cluster-panes/cluster-panes.js';
import { NodePaneServer, type NodePaneServerOptions } from '../../src/cluster-panes/node-pane-server.js';
import { NODE_PANE_OPS, type NoticeFrame, type OutputFrame } from '../../src/cluster-panes/pane-wire.js';
import { Caller, nodeLogExport, type NodeLogPage, type NodePaneListener, type NotificationSink, type TerminalSink } from '../../src/api/index.js';
import { SwitchboardError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import { PaneRegistry } from '../../src/pane/index.js';
import type { Params } from '../../src/protocol/methods.js';
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

/** The NATS subscriptions the test's connection holds now (nats.js keeps them in its protocol handler). */
function natsSubscriptions(): number {
  return (need(nc) as unknown as { protocol: { subscriptions: { size(): number } } }).protocol.subscriptions.size();
}

/**
 * A real NodePaneServer named `node` over its own PaneRegistry, and a controller's ClusterPanes that
 * lists it (unless `listed` is false); both let go, and the panes closed, however `run` ends.
 */
async function withRealNode(
  node: string,
  run: (real: { registry: PaneRegistry; server: NodePaneServer; panes: ClusterPanes; logs: LogService }) => Promise<void>,
  options: { keepForMs?: number; keepEveryMs?: number; listed?: boolean; openPanes?: NodePaneServerOptions['openPanes'] } = {},
): Promise<void> {
  const registry = new PaneRegistry({ logger: silentLogger });
  const catalog = AgentCatalog.load();
  const agentPanes = new AgentPanes(registry, catalog);
  const logs = new LogService(registry, catalog, { agentPanes });
  const server = new NodePaneServer({ nc: need(nc), node, panes: registry, agentPanes, logs: logs.logs, logger: silentLogger, ...(options.keepForMs !== undefined && { keepForMs: options.keepForMs }), ...(options.openPanes && { openPanes: options.openPanes }) });
  const panes = new ClusterPanes({ nc: need(nc), nodes: () => (options.listed === false ? [] : [node]), logger: silentLogger, ...(options.keepEveryMs !== undefined && { keepEveryMs: options.keepEveryMs }) });
  try {
    await run({ registry, server, panes, logs });
  } finally {
    panes.close();
    server.dispose();
    logs.dispose();
    agentPanes.dispose();
    await registry.close({ graceMs: 0 });
  }
}

/** What a subscription through ClusterPanes was told, in order, each as a short line. */
function recordingListener(): { events: string[]; listener: NodePaneListener } {
  const events: string[] = [];
  return {
    events,
    listener: {
      notice: (notice) => {
        if (notice.method === 'output') events.push(`output ${notice.params.offset} ${notice.params.data}`);
        else if (notice.method === 'overflow') events.push(`overflow ${notice.params.dropped_bytes} ${notice.params.resume_offset}`);
        else if (notice.method === 'exit') events.push(`exit ${String(notice.params.exit_code)}`);
        else if (notice.method === 'screen') events.push(`screen ${notice.params.full ? 'full' : 'rows'} ${notice.params.changed.map(([row, line]) => `${row}:${line}`).join('|')}`);
        else events.push(`state ${notice.params.state}`);
      },
      ended: (error) => void events.push(`ended ${error.code}`),
    },
  };
}

const SCREEN = { cols: 10, rows: 2, cursor: { x: 0, y: 0, visible: true }, alt_screen: false, modes: { application_cursor_keys: false, bracketed_paste: false, mouse_tracking: 'none', send_focus: false } };

/** A node that answers with `handlers` (the rest refuse), publishing frames of its own choosing. */
function scriptedNode(name: string, handlers: Partial<ControlHandlers<typeof NODE_PANE_OPS>>): { publish: (attachment: string, frame: OutputFrame | NoticeFrame) => void; dispose: () => void } {
  const refuse = (): Promise<never> => Promise.reject(new Error('not scripted'));
  const all = { list: refuse, states: refuse, call: refuse, attach: refuse, redraw: refuse, input: refuse, resize: refuse, subscribe: refuse, repaint: refuse, log_read: refuse, keep: () => Promise.resolve({ gone: [], sent: {} }), detach: () => Promise.resolve({}), ...handlers } as ControlHandlers<typeof NODE_PANE_OPS>;
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
    await withRealNode('s5', async ({ registry, panes }) => {
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
    });
  });

  it("a wait whose caller has gone is stopped on the node, not held until its time limit", { timeout: WAIT_MS }, async () => {
    // What the controller asked the node: each pane method and whether it was named, and each cancel.
    const asked: string[] = [];
    const wire = need(nc).subscribe(nodePanesSubject('s8'), {
      callback: (_err, message) => {
        const request = message.json<{ op: string; params: { method?: string; call?: string } }>();
        if (request.op === 'call') asked.push(`${request.params.method ?? '?'}${request.params.call !== undefined ? ' named' : ''}`);
        else if (request.op === 'cancel') asked.push('cancel');
      },
    });
    await withRealNode('s8', async ({ registry, server, panes }) => {
      const waitsOnNode = (): number => (server as unknown as { namedCalls: Map<string, unknown> }).namedCalls.size;
      const pane = registry.create({ argv: [process.execPath, '-e', 'setInterval(() => {}, 1000)'], cwd: scratch.dir });
      const ref = { node: 's8', pane: pane.id };
      const waitOn = (how: { pattern?: string; idle_ms?: number; timeout_ms: number }): Params<'wait_for'> => ({ pane_id: pane.id, pattern: undefined, flags: undefined, idle_ms: undefined, lines: undefined, ...how });
      const never = waitOn({ pattern: 'never-on-screen', timeout_ms: 600_000 });
      const caller = new AbortController();
      const waiting = panes.call(ref, 'wait_for', never, caller.signal);
      await until(() => waitsOnNode() === 1, 'the wait under way on the node', WAIT_MS);
      caller.abort();
      expect(await waiting).toMatchObject({ matched: false, reason: 'cancelled' });
      expect(waitsOnNode()).toBe(0);

      // A caller gone before the call left: stopped as soon as it arrives.
      const gone = new AbortController();
      gone.abort();
      expect(await panes.call(ref, 'wait_for', never, gone.signal)).toMatchObject({ matched: false, reason: 'cancelled' });
      // A wait whose caller stays still ends on what it waits for; other methods are never named.
      const stays = new AbortController();
      expect(await panes.call(ref, 'wait_for', waitOn({ idle_ms: 50, timeout_ms: 20_000 }), stays.signal)).toMatchObject({ reason: 'idle' });
      expect(await panes.call(ref, 'is_alive', { pane_id: pane.id }, stays.signal)).toMatchObject({ alive: true });
      expect(waitsOnNode()).toBe(0);
      await until(() => asked.length >= 6, 'every request seen on the wire', WAIT_MS);
      expect(asked).toEqual(['wait_for named', 'cancel', 'wait_for named', 'cancel', 'wait_for named', 'is_alive']);
    }).finally(() => wire.unsubscribe());
  });

  it('a node ends an attachment its controller stopped renewing, and says so', { timeout: WAIT_MS }, async () => {
    // A controller that never renews (its renewals are an hour apart), as one that died would.
    await withRealNode('s3', async ({ registry, panes }) => {
      const pane = registry.create({ argv: [process.execPath, '-e', 'setInterval(() => {}, 1000)'], cwd: scratch.dir });
      const { events, sink } = recordingSink();
      panes.terminal({ node: 's3', pane: pane.id }).attach(sink);
      await until(() => events.includes('fail TIMEOUT'), 'the node ending the attachment', WAIT_MS);
    }, { keepForMs: 300, keepEveryMs: 3_600_000 });
  });
});

describe('a subscription to a node pane on the controller', () => {
  it('a lost frame: the screen is asked for again in full, the output after the gap follows an overflow saying where it resumes; the exit is told once; the last frames lost are found by the renewal', { timeout: WAIT_MS }, async () => {
    let id = '';
    let repaints = 0;
    /** The node's frame numbers (each frame sent or lost on the way takes the next), and where its output sent so far ends. */
    let seq = 0;
    let outputEnd = 0;
    const send = (frame: Omit<NoticeFrame, 'seq'>): void => node.publish(id, { seq: ++seq, ...frame });
    const output = (data: string, lost = false): void => {
      const frame = { notice: { method: 'output' as const, params: { data, offset: outputEnd } } };
      outputEnd += Buffer.byteLength(data);
      if (lost) seq += 1;
      else send(frame);
    };
    const node = scriptedNode('t1', {
      subscribe: ({ attachment, events, replay }) => {
        id = attachment;
        expect({ events, replay }).toEqual({ events: ['output', 'screen', 'exit'], replay: true });
        // Published before the answer: the controller subscribed first, and plays it.
        output('abc');
        return Promise.resolve({ offset: 0 });
      },
      repaint: () => {
        repaints += 1;
        send({ notice: { method: 'screen', params: { ...SCREEN, full: true, changed: [[0, `drawn ${repaints}`]] } } });
        return Promise.resolve({ offset: outputEnd, seq });
      },
      // What the node sent so far (published on this connection before the answer that says so).
      keep: ({ attachments }) => Promise.resolve({ gone: [], sent: Object.fromEntries(attachments.map((a) => [a, seq])) }),
    });
    const panes = new ClusterPanes({ nc: need(nc), nodes: () => ['t1'], logger: silentLogger, keepEveryMs: 50 });
    const { events, listener } = recordingListener();
    const subscription = await panes.subscribe({ node: 't1', pane: 'p1' }, { events: ['output', 'screen', 'exit', 'output'], replay: true }, listener);
    try {
      await until(() => events.length >= 1, 'the first output', WAIT_MS);
      output('def');
      // The next frame (output 'ghi' at 6) is lost on the way.
      output('ghi', true);
      output('jkl');
      await until(() => events.includes('screen full 0:drawn 1'), 'the repaint after the gap', WAIT_MS);
      send({ notice: { method: 'exit', params: { exit_code: 0, signal: null } } });
      // A repaint tells the exit again: heard once.
      send({ notice: { method: 'exit', params: { exit_code: 0, signal: null } } });
      await until(() => events.includes('exit 0'), 'the exit', WAIT_MS);
      // The last frame (output 'mno' at 12) is lost, with nothing after it: the renewal says one more
      // was sent, the screen is asked for again, and its answer says where the output ends.
      output('mno', true);
      await until(() => events.includes('overflow 3 15'), 'the overflow after the renewal', WAIT_MS);
      send({ ended: { code: 'PANE_NOT_FOUND', message: 'removed' } });
      await until(() => events.includes('ended PANE_NOT_FOUND'), 'the end', WAIT_MS);
      expect(events).toEqual(['output 0 abc', 'output 3 def', 'overflow 3 9', 'output 9 jkl', 'screen full 0:drawn 1', 'exit 0', 'screen full 0:drawn 2', 'overflow 3 15', 'ended PANE_NOT_FOUND']);
      expect(repaints).toBe(2);
    } finally {
      subscription.dispose();
      panes.close();
      node.dispose();
    }
  });

  it('a lost screen frame is no lost output; a repaint the node failed is asked again at the next renewal', { timeout: WAIT_MS }, async () => {
    let id = '';
    let repaints = 0;
    let seq = 0;
    const send = (frame: Omit<NoticeFrame, 'seq'>): void => node.publish(id, { seq: ++seq, ...frame });
    const node = scriptedNode('t4', {
      subscribe: ({ attachment }) => {
        id = attachment;
        return Promise.resolve({ offset: 100 });
      },
      repaint: () => {
        repaints += 1;
        // The first repaint fails on the node (a busy moment): the next renewal asks again.
        if (repaints === 1) return Promise.reject(new Error('busy'));
        send({ notice: { method: 'screen', params: { ...SCREEN, full: true, changed: [[0, 'drawn']] } } });
        return Promise.resolve({ offset: 103, seq });
      },
      keep: ({ attachments }) => Promise.resolve({ gone: [], sent: Object.fromEntries(attachments.map((a) => [a, seq])) }),
    });
    const panes = new ClusterPanes({ nc: need(nc), nodes: () => ['t4'], logger: silentLogger, keepEveryMs: 50 });
    const { events, listener } = recordingListener();
    const subscription = await panes.subscribe({ node: 't4', pane: 'p1' }, { events: ['output', 'screen'], replay: false }, listener);
    try {
      send({ notice: { method: 'screen', params: { ...SCREEN, full: true, changed: [[0, 'first']] } } });
      // A screen frame is lost; the output after it is whole (it starts where the subscription's output starts).
      seq += 1;
      send({ notice: { method: 'output', params: { data: 'abc', offset: 100 } } });
      await until(() => events.includes('screen full 0:drawn'), 'the repaint, asked again', WAIT_MS);
      expect(events).toEqual(['screen full 0:first', 'output 100 abc', 'screen full 0:drawn']);
      expect(repaints).toBe(2);
    } finally {
      subscription.dispose();
      panes.close();
      node.dispose();
    }
  });

  it('frames before the answer wait for it: a first frame lost is counted from where the subscription starts', { timeout: WAIT_MS }, async () => {
    const node = scriptedNode('t5', {
      subscribe: ({ attachment }) => {
        // The replay (frame 1, output [1000000, 1000100)) is lost on the way; frame 2 comes before the answer.
        node.publish(attachment, { seq: 2, notice: { method: 'output', params: { data: 'after', offset: 1_000_100 } } });
        return Promise.resolve({ offset: 1_000_000 });
      },
      repaint: () => Promise.resolve({ offset: 1_000_105, seq: 2 }),
    });
    const panes = new ClusterPanes({ nc: need(nc), nodes: () => ['t5'], logger: silentLogger });
    const { events, listener } = recordingListener();
    const subscription = await panes.subscribe({ node: 't5', pane: 'p1' }, { events: ['output'], replay: true }, listener);
    try {
      await until(() => events.length >= 2, 'the overflow and the output', WAIT_MS);
      expect(events).toEqual(['overflow 100 1000100', 'output 1000100 after']);
    } finally {
      subscription.dispose();
      panes.close();
      node.dispose();
    }
  });

  it('a repaint answer older than frames played before it leaves a newer loss to be told', { timeout: WAIT_MS }, async () => {
    let id = '';
    let seq = 0;
    let repaints = 0;
    const send = (frame: Omit<NoticeFrame, 'seq'>): void => node.publish(id, { seq: ++seq, ...frame });
    const screen = (text: string): void => send({ notice: { method: 'screen', params: { ...SCREEN, full: true, changed: [[0, text]] } } });
    const node = scriptedNode('t6', {
      subscribe: ({ attachment }) => {
        id = attachment;
        send({ notice: { method: 'output', params: { data: 'a'.repeat(100), offset: 0 } } });
        return Promise.resolve({ offset: 0 });
      },
      repaint: () => {
        repaints += 1;
        screen(`drawn ${repaints}`);
        if (repaints > 1) return Promise.resolve({ offset: 300, seq });
        // An answer made before what follows it: the output sent by then ended at 200, at frame 4.
        const answer = { offset: 200, seq };
        // Then frame 5 (output [200, 300)) is lost, and frame 6 shows the gap, both before the answer.
        seq += 1;
        screen('after the answer was made');
        return Promise.resolve(answer);
      },
    });
    const panes = new ClusterPanes({ nc: need(nc), nodes: () => ['t6'], logger: silentLogger });
    const { events, listener } = recordingListener();
    const subscription = await panes.subscribe({ node: 't6', pane: 'p1' }, { events: ['output', 'screen'], replay: false }, listener);
    try {
      await until(() => events.length >= 1, 'the first output', WAIT_MS);
      // Frame 2 (output [100, 200)) is lost; frame 3 shows the gap.
      seq += 1;
      screen('first');
      await until(() => events.some((e) => e.startsWith('overflow')), 'the overflow', WAIT_MS);
      // One overflow, for everything lost: [100, 300), resuming at 300 (not [100, 200), with [200, 300) never told).
      expect(events.filter((e) => e.startsWith('overflow'))).toEqual(['overflow 200 300']);
      expect(repaints).toBe(2);
    } finally {
      subscription.dispose();
      panes.close();
      node.dispose();
    }
  });

  it('an agent state whose push was lost is told after the controller looks at its node', { timeout: WAIT_MS }, async () => {
    const approval = { id: 'a1', tool: 'shell', tool_name: 'Bash', command: 'make', path: null, options: [] };
    let state = 'thinking';
    let looks = 0;
    const node = scriptedNode('t7', {
      states: () => {
        looks += 1;
        return Promise.resolve({ states: [{ pane_id: 'p1', state, approval: state === 'waiting_approval' ? approval : null }] });
      },
    });
    const panes = new ClusterPanes({ nc: need(nc), nodes: () => ['t7'], logger: silentLogger, keepEveryMs: 50 });
    const told: { pane_id: string; state: string; previous: string }[] = [];
    const listening = panes.onPaneState((s) => told.push({ pane_id: s.pane_id, state: s.state, previous: s.previous }));
    try {
      await until(() => told.length > 0, 'the first look', WAIT_MS);
      // The node moved on and its push never came (nothing is published here): the next look tells it, once.
      state = 'waiting_approval';
      await until(() => told.some((s) => s.state === 'waiting_approval'), 'the look after the lost push', WAIT_MS);
      // Three more looks that find the same: nothing more told.
      const looked = looks;
      await until(() => looks >= looked + 3, 'three more looks', WAIT_MS);
      expect(told).toEqual([
        { pane_id: 't7/p1', state: 'thinking', previous: 'thinking' },
        { pane_id: 't7/p1', state: 'waiting_approval', previous: 'thinking' },
      ]);
    } finally {
      listening.dispose();
      panes.close();
      node.dispose();
    }
  });

  it('refused by the node: the subscribe rejects with its code and nothing is held', { timeout: WAIT_MS }, async () => {
    await withRealNode('t2', async ({ server, panes }) => {
      const { listener } = recordingListener();
      // The connection's one inbox for replies exists once it has asked anything: made before the count.
      await panes.list();
      const before = natsSubscriptions();
      await expect(panes.subscribe({ node: 't2', pane: 'p00000000' }, { events: ['output'], replay: false }, listener)).rejects.toMatchObject({ code: 'PANE_NOT_FOUND' });
      await expect(panes.subscribe({ node: 'nobody', pane: 'p1' }, { events: ['output'], replay: false }, listener)).rejects.toMatchObject({ code: 'NODE_UNREACHABLE' });
      // Neither holds a NATS subscription for its frames any more, nor a place on the node.
      expect(natsSubscriptions()).toBe(before);
      expect((server as unknown as { attachments: Map<string, unknown> }).attachments.size).toBe(0);
    }, { listed: false });
  });

  it('with a real node pane server: output past one message goes in pieces with their offsets, screen frames follow, the exit comes after the last output', { timeout: WAIT_MS }, async () => {
    await withRealNode('t3', async ({ registry, server, panes }) => {
      // 300 000 characters at once (more than a frame takes, and more than one NATS message), then, told
      // again, its last words and its exit.
      const program = "let told = 0; process.stdin.on('data', () => { told += 1; if (told === 1) process.stdout.write('é'.repeat(150000) + 'x'.repeat(150000) + '\\nend\\n'); else process.stdout.write('last words\\n', () => process.exit(5)); })";
      const pane = registry.create({ argv: [process.execPath, '-e', program], cwd: scratch.dir, cols: 80, rows: 10 });
      let output = '';
      let next = 0;
      const offsets: boolean[] = [];
      let exitAfter = -1;
      let fullFrames = 0;
      let ended = '';
      const subscription = await panes.subscribe(
        { node: 't3', pane: pane.id },
        { events: ['output', 'screen', 'exit'], replay: true },
        {
          notice: (notice) => {
            if (notice.method === 'output') {
              offsets.push(notice.params.offset === next);
              next = notice.params.offset + Buffer.byteLength(notice.params.data);
              output += notice.params.data;
            } else if (notice.method === 'screen' && notice.params.full) fullFrames += 1;
            else if (notice.method === 'exit') exitAfter = output.length;
          },
          ended: (error) => (ended = error.code),
        },
      );
      await until(() => fullFrames > 0, 'the first screen frame', WAIT_MS);
      const subscribed = natsSubscriptions();
      registry.get(pane.id).sendText('go\r', false);
      await until(() => output.includes('end\r\n'), 'the whole flood', WAIT_MS);
      expect(output).toContain('é'.repeat(150000) + 'x'.repeat(150000) + '\r\nend\r\n');
      registry.get(pane.id).sendText('go\r', false);
      await until(() => exitAfter >= 0, 'the exit', WAIT_MS);
      // Everything before the exit came before it.
      expect(output.slice(0, exitAfter).endsWith('last words\r\n')).toBe(true);
      expect(offsets.length).toBeGreaterThan(4);
      expect(offsets.every(Boolean)).toBe(true);
      expect(ended).toBe('');
      subscription.dispose();
      // Let go on both ends: the controller's NATS subscription, and the node's place for it.
      expect(natsSubscriptions()).toBe(subscribed - 1);
      await until(() => (server as unknown as { attachments: Map<string, unknown> }).attachments.size === 0, 'the node letting go', WAIT_MS);
    });
  });
});

/** A caller's sink that keeps each log notification as a short line, and every message's seq and text. */
function recordingLogSink(): { events: string[]; seqs: number[]; text: () => string; sink: NotificationSink } {
  const events: string[] = [];
  const seqs: number[] = [];
  let text = '';
  return {
    events,
    seqs,
    text: () => text,
    sink: {
      notify: (method, params) => {
        if (method === 'log_message') {
          const { messages } = params as { messages: NodeLogPage['messages'] };
          for (const { seq, msg } of messages) {
            seqs.push(seq);
            if (msg.type !== 'normalized') text += msg.content;
          }
          events.push(`message ${String(messages.length)}`);
        } else if (method === 'log_dropped') events.push(`dropped ${(params as { reason: string }).reason}`);
        else events.push(method);
      },
      backlogBytes: 0,
      onDrain: () => ({ dispose: () => undefined }),
    },
  };
}

/** The text of a page's output messages. */
const pageText = (page: NodeLogPage): string => page.messages.map(({ msg }) => (msg.type === 'normalized' ? '' : msg.content)).join('');

/** A program that says its first line, then each line it reads back. */
const ECHO = "process.stdout.write('first line\\n'); process.stdin.on('data', (d) => process.stdout.write('got ' + d.toString().trim() + '\\n'))";

describe("a node pane's log on the controller", () => {
  it('is read in pages and waited on at the node; a read whose caller has gone is stopped there; an unknown session is SESSION_NOT_FOUND', { timeout: WAIT_MS }, async () => {
    await withRealNode('s10', async ({ registry, server, panes }) => {
      const waitsOnNode = (): number => (server as unknown as { namedCalls: Map<string, unknown> }).namedCalls.size;
      const pane = registry.create({ argv: [process.execPath, '-e', ECHO], cwd: scratch.dir });
      const ref = { node: 's10', pane: pane.id };
      let page = await panes.readLog(ref, { after_seq: 0, limit: 1000, wait_ms: 0 });
      await until(async () => pageText((page = await panes.readLog(ref, { after_seq: 0, limit: 1000, wait_ms: 0 }))).includes('first line'), 'the first line in the log', WAIT_MS);
      expect(page).toMatchObject({ finished: false, evicted: 0, waited: true });
      expect(page.messages[0]?.seq).toBe(1);
      // Read on from the last message: each read waits on the node until the log has more.
      let seen = '';
      let after = page.last_seq;
      const reading = panes.readLog(ref, { after_seq: after, limit: 1000, wait_ms: 25_000 }, new AbortController().signal);
      await until(() => waitsOnNode() === 1, 'the read waiting on the node', WAIT_MS);
      pane.sendText('hello', true);
      let next = await reading;
      while (!`${seen}${pageText(next)}`.includes('got hello')) {
        expect(next.messages[0]?.seq).toBe(after + 1);
        seen += pageText(next);
        after = next.last_seq;
        next = await panes.readLog(ref, { after_seq: after, limit: 1000, wait_ms: 25_000 }, new AbortController().signal);
      }
      expect(next.messages[0]?.seq).toBe(after + 1);
      // A read whose caller goes is stopped on the node (told `cancel` by name): it answers, with nothing,
      // long before its own 29 s would have run out.
      const caller = new AbortController();
      const idle = panes.readLog(ref, { after_seq: next.last_seq, limit: 1000, wait_ms: 29_000 }, caller.signal);
      await until(() => waitsOnNode() === 1, 'the idle read waiting on the node', WAIT_MS);
      caller.abort();
      await until(() => waitsOnNode() === 0, 'the node stopping the read', 15_000);
      expect(await idle).toMatchObject({ messages: [], finished: false, last_seq: next.last_seq });
      // From the end now (no after_seq): none, and where the log is.
      expect(await panes.readLog(ref, { limit: 10, wait_ms: 0 })).toMatchObject({ messages: [], last_seq: next.last_seq });
      await expect(panes.readLog({ node: 's10', pane: 'p00000000' }, { after_seq: 0, limit: 10, wait_ms: 0 })).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    });
  });

  it('the nodes’ sessions are listed as <node>/<session> with their node; a node that lists none it can name, an older node and one nobody serves add nothing', { timeout: WAIT_MS }, async () => {
    await withRealNode('s13', async ({ registry }) => {
      const pane = registry.create({ argv: [process.execPath, '-e', ECHO], cwd: scratch.dir, title: 'listed' });
      const stats = { retained: 1, retainedBytes: 10, evicted: 0, lastSeq: 1, subscribers: 0, dropped: 0, unspilled: 0 };
      const session = (id: string): Record<string, unknown> => ({ session_id: id, kind: 'pane', title: id, agent: null, created_at: new Date(0).toISOString(), finished: false, stats });
      // One it can name; one with a / in its id and one without its stats, which no <node>/<session> could carry.
      const odd = scriptedNode('s14', { log_sessions: () => Promise.resolve({ sessions: [session('fine'), session('a/b'), { session_id: 'bare' }] }) });
      const older = scriptedNode('s15', { log_sessions: () => Promise.reject(new SwitchboardError('METHOD_NOT_FOUND', 'unknown operation log_sessions')) });
      const all = new ClusterPanes({ nc: need(nc), nodes: () => ['s13', 's14', 's15', 'nobody'], logger: silentLogger });
      try {
        const listed = await all.logSessions();
        expect(listed.map((s) => s.session_id).sort()).toEqual([`s13/${pane.id}`, 's14/fine']);
        expect(listed.find((s) => s.node === 's13')).toMatchObject({ session_id: `s13/${pane.id}`, kind: 'pane', title: 'listed', finished: false, node: 's13' });
        expect(listed.find((s) => s.node === 's14')).toMatchObject({ session_id: 's14/fine', node: 's14', stats });
      } finally {
        all.close();
        odd.dispose();
        older.dispose();
      }
    });
  });

  it('an export reads pages up to the last message when it began, each message once and in order whatever the node answers; a node that errs, never stops sending or was left stops it', { timeout: WAIT_MS }, async () => {
    const stdout = (seq: number): NodeLogPage['messages'][number] => ({ seq, msg: { type: 'stdout', content: `m${String(seq)}` } });
    const page = (seqs: number[], lastSeq: number): ReturnType<ControlHandlers<typeof NODE_PANE_OPS>['log_read']> => Promise.resolve({ messages: seqs.map(stdout), finished: false, evicted: 0, last_seq: lastSeq, waited: true });
    const asked: Record<string, number[]> = {};
    const node = scriptedNode('s16', {
      log_read: ({ session_id, after_seq = 0 }) => {
        (asked[session_id] ??= []).push(after_seq);
        switch (session_id) {
          // Five messages when the export began, in three pages: one repeated, two out of order, then past the end.
          case 'paged':
            if (after_seq === 0) return page([1, 2], 5);
            if (after_seq === 2) return page([2, 4, 3], 6);
            return page([5, 6, 7], 7);
          // 3 and 4 evicted between the pages: what the node still holds.
          case 'evicted':
            return after_seq === 0 ? page([1, 2], 6) : page([5, 6], 6);
          case 'failing':
            return after_seq === 0 ? page([1], 3) : Promise.reject(new SwitchboardError('NODE_UNREACHABLE', 'node s16 went away'));
          // One new message a page, for ever.
          case 'endless':
            return page([after_seq + 1], Number.MAX_SAFE_INTEGER);
          default:
            return Promise.reject(new SwitchboardError('SESSION_NOT_FOUND', `no such session: ${session_id}`));
        }
      },
    });
    const panes = new ClusterPanes({ nc: need(nc), nodes: () => ['s16'], logger: silentLogger });
    /** What an export of `session` writes. */
    const exported = async (session: string, options: Parameters<typeof nodeLogExport>[2] = {}): Promise<number[]> => {
      const write = await nodeLogExport(panes, { node: 's16', pane: session }, options);
      const out = new PassThrough();
      let text = '';
      out.on('data', (chunk: Buffer) => (text += chunk.toString()));
      await write(out);
      out.end();
      return text.trimEnd().split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { seq: number }).seq);
    };
    try {
      expect(await exported('paged')).toEqual([1, 2, 4, 5]);
      expect(asked.paged).toEqual([0, 2, 4]);
      expect(await exported('evicted')).toEqual([1, 2, 5, 6]);
      await expect(exported('failing')).rejects.toMatchObject({ code: 'NODE_UNREACHABLE' });
      await expect(exported('endless', { maxPages: 5 })).rejects.toMatchObject({ code: 'INTERNAL_ERROR', message: 'node s16 was still sending the log of s16/endless after 5 pages: the export stopped there' });
      expect(asked.endless).toHaveLength(5);
      // A session the node does not have: before anything is written.
      await expect(nodeLogExport(panes, { node: 's16', pane: 'unknown' })).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
      // Its caller gone between pages: it stops there.
      const caller = new AbortController();
      const write = await nodeLogExport(panes, { node: 's16', pane: 'endless' }, { signal: caller.signal });
      const out = new PassThrough();
      let lines = 0;
      out.on('data', (chunk: Buffer) => {
        lines += chunk.toString().split('\n').length - 1;
        if (lines >= 3) caller.abort();
      });
      await expect(write(out)).rejects.toMatchObject({ name: 'AbortError' });
      expect(lines).toBe(3);
    } finally {
      panes.close();
      node.dispose();
    }
  });

  it("a caller's subscription: the history, then each message in order, then log_finished when the program ends", { timeout: WAIT_MS }, async () => {
    await withRealNode('s11', async ({ registry, panes, logs }) => {
      const pane = registry.create({ argv: [process.execPath, '-e', ECHO], cwd: scratch.dir });
      await until(() => logs.logs.get(pane.id).store.history().some(({ msg }) => msg.type === 'stdout' && msg.content.includes('first line')), 'the first line in the log', WAIT_MS);
      const { events, seqs, text, sink } = recordingLogSink();
      const caller = new Caller({ panes: registry, logs }, sink);
      try {
        await caller.nodeLogSubscribe({ node: 's11', pane: pane.id }, panes, { history: true });
        await until(() => text().includes('first line'), 'the history delivered', WAIT_MS);
        pane.sendText('one', true);
        await until(() => text().includes('got one'), 'a new message delivered', WAIT_MS);
        await registry.kill(pane.id);
        await until(() => events.includes('log_finished'), 'log_finished', WAIT_MS);
        // Every message once, in order from the first: what the node's log holds, whole.
        const held = logs.logs.get(pane.id).store.history();
        expect(seqs).toEqual(held.map((m) => m.seq));
        expect(seqs[0]).toBe(1);
        expect(events[events.length - 1]).toBe('log_finished');
        expect(events.filter((e) => e.startsWith('dropped'))).toEqual([]);
      } finally {
        caller.dispose();
      }
    });
  });

  it('log_dropped: for a reader past what the node holds, a session removed before its end was read, an error at once, a node out of reach after three reads; a message it cannot read is a line in its place', { timeout: WAIT_MS }, async () => {
    const stdout = (seq: number): NodeLogPage['messages'][number] => ({ seq, msg: { type: 'stdout', content: `m${String(seq)} ` } });
    const page = (messages: unknown[], lastSeq: number, evicted = 0): ReturnType<ControlHandlers<typeof NODE_PANE_OPS>['log_read']> => Promise.resolve({ messages, finished: false, evicted, last_seq: lastSeq, waited: true });
    const node = scriptedNode('s12', {
      log_read: ({ session_id, after_seq }) => {
        // The history, 1 and 2, then:
        if (after_seq === 0) return page([stdout(1), stdout(2)], 2);
        switch (session_id) {
          // 3 and 4 evicted: the log holds 5 on.
          case 'behind':
            return page([stdout(5)], 5, 4);
          // Removed (its run ended) before this reader read its end.
          case 'removed':
            return Promise.reject(new SwitchboardError('SESSION_NOT_FOUND', `no such session: ${session_id}`));
          case 'broken':
            return Promise.reject(new Error('the node lost its way'));
          // 3 is of a kind this controller does not know; 4 is fine.
          case 'newer':
            if (after_seq === 2) return page([{ seq: 3, msg: { type: 'hologram', frames: 12 } }, stdout(4)], 4);
            return Promise.resolve({ messages: [], finished: false, evicted: 0, last_seq: 4, waited: false });
          // Nothing new; it could not wait (the reader pauses a second before it asks again).
          default:
            return Promise.resolve({ messages: [], finished: false, evicted: 0, last_seq: after_seq ?? 2, waited: false });
        }
      },
    });
    const panes = new ClusterPanes({ nc: need(nc), nodes: () => ['s12'], logger: silentLogger });
    const registry = new PaneRegistry({ logger: silentLogger });
    const logs = new LogService(registry, AgentCatalog.load());
    const callers: Caller[] = [];
    /** A caller following `session` on s12 (its reads sent to `node` once the first was answered), told what it was. */
    const follow = async (session: string, remote: Pick<ClusterPanes, 'readLog'> = panes): Promise<ReturnType<typeof recordingLogSink>> => {
      const recorded = recordingLogSink();
      const caller = new Caller({ panes: registry, logs }, recorded.sink);
      callers.push(caller);
      await caller.nodeLogSubscribe({ node: 's12', pane: session }, remote as ClusterPanes, { history: true });
      return recorded;
    };
    const ended = (recorded: ReturnType<typeof recordingLogSink>): boolean => recorded.events.some((e) => e.startsWith('dropped') || e === 'log_finished');
    try {
      const behind = await follow('behind');
      const removed = await follow('removed');
      const broken = await follow('broken');
      const newer = await follow('newer');
      // Reads that go to a node nobody serves (after the first, answered by s12).
      let firstRead = true;
      const outOfReach = await follow('quiet', {
        readLog: (ref, read, signal) => {
          const to = firstRead ? ref : { node: 'nobody', pane: ref.pane };
          firstRead = false;
          return panes.readLog(to, read, signal);
        },
      });
      for (const [recorded, what] of [[behind, 'behind'], [removed, 'removed'], [broken, 'broken'], [outOfReach, 'out of reach']] as const) await until(() => ended(recorded), `the ${what} reader dropped`, WAIT_MS);
      expect(behind.seqs).toEqual([1, 2]);
      expect(behind.events).toEqual(['message 2', 'dropped fell behind: node s12 no longer holds the messages after 2']);
      expect(removed.events).toEqual(['message 2', 'dropped the session was removed on node s12 before its end was read']);
      expect(broken.events).toHaveLength(2);
      expect(broken.events[1]).toMatch(/^dropped the log could not be read on: INTERNAL_ERROR: /);
      expect(outOfReach.events).toHaveLength(2);
      expect(outOfReach.events[1]).toMatch(/^dropped node s12 did not answer: /);
      await until(() => newer.seqs.length === 4, 'the newer node’s messages delivered', WAIT_MS);
      expect(newer.seqs).toEqual([1, 2, 3, 4]);
      expect(newer.text()).toBe('m1 m2 [a message node s12 sent that this controller cannot read was left out]m4 ');
      expect(ended(newer)).toBe(false);
      // A session the node does not have refuses the subscription itself, named as the caller named it.
      await expect(follow('unknown-to-it', { readLog: () => panes.readLog({ node: 's12', pane: 'removed' }, { after_seq: 1, limit: 10, wait_ms: 0 }) })).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND', message: 'no session s12/removed on node s12' });
    } finally {
      for (const caller of callers) caller.dispose();
      panes.close();
      node.dispose();
      logs.dispose();
      await registry.close({ graceMs: 0 });
    }
  });
});


describe('a pane opened on a node by the controller', () => {
  /** create_pane's params with none given but these. */
  const createParams = (given: Partial<Params<'create_pane'>>): Omit<Params<'create_pane'>, 'node'> => ({ command: undefined, argv: undefined, cwd: undefined, title: undefined, env: undefined, cols: undefined, rows: undefined, scrollback: undefined, agent: undefined, args: undefined, agent_home: undefined, model_url: undefined, first_run: undefined, ready_timeout_ms: undefined, grants: undefined, ...given });
  const idle = [process.execPath, '-e', 'setInterval(() => {}, 1000)'];

  it('is refused (FORBIDDEN) by a node its person did not start with --panes, which opens nothing', { timeout: WAIT_MS }, async () => {
    await withRealNode('s13', async ({ registry, panes }) => {
      await expect(panes.create('s13', createParams({ argv: idle, cwd: scratch.dir }))).rejects.toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('switchboard node --panes') });
      expect(registry.list()).toEqual([]);
    });
  });

  it('a node that opens panes checks them itself: a relative folder is under its root, ~ is its home, a link out of the root and an agent are refused', { timeout: WAIT_MS }, async () => {
    const root = path.join(scratch.dir, 's14-root');
    mkdirSync(path.join(root, 'sub'), { recursive: true });
    symlinkSync(path.parse(root).root, path.join(root, 'out'));
    const sandbox = new Sandbox([root]);
    await withRealNode('s14', async ({ registry, panes }) => {
      const sub = await panes.create('s14', createParams({ argv: idle, cwd: 'sub' }));
      expect(sub.pane_id).toMatch(/^s14\/p/);
      expect(registry.get(sub.pane_id.slice('s14/'.length)).cwd).toBe(path.join(sandbox.roots[0] ?? '', 'sub'));
      const atRoot = await panes.create('s14', createParams({ argv: idle }));
      expect(registry.get(atRoot.pane_id.slice('s14/'.length)).cwd).toBe(sandbox.roots[0]);
      await expect(panes.create('s14', createParams({ argv: idle, cwd: 'out' }))).rejects.toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('outside the sandbox') });
      await expect(panes.create('s14', createParams({ argv: idle, cwd: '~' }))).rejects.toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining(homedir()) });
      // What a controller would refuse first, sent as it is: the node refuses it too.
      await expect(panes.create('s14', createParams({ agent: 'claude', cwd: root }))).rejects.toMatchObject({ code: 'INVALID_PARAMS', message: expect.stringContaining('an agent starts as a run') });
      expect(registry.list()).toHaveLength(2);
    }, { openPanes: { defaultCwd: sandbox.roots[0] ?? root, checkFolder: (cwd) => sandbox.checkFolder(cwd) } });
  });
});
