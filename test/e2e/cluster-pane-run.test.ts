/**
 * Issue 26's "a pane on a node is attached to and typed into from the controller", with the real
 * Claude Code CLI against the scripted model: a controller daemon (cluster on, no backend of its
 * own) and a node (`startClusterNode`, as `switchboard node` starts it) whose policy leaves shell
 * commands to a person ("ask"). A terminal run (`mode: pty`) submitted on the controller runs on
 * the node, in a pane of the node's; the controller lists that pane as `n1/<pane>`, reads the CLI's
 * approval prompt on it (a wait on the node's screen) and on the pane's terminal through the
 * dashboard's pane socket, hears the node's agent pane's states (waiting_approval with what it
 * asks, on a list of every pane, in `pane_states` and on a subscription to the pane), and a person
 * answers it on the controller's dashboard in Chromium (its approval banner's allow, which the
 * node's agent pane presses). The run then writes its file on the node and completes, the ask and
 * the person's answer in the controller's ledger. (Typing into a node's pane: node-panes.test.ts.)
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { parseNatsOptions } from '../../src/cluster/index.js';
import { connect, type SwitchboardClient } from '../../src/client/index.js';
import { silentLogger } from '../../src/core/logger.js';
import { startClusterNode, type StartedClusterNode } from '../../src/daemon/cluster-node.js';
import { ARTIFACTS, useChromium } from '../support/chromium.js';
import { cleanEnv } from '../support/cli.js';
import { startTestDaemon } from '../support/daemon.js';
import { startNatsServer, type NatsTestServer } from '../support/nats-server.js';
import { until } from '../support/processes.js';
import { endRunProcessesIn } from '../support/run-processes.js';
import { atTestProcessEnd } from '../support/test-process-end.js';
import { RULES, useScriptedModel } from './scripted-model.js';

const WAIT_MS = 180_000;

const scripted = useScriptedModel({ name: 'cluster-pane-run', title: 'A terminal run on a node, answered from the controller', rules: [RULES.writeFileByShell] });
const scratch = scripted.tempDir('sb-cluster-pane-run-');
atTestProcessEnd(() => endRunProcessesIn(scratch.dir));

let server: NatsTestServer | undefined;
let controller: Awaited<ReturnType<typeof startTestDaemon>> | undefined;
let client: SwitchboardClient | undefined;
let node: StartedClusterNode | undefined;

afterAll(async () => {
  client?.close();
  await node?.close();
  await controller?.stop();
  await server?.stop();
  endRunProcessesIn(scratch.dir);
}, WAIT_MS);

/** The decisions among a run's events (schema v2: structured data). */
function decisionsOf(events: readonly { type: string }[]): { decision: string; by: string }[] {
  return events.flatMap((e) => (e.type === 'decision' && 'data' in e ? [e.data as { decision: string; by: string }] : []));
}

/** Polls until `find` gives something (the cluster's view moves on its own). */
async function untilFound<T>(what: string, find: () => Promise<T | undefined>): Promise<T> {
  let found: T | undefined;
  await until(async () => (found = await find()) !== undefined, what, WAIT_MS);
  return found as T;
}

describe('a terminal run on a node', () => {
  const browser = useChromium(WAIT_MS);

  it('is a pane the controller lists, reads and attaches to; its approval is shown on the dashboard and answered there', { timeout: 3 * WAIT_MS }, async () => {
    const work = path.join(scratch.dir, 'work');
    const nodeHome = path.join(scratch.dir, 'node-home');
    mkdirSync(work);
    mkdirSync(nodeHome, { mode: 0o700 });
    // The node's own policy: its folder, and shell commands left to a person.
    writeFileSync(path.join(nodeHome, 'policy.yaml'), `sandbox:\n  roots: [${JSON.stringify(work)}]\napprovals:\n  rules:\n    - tool: shell\n      decision: ask\n`, { mode: 0o600 });
    server = await startNatsServer();
    const nats = parseNatsOptions({ url: server.url });
    controller = await startTestDaemon({ dashboard: { port: 0 }, bridge: { backends: [], cluster: { nats } } });
    client = await connect({ home: controller.home, env: cleanEnv() });
    node = await startClusterNode({ home: nodeHome, nats, name: 'n1', slots: 1, only: ['claude'], agentHome: path.join(scratch.dir, 'agents'), modelUrl: scripted.model.url, logger: silentLogger });
    const c = client;
    await until(async () => (await c.runNodes()).nodes.some((n) => n.name === 'n1'), 'the controller knows node n1', WAIT_MS);
    // The dashboard's list of every pane: a node's agent pane's states come to it as they come to one here.
    const states: { pane_id: string; state: string; tool: string | null; command: string | null }[] = [];
    const everyPane = await c.subscribe({ events: ['state', 'exit'] }, { state: (n) => void states.push({ pane_id: n.pane_id, state: n.state, tool: n.approval?.tool ?? null, command: n.approval?.command ?? null }) });

    const { run } = await c.runSubmit({ backend: 'claude', mode: 'pty', prompt: 'write a file please', cwd: work, keep_alive: false });
    const pane = await untilFound('the run pane in the controller’s list', async () => (await c.list()).panes.find((p) => p.node === 'n1' && p.agent?.name === 'claude'));
    expect(pane.pane_id).toMatch(/^n1\/p[0-9a-f]+$/);
    // The CLI asks before it runs the command: read on the controller, from the node's screen.
    await c.waitFor(pane.pane_id, { pattern: 'tool_out\\.txt', timeoutMs: 120_000 });
    // Nothing runs until a person answers.
    expect(['running', 'streaming']).toContain((await c.runGet(run.id)).run.status);
    expect(existsSync(path.join(work, 'tool_out.txt'))).toBe(false);
    // Its agent's state, as the node's tracker reads it: waiting on the approval, which it describes.
    // (The prompt may be read half drawn first: waited on until the approval is read whole.)
    const asking = (s: { pane_id: string; state: string; command: string | null }): boolean => s.pane_id === pane.pane_id && s.state === 'waiting_approval' && (s.command ?? '').includes('tool_out');
    await until(() => states.some(asking), 'waiting_approval told to the controller, with its command', WAIT_MS);
    expect(states.find(asking)).toMatchObject({ tool: 'shell' });
    await until(async () => (await c.paneStates()).states.some((s) => asking({ pane_id: s.pane_id, state: s.state, command: s.approval?.command ?? null })), 'the same in pane_states', WAIT_MS);
    // A subscription to that one pane hears its states too.
    const onePane: string[] = [];
    const followed = await c.subscribe({ paneId: pane.pane_id, events: ['state', 'screen'] }, { state: (n) => void onePane.push(n.state) });

    // A person follows it on the controller's dashboard: the pane's terminal shows the CLI's prompt.
    const daemon = controller.daemon;
    const login = await fetch(daemon.dashboardLoginUrl(), { redirect: 'manual' });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const key = /^\/#key=([\w-]+)$/.exec(login.headers.get('location') ?? '')?.[1] ?? '';
    const origin = `http://127.0.0.1:${String(daemon.dashboard?.port)}`;
    let output = '';
    const term = new WebSocket(`ws://127.0.0.1:${String(daemon.dashboard?.port)}/ws/pane/${encodeURIComponent(pane.pane_id)}`, ['switchboard', `sb-key.${key}`], { headers: { cookie, origin } });
    term.on('message', (data, isBinary) => {
      if (isBinary) output += (data as Buffer).toString('utf8');
    });
    try {
      await new Promise<void>((resolve, reject) => {
        term.once('open', () => resolve());
        term.once('error', reject);
      });
      await until(() => output.includes('tool_out'), 'the approval prompt on the attached terminal', WAIT_MS);
      // Governance on the node left it to a person: recorded as asked, in the controller's ledger.
      await until(async () => decisionsOf((await c.runEvents(run.id, { limit: 10_000 })).events).some((d) => d.decision === 'ask'), 'the ask in the ledger', WAIT_MS);
      // The person sees the approval on the controller's dashboard, as for an agent here, and allows
      // it there: the node's agent pane presses the CLI's own keys for "allow".
      const page = await browser().newPage({ viewport: { width: 1400, height: 900 } });
      try {
        await page.goto(daemon.dashboardLoginUrl());
        const card = page.locator(`[data-testid="pane"][data-pane-id="${pane.pane_id}"]`);
        await card.locator('[data-testid="approval-banner"]').waitFor({ timeout: WAIT_MS });
        expect(await card.getAttribute('data-state')).toBe('waiting_approval');
        expect(await card.getByTestId('approval-detail').textContent()).toContain('tool_out');
        await page.screenshot({ path: path.join(ARTIFACTS, 'cluster-node-approval.png') });
        await card.getByTestId('approve').click();
        await card.locator('[data-testid="approval-banner"]').waitFor({ state: 'detached', timeout: WAIT_MS });
      } finally {
        await page.close();
      }
      await until(async () => ['completed', 'failed', 'cancelled'].includes((await c.runGet(run.id)).run.status), 'the run to end', WAIT_MS);
      // What the CLI printed after the answer came to the attached terminal too.
      await until(() => output.includes('hello-from-tool'), "the command's output on the attached terminal", WAIT_MS);
      // The answer moved the agent on: told to both subscriptions.
      await until(() => onePane.some((s) => s !== 'waiting_approval'), 'a state after the answer, to the one-pane subscription', WAIT_MS);
      const told = (): string[] => states.filter((s) => s.pane_id === pane.pane_id).map((s) => s.state);
      await until(() => told().slice(told().indexOf('waiting_approval') + 1).length > 0, 'a state after the answer, to the list of every pane', WAIT_MS);
    } finally {
      term.close();
      // Ended by the node already when the run took its pane with it.
      await followed.unsubscribe().catch(() => undefined);
      await everyPane.unsubscribe();
    }
    const ended = (await c.runGet(run.id)).run;
    const events = (await c.runEvents(run.id, { limit: 10_000 })).events;
    expect(ended.status, JSON.stringify(events.slice(-8))).toBe('completed');
    expect(ended.node).toBe('n1');
    expect(readFileSync(path.join(work, 'tool_out.txt'), 'utf8')).toBe('hello-from-tool\n');
    // The node recorded governance asking and the person's answer, and sent both to the controller's ledger.
    expect(decisionsOf(events)).toEqual(expect.arrayContaining([expect.objectContaining({ decision: 'ask', by: 'none' }), expect.objectContaining({ decision: 'allow', by: 'person' })]));
  });
});
