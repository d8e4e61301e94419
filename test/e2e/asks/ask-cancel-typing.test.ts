/**
 * An ask cancelled while its question is being typed (issue 22, item 5): the typing stops at once,
 * what went in is cleared from the target's input box, and the next ask reaches the agent as its
 * own prompt, alone. Against a real Codex CLI and the scripted model.
 *
 * To cancel while the question is still going in, whatever the machine's speed, the test holds
 * Codex from reading its input (SIGSTOP to its process group, as a CLI busy taking in a large
 * paste would): the question is long enough to fill the terminal's input buffer, so part of it
 * waits in the pane to be written, which is the state "typing under way" the test waits on.
 */
import { describe, expect, it } from 'vitest';
import { findInputBox } from '../../../src/agents/screen/structure.js';
import { useScriptedModel } from '../scripted-model.js';
import { untilState } from '../../support/agent-panes.js';
import { until } from '../../support/processes.js';
import { useAskRig } from './ask-support.js';

const sm = useScriptedModel({
  name: 'ask-cancel-typing',
  title: 'Asks cancelled while typed',
  rules: [
    { match: 'largest planet', steps: [{ text: 'Jupiter is the largest planet.' }] },
    { match: 'zebra', steps: [{ text: 'The long question reached the model.' }] },
  ],
});
const rig = useAskRig(sm);

/** Far more than a terminal buffers for a program that does not read (about 64 KB on Linux). */
const LONG_QUESTION = `Please count the zebra words: ${'zebra '.repeat(16_000)}`.trim();

const signalGroup = (pid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone: nothing to stop or continue.
  }
};

describe.runIf(process.platform !== 'win32')('an ask cancelled while its question is typed', { timeout: 240_000 }, () => {
  it('stops typing at once, clears the input box, and the next ask goes in alone', async () => {
    const codex = await rig.start('codex');
    await untilState(codex, ['idle']);
    const pid = codex.pane.pid;
    signalGroup(pid, 'SIGSTOP');
    let first: ReturnType<typeof rig.engine.ask>;
    try {
      first = rig.engine.ask({ target: 'codex', question: LONG_QUESTION });
      // Typing under way: the question went in, and part of it still waits for Codex to read it.
      await until(async () => (await rig.engine.get(first.id)).status === 'typing' && codex.pane.pendingInputBytes > 0, 'the question being typed');
      expect((await rig.engine.cancel(first.id)).status).toBe('cancelled');
      // Stopped at once: nothing more of the question waits to be written.
      expect(codex.pane.pendingInputBytes).toBe(0);
    } finally {
      signalGroup(pid, 'SIGCONT');
    }
    // What Codex did read of it is cleared from its input box. Codex may never draw any of it (it
    // can take in the cut paste and the erasing keys in one go), so an empty box here proves little
    // alone: the proof is below, the next question answered alone and the model never seeing this one.
    const boxEmpty = (): boolean => {
      const lines = codex.pane.screenLines();
      const box = findInputBox(lines);
      const below = box ? lines.slice(box.row).join('\n') : lines.join('\n');
      return codex.pane.pendingInputBytes === 0 && box !== undefined && !/zebra|Pasted/i.test(below);
    };
    await until(boxEmpty, 'the input box empty again', 20_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${codex.pane.screenLines().filter((l) => l.trim()).join('\n')}`);
    });
    expect((await rig.engine.get(first.id)).status).toBe('cancelled');

    // The next ask goes in alone, and is answered as its own prompt.
    const second = rig.engine.ask({ target: 'codex', question: 'What is the largest planet?' });
    expect(await rig.engine.wait(second.id)).toMatchObject({ status: 'done', reply: 'Jupiter is the largest planet.' });
    // The model got the second question, and never any of the first.
    const prompts = sm.model.modelRequests().map((r) => r.plan?.prompt ?? '');
    expect(prompts.some((p) => p.includes('largest planet'))).toBe(true);
    expect(prompts.filter((p) => p.includes('zebra'))).toEqual([]);
    // Codex's history shows the second prompt as it was given, with nothing of the first before it.
    await until(() => codex.pane.screenLines().join('\n').includes('Jupiter is the largest planet.'), 'the reply on the screen');
    const screen = codex.pane.screenLines().join('\n');
    expect(screen).toMatch(/› What is the largest planet\?/);
    expect(screen).not.toMatch(/zebra|Pasted/);
  });
});
