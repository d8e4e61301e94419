/**
 * Issue 26's control of a run on another host, with the real agent CLIs: a controller (in this
 * process, on a real nats-server) and one `switchboard node` process whose CLIs talk to the
 * scripted model. A run on the node is mid-turn (the model holds its answer) when the person
 * interrupts it from the controller: the node ends the turn by the CLI's own interrupt, the run
 * ends `cancelled`, and the CLI keeps its conversation open on the node. A follow-up then goes to
 * that node and goes on in the same conversation (the CLI names the same one, and its request to
 * the model carries the first prompt; not Gemini CLI's, which forgets a turn the model never
 * answered). A cancel would have closed the conversation, and the follow-up would be refused.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentSessionIn, type RunEvent } from '../../src/ledger/run-events.js';
import { startTestController, type TestController } from '../support/cluster-controller.js';
import { followRun } from '../support/run-follow.js';
import { until as untilBounded } from '../support/processes.js';
import { startSwitchboardNode, within, type SwitchboardNode } from '../support/switchboard-node.js';
import { useTestLedger } from '../support/test-ledger.js';
import { AGENT_BIN_DIRS } from './agent-flow.js';
import { useScriptedModel } from './scripted-model.js';

/** A bound on a wait for something that must happen; never a measure of how fast it did. */
const WAIT_MS = 90_000;
const BACKENDS = ['claude', 'codex', 'gemini', 'opencode'] as const;
const NODE = 'interrupt-node';
/** The gate the model holds `backend`'s first answer behind, never opened: only the interrupt ends that turn. */
const gateOf = (backend: string): string => `held-until-interrupted-${backend}`;

const testLedger = useTestLedger();
const scripted = useScriptedModel({
  name: 'cluster-interrupt',
  title: 'A turn interrupted on another host, and the conversation going on',
  rules: [
    // The follow-up's request holds the first prompt too: its own rule comes first.
    { match: 'how many sheep', steps: [{ text: 'None counted: you stopped me.' }] },
    ...BACKENDS.map((backend) => ({ match: `count sheep for ${backend}`, steps: [{ text: 'One sheep, two sheep.', wait_for: gateOf(backend) }] })),
  ],
});
const scratch = scripted.tempDir('sb-cluster-interrupt-');

/** Waits until `check` holds, within WAIT_MS. */
const until = (check: () => boolean | Promise<boolean>, what: string): Promise<void> => untilBounded(check, what, WAIT_MS);

const said = (events: readonly RunEvent[]): string => events.filter((e) => e.type === 'token').map((e) => String(e.data.text)).join('');
const conversationIn = (events: readonly RunEvent[]): string | undefined => events.map((e) => agentSessionIn(e)).find((id) => id !== undefined);
const shown = (events: readonly RunEvent[]): string => JSON.stringify(events.map((e) => [e.type, e.data.to ?? e.data.text ?? e.data.message ?? '']));

let controller: TestController | undefined;
let node: SwitchboardNode | undefined;
const work = path.join(scratch.dir, 'work');

const need = <T,>(value: T | undefined): T => {
  if (value === undefined) throw new Error('the cluster has not started');
  return value;
};

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  controller = await startTestController(testLedger, scratch.dir);
  const agent = { home: path.join(scratch.dir, 'agents'), modelUrl: scripted.model.url };
  const env = { SWITCHBOARD_AGENT_PATH: AGENT_BIN_DIRS.join(path.delimiter) };
  node = await startSwitchboardNode({ url: controller.cluster.server.url, scratch: scratch.dir, name: NODE, backends: BACKENDS, slots: BACKENDS.length, agent, env });
  const service = controller.service;
  await until(() => service.nodes().nodes.some((n) => n.name === NODE && BACKENDS.every((b) => n.clis.some((c) => c.name === b))), `node ${NODE} with ${BACKENDS.join(', ')}`);
}, WAIT_MS);

afterAll(async () => {
  await node?.stop();
  await controller?.close();
}, WAIT_MS);

describe.each(BACKENDS)('a %s run on a node, interrupted from the controller mid-turn', (backend) => {
  it('ends cancelled, keeps its conversation on the node, and a follow-up goes on in it', { timeout: 3 * WAIT_MS }, async () => {
    const service = need(controller).service;
    const first = await service.submit({ backend, prompt: `count sheep for ${backend}`, cwd: work });
    expect(first.node).toBe(NODE);
    const followed = followRun(service, first.id);
    await until(async () => scripted.model.heldAt(gateOf(backend)) > 0 && (await service.get(first.id)).status === 'running', 'the model holding the first turn');

    await service.interrupt(first.id);
    await within(followed.ended, WAIT_MS, () => {
      throw new Error(`the interrupted run did not end; its events: ${shown(followed.events)}`);
    });
    const interrupted = await service.get(first.id);
    expect(interrupted, shown(followed.events)).toMatchObject({ status: 'cancelled', reason: 'cancelled_by_user', message: 'the turn was interrupted by the caller', node: NODE });

    // The conversation is still open on the node: a follow-up is taken there (a closed one is refused).
    const next = await service.submit({ backend, prompt: 'how many sheep did you count?', parent: first.id });
    expect(next).toMatchObject({ parent: first.id, node: NODE, cwd: work });
    const second = followRun(service, next.id);
    await within(second.ended, WAIT_MS, () => {
      throw new Error(`the follow-up did not end; its events: ${shown(second.events)}`);
    });
    const answered = await service.get(next.id);
    expect(answered.status, `${answered.message} ${shown(second.events)}`).toBe('completed');
    expect(said(second.events)).toContain('None counted: you stopped me.');
    // The same conversation: the CLI says the id of the one it was in, and it is the first run's.
    const conversation = conversationIn(followed.events);
    expect(conversation).toBeDefined();
    expect(conversationIn(second.events)).toBe(conversation);
    const asked = scripted.model.modelRequests().filter((r) => r.plan?.prompt.includes('how many sheep') === true);
    const carriesFirstPrompt = asked.some((r) => JSON.stringify(r.body).includes(`count sheep for ${backend}`));
    // Gemini CLI 0.61 keeps a turn in its chat only once the model answered it: the interrupted
    // prompt is gone from the next request (seen in its body), while the session goes on.
    expect(carriesFirstPrompt).toBe(backend !== 'gemini');
    // Started once: the interrupt did not send the run anywhere again.
    const starts = (await need(controller).ledger.events(first.id, 0, 1_000)).filter((e) => e.type === 'state' && e.data.to === 'running');
    expect(starts).toHaveLength(1);
  });
});
