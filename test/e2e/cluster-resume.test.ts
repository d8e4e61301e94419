/**
 * Issue 26's resume of an orphaned run, with the real agent CLIs on cluster nodes: a controller (in
 * this process, on a real nats-server) and two `switchboard node` processes whose CLIs talk to the
 * scripted model. A run on node n1 is mid-turn (the model holds its answer) when n1's whole process
 * group, and the CLI it ran, are killed by SIGKILL, as a machine that dies. The run becomes
 * `orphaned`; the person resumes it on n2, which starts the CLI again on the same conversation by
 * the CLI's own resume (the conversation id n1 recorded, carried in the work item). The model's
 * request for the new turn carries the earlier prompt, so the conversation goes on; the orphan
 * ends cancelled, saying which run resumed it. A follow-up of the resumed run then goes to n2,
 * whose conversation is still open, and goes on in it.
 *
 * Each node has CLI homes of its own, as two hosts do: the conversation reaches n2 only because n1
 * kept a copy of the CLI's file on its shelf while the run went on, and the controller copied it
 * onto n2's shelf for the resume (conversation-carrier.ts). The test waits for n1's copy to hold
 * the prompt before it kills n1: a node that dies carries what it had copied a moment before.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/ledger/run-events.js';
import { agentSessionIn } from '../../src/ledger/run-events.js';
import { startTestController, type TestController } from '../support/cluster-controller.js';
import { followRun } from '../support/run-follow.js';
import { until as untilBounded } from '../support/processes.js';
import { startSwitchboardNode, within, type SwitchboardNode } from '../support/switchboard-node.js';
import { endRunProcessesIn } from '../support/run-processes.js';
import { atTestProcessEnd } from '../support/test-process-end.js';
import { useTestLedger } from '../support/test-ledger.js';
import { AGENT_BIN_DIRS } from './agent-flow.js';
import { useScriptedModel } from './scripted-model.js';
import { conversationSaved } from './conversation-files.js';
import { ConversationShelf } from '../../src/cluster/index.js';

/** A bound on a wait for something that must happen; never a measure of how fast it did. */
const WAIT_MS = 90_000;
/** The nodes' lease TTL: short, so the lost node is seen soon. */
const SHORT_TTL_MS = 3_000;
const HELD = 'held-until-the-node-dies';

const testLedger = useTestLedger();
const scripted = useScriptedModel({
  name: 'cluster-resume',
  title: 'A conversation that outlives its node',
  // The resumed turn's request holds both prompts: its own rule comes first.
  rules: [
    { match: 'once more', steps: [{ text: 'Once more: mango.' }] },
    { match: 'which word', steps: [{ text: 'The word was mango.' }] },
    { match: 'remember the word mango', steps: [{ text: 'Noted: mango.', wait_for: HELD }] },
  ],
});
const scratch = scripted.tempDir('sb-cluster-resume-');

/** The agent CLIs a killed node left, ended (a dead machine takes them with it). */
const endLeftRunProcesses = (): void => endRunProcessesIn(scratch.dir);
atTestProcessEnd(endLeftRunProcesses);
afterAll(endLeftRunProcesses);


/** Waits until `check` holds, within WAIT_MS. */
const until = (check: () => boolean | Promise<boolean>, what: string): Promise<void> => untilBounded(check, what, WAIT_MS);

const said = (events: readonly RunEvent[]): string => events.filter((e) => e.type === 'token').map((e) => String(e.data.text)).join('');

describe.each(['claude', 'codex'] as const)('a %s run whose node dies mid-turn', (backend) => {
  it('is orphaned, and resumed on another node goes on with the same conversation', { timeout: 4 * WAIT_MS }, async () => {
    const base = path.join(scratch.dir, backend);
    const work = path.join(base, 'work');
    mkdirSync(work, { recursive: true });
    const agentOf = (name: string): { home: string; modelUrl: string } => ({ home: path.join(base, name, 'agents'), modelUrl: scripted.model.url });
    const env = { SWITCHBOARD_AGENT_PATH: AGENT_BIN_DIRS.join(path.delimiter) };
    const controller: TestController = await startTestController(testLedger, base, { nodeTtlMs: SHORT_TTL_MS });
    const nodes: SwitchboardNode[] = [];
    try {
      const start = async (name: string): Promise<SwitchboardNode> => {
        const node = await startSwitchboardNode({ url: controller.cluster.server.url, scratch: base, name, backends: [backend], agent: agentOf(name), env });
        nodes.push(node);
        await until(() => controller.service.nodes().nodes.some((n) => n.name === name && n.clis.some((c) => c.name === backend)), `node ${name} with ${backend}`);
        return node;
      };
      const n1 = await start(`${backend}-n1`);
      await start(`${backend}-n2`);

      const first = await controller.service.submit({ backend, prompt: 'remember the word mango', cwd: work, node: `${backend}-n1` });
      const followed = followRun(controller.service, first.id);
      // Mid-turn: the CLI said its conversation id, and the model holds its answer.
      await until(() => followed.events.some((e) => agentSessionIn(e) !== undefined) && scripted.model.heldAt(HELD) > 0, 'the conversation id, and the model holding the first turn');
      const conversation = followed.events.map((e) => agentSessionIn(e)).find((id) => id !== undefined) as string;
      // Killed before the CLI saved the prompt, there would be no conversation to resume.
      await until(() => conversationSaved(backend, path.join(agentOf(`${backend}-n1`).home, backend), conversation, 'remember the word mango'), 'the CLI to save the prompt in its conversation file');
      // n1 keeps a copy of it on its shelf, looked at every second: the prompt is in it before n1 dies.
      const shelf = await ConversationShelf.open(controller.cluster.controller.nc, `${backend}-n1`);
      await until(async () => Buffer.from((await shelf.get(backend, conversation))?.data ?? []).includes('remember the word mango'), "n1's copy of the conversation to hold the prompt");

      n1.killGroup('SIGKILL');
      await n1.exited;
      endLeftRunProcesses();
      // Its end comes only once the person chooses (below): not waited for here.
      followed.ended.catch(() => undefined);
      await until(async () => (await controller.service.get(first.id)).status === 'orphaned', `run ${first.id} orphaned`);

      scripted.model.clearRequests();
      const resumed = await controller.service.submit({ backend, prompt: 'which word did I ask you to remember?', resume: first.id, node: `${backend}-n2` });
      expect(resumed).toMatchObject({ parent: first.id, agent_session: conversation, node: `${backend}-n2`, cwd: work, mode: 'stdio' });
      const second = followRun(controller.service, resumed.id);
      await within(second.ended, WAIT_MS, () => {
        throw new Error(`the resumed run did not end; its events: ${JSON.stringify(second.events.map((e) => [e.type, e.data.to ?? e.data.text ?? '']))}`);
      });
      const resumedView = await controller.service.get(resumed.id);
      expect(resumedView.status, resumedView.message).toBe('completed');
      expect(said(second.events)).toContain('The word was mango.');
      // n2's CLI read the conversation from a file of its own home, put there from the copy.
      expect(conversationSaved(backend, path.join(agentOf(`${backend}-n2`).home, backend), conversation, 'remember the word mango')).toBe(true);
      // The conversation went on: the new turn's request to the model carries the first prompt.
      const asked = scripted.model.modelRequests().filter((r) => r.plan?.prompt.includes('which word') === true);
      expect(asked.length).toBeGreaterThan(0);
      expect(asked.some((r) => JSON.stringify(r.body).includes('remember the word mango'))).toBe(true);

      // The next prompt: a follow-up, on n2 where the conversation stays open.
      const next = await controller.service.submit({ backend, prompt: 'say it once more', parent: resumed.id });
      expect(next).toMatchObject({ parent: resumed.id, node: `${backend}-n2`, cwd: work });
      const third = followRun(controller.service, next.id);
      await within(third.ended, WAIT_MS, () => {
        throw new Error(`the follow-up did not end; its events: ${JSON.stringify(third.events.map((e) => [e.type, e.data.to ?? e.data.text ?? '']))}`);
      });
      const nextView = await controller.service.get(next.id);
      expect(nextView.status, nextView.message).toBe('completed');
      expect(said(third.events)).toContain('Once more: mango.');
      const askedAgain = scripted.model.modelRequests().filter((r) => r.plan?.prompt.includes('once more') === true);
      expect(askedAgain.some((r) => JSON.stringify(r.body).includes('which word did I ask you to remember'))).toBe(true);

      const orphan = await controller.service.get(first.id);
      expect(orphan).toMatchObject({ status: 'cancelled', reason: 'cancelled_by_user' });
      expect(orphan.message).toContain(`resumed as run ${resumed.id} on node ${backend}-n2`);
      // Started once each: n1's run never started again anywhere.
      const starts = (await controller.ledger.events(first.id, 0, 1_000)).filter((e) => e.type === 'state' && e.data.to === 'running');
      expect(starts).toHaveLength(1);
      expect(await controller.ledger.check()).toBe('ok');
    } finally {
      for (const node of nodes) await node.stop();
      endLeftRunProcesses();
      await controller.close();
    }
  });
});
