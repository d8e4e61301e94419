/**
 * An async ask from a Codex pane to Claude Code: the ask returns at once; Claude answers while Codex
 * is busy with a turn of its own; the reply is typed into Codex once Codex is idle, and only once
 * (Codex's own transcript holds it one time).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sendPrompt } from '../../../src/agents/index.js';
import { useScriptedModel } from '../scripted-model.js';
import { untilState } from '../../support/agent-panes.js';
import { sleep } from '../../support/shell.js';
import { useAskRig } from './ask-support.js';

const sm = useScriptedModel({
  name: 'ask-delivery',
  title: 'Asks',
  rules: [
    // First: the delivered reply quotes the answer, which the next rule would match too.
    { match: 'switchboard reply from', steps: [{ text: 'Noted the answer.' }] },
    { match: 'capital of France', steps: [{ text: 'Paris is the capital of France.' }] },
    // Held until the test opens the gate: Codex is busy for as long as the test needs, whatever the machine.
    { match: 'think for long', steps: [{ text: 'That took a while.', wait_for: 'codex-busy' }] },
  ],
});
const rig = useAskRig(sm);

/** Every user message in the Codex rollouts under `home` (with CODEX_HOME at home/.codex). */
function codexPrompts(home: string): string[] {
  const dir = path.join(home, '.codex', 'sessions');
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl'));
  return files.flatMap((f) =>
    readFileSync(path.join(dir, f), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"role":"user"'))
      .map((l) => l),
  );
}

async function until<T>(probe: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await sleep(50);
  }
  throw new Error(`never: ${what}`);
}

describe('an async ask', { timeout: 300_000 }, () => {
  it("is delivered into the asker's pane once, when the asker is idle", async () => {
    const claude = await rig.start('claude');
    const codex = await rig.start('codex');
    codex.tracker.beginTurn();
    await sendPrompt(codex.pane, { input: codex.profile.data.input, screens: codex.profile.screensFor(codex.version) }, 'Please think for long.');
    await untilState(codex, ['thinking', 'executing']);
    let codexIdleAt = Infinity;
    const watch = codex.tracker.onChange((c) => {
      if (c.state === 'idle' && codexIdleAt === Infinity) codexIdleAt = c.at;
    });
    const ask = rig.engine.ask({ target: 'claude', question: 'What is the capital of France?', from: { paneId: codex.pane.id }, deliver: true });
    expect(['queued', 'typing']).toContain(ask.status);
    const answered = await rig.engine.wait(ask.id);
    expect(answered).toMatchObject({ status: 'done', reply: 'Paris is the capital of France.' });
    // Codex was still busy when Claude finished: nothing typed into it yet.
    expect(codexIdleAt).toBe(Infinity);
    expect((await rig.engine.get(ask.id)).delivery).toBe('pending');
    sm.model.openGate('codex-busy');
    const delivered = await until(async () => {
      const now = await rig.engine.get(ask.id);
      return now.delivery === 'delivered' || now.delivery === 'failed' ? now : undefined;
    }, 'the reply delivered');
    watch.dispose();
    expect(delivered, JSON.stringify(delivered.deliveryError)).toMatchObject({ delivery: 'delivered' });
    expect(delivered.deliveredAt ?? 0).toBeGreaterThanOrEqual(codexIdleAt);
    // Codex takes the reply as a prompt and answers it; its transcript holds the reply once.
    await until(() => (codex.pane.screenLines().join('\n').includes('Noted the answer.') ? true : undefined), "Codex's answer to the reply");
    await untilState(codex, ['idle']);
    const prompts = codexPrompts(codex.home).filter((l) => l.includes(`[switchboard reply from claude (pane ${claude.pane.id}, ask ${ask.id})]`));
    expect(prompts).toHaveLength(1);
    expect(prompts[0]).toContain('Paris is the capital of France.');
  });
});
