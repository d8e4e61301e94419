/**
 * The ask engine against a real Codex CLI in a pane and the scripted model: two asks at once, each
 * answered in order with its own reply; an ask to a target busy with someone else's turn waits for
 * it; a timeout that leaves the target usable; a target that exits.
 */
import { describe, expect, it } from 'vitest';
import { sendPrompt } from '../../../src/agents/index.js';
import { useScriptedModel } from '../scripted-model.js';
import { untilState } from '../../support/agent-panes.js';
import { until } from '../../support/processes.js';
import { useAskRig } from './ask-support.js';

const sm = useScriptedModel({
  name: 'asks',
  title: 'Asks',
  rules: [
    { match: 'capital of France', steps: [{ text: 'Paris is the capital of France.', delay_ms: 1_500 }] },
    { match: 'largest planet', steps: [{ text: 'Jupiter is the largest planet.', delay_ms: 200 }] },
    { match: 'count slowly', steps: [{ text: 'One, two, three.', delay_ms: 4_000 }] },
    // Held until the test opens the gate: the turn outlasts the ask's timeout whatever the machine.
    { match: 'think for long', steps: [{ text: 'That took a while.', wait_for: 'long-thought' }] },
    { match: 'smallest planet', steps: [{ text: 'Mercury is the smallest planet.' }] },
  ],
});
const rig = useAskRig(sm);

describe('asking Codex', { timeout: 240_000 }, () => {
  it('answers two asks made at once in order, each with its own reply, never mixed', async () => {
    const codex = await rig.start('codex');
    const first = rig.engine.ask({ target: 'codex', question: 'What is the capital of France?' });
    const second = rig.engine.ask({ target: 'codex', question: 'What is the largest planet?' });
    const [a, b] = await Promise.all([rig.engine.wait(first.id), rig.engine.wait(second.id)]);
    expect(a).toMatchObject({ status: 'done', reply: 'Paris is the capital of France.', replySource: 'transcript', endSignal: 'event_msg/task_complete' });
    expect(b).toMatchObject({ status: 'done', reply: 'Jupiter is the largest planet.', replySource: 'transcript', endSignal: 'event_msg/task_complete' });
    expect(a.transcript).toMatch(/rollout-.*\.jsonl$/);
    // One at a time: the second question went in only once the first was answered.
    expect(b.startedAt ?? 0).toBeGreaterThanOrEqual(a.endedAt ?? Infinity);
    // Both exchanges show in the target's pane (Codex writes its rollout before it redraws: the
    // screen may still say Working when the ask is done).
    await until(() => codex.pane.screenLines().join('\n').includes('Jupiter is the largest planet.'), 'the second reply on the screen');
    await untilState(codex, ['idle']);
    const screen = codex.pane.screenLines().join('\n');
    expect(screen).toContain('Paris is the capital of France.');
    expect(screen).toContain('Jupiter is the largest planet.');

    // Someone else's turn is under way: the ask waits for it, then gets its own answer.
    codex.tracker.beginTurn();
    await sendPrompt(codex.pane, { input: codex.profile.data.input, screens: codex.profile.screensFor(codex.version) }, 'count slowly please');
    await untilState(codex, ['thinking', 'executing']);
    let idleAt = Infinity;
    const watch = codex.tracker.onChange((change) => {
      if (change.state === 'idle' && idleAt === Infinity) idleAt = change.at;
    });
    const waiting = rig.engine.ask({ target: codex.pane.id, question: 'What is the smallest planet?' });
    expect((await rig.engine.get(waiting.id)).status).toBe('queued');
    const answered = await rig.engine.wait(waiting.id);
    watch.dispose();
    expect(answered).toMatchObject({ status: 'done', reply: 'Mercury is the smallest planet.' });
    expect(answered.startedAt ?? 0).toBeGreaterThanOrEqual(idleAt);

    // A timeout: the ask gives up, the target's turn goes on, and the next ask is answered after it.
    const slow = rig.engine.ask({ target: 'codex', question: 'Please think for long.', timeoutMs: 3_000 });
    const next = rig.engine.ask({ target: 'codex', question: 'What is the largest planet?' });
    expect(await rig.engine.wait(slow.id)).toMatchObject({ status: 'timed_out', error: { code: 'TIMEOUT' } });
    // Typing the question usually takes well under the timeout, and then Codex is still in the held
    // turn: the next ask must wait for it. On a loaded machine the timeout can come first, before
    // the question reached Codex; the next ask then goes ahead, and the outcome is the same.
    if (sm.model.modelRequests().some((r) => r.plan?.prompt.includes('think for long') === true)) expect((await rig.engine.get(next.id)).status).toBe('queued');
    sm.model.openGate('long-thought');
    expect(await rig.engine.wait(next.id)).toMatchObject({ status: 'done', reply: 'Jupiter is the largest planet.' });
    expect(codex.pane.alive).toBe(true);
  });

  it('fails at once, with a clear error, for a target that exited, and fails an ask whose target exits', async () => {
    const codex = await rig.start('codex', { title: 'codex-exiting' });
    const pending = rig.engine.ask({ target: 'codex-exiting', question: 'Please think for long.' });
    await untilState(codex, ['thinking', 'executing']);
    await codex.pane.kill({ graceMs: 1_000 });
    const failed = await rig.engine.wait(pending.id);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'PANE_EXITED' } });
    expect(failed.error?.message).toMatch(/exited/);
    expect(() => rig.engine.ask({ target: codex.pane.id, question: 'Anyone there?' })).toThrow(expect.objectContaining({ code: 'PANE_EXITED', message: expect.stringMatching(/has exited/) as unknown }) as Error);
  });
});
