/**
 * An ask reaches its target the way every prompt to an agent pane does, through the pane's
 * AgentPane: the question is in the pane's log as a prompt (`user_message`), as `send_prompt`'s
 * text is. A real daemon process (the built CLI) and a made-up agent CLI (test/fixtures/custom-agent).
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { connect, type SwitchboardClient } from '../../src/client/index.js';
import { cleanEnv } from '../support/cli.js';
import { startDaemonProcess, type DaemonProcess } from '../support/daemon.js';
import { tempDir } from '../support/shell.js';
import { until } from '../support/processes.js';

const customAgent = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'custom-agent');
const env = (): NodeJS.ProcessEnv => ({ ...cleanEnv(), SWITCHBOARD_AGENTS: path.join(customAgent, 'agents.yaml'), SWITCHBOARD_AGENT_PATH: customAgent });

const scratch = tempDir('sb-ask-log-');
let daemon: DaemonProcess | undefined;
let c: SwitchboardClient | undefined;
afterAll(async () => {
  c?.close();
  await daemon?.stop();
  scratch.cleanup();
});

/** The prompts in a pane's log, in order. */
async function prompts(client: SwitchboardClient, paneId: string): Promise<string[]> {
  const history = await client.logGetHistory(paneId, { limit: 10_000 });
  return history.messages.flatMap((m) => (m.msg.type === 'normalized' && m.msg.entry.type === 'user_message' ? [m.msg.entry.content] : []));
}

describe('an ask to an agent pane', () => {
  it("is a prompt in the target pane's log, as send_prompt's text is", { timeout: 60_000 }, async () => {
    const home = path.join(scratch.dir, 'home');
    const work = path.join(scratch.dir, 'work');
    mkdirSync(home, { mode: 0o700 });
    mkdirSync(work);
    daemon = await startDaemonProcess(home, env());
    c = await connect({ home, env: cleanEnv() });
    const { pane_id: paneId } = await c.createPane({ agent: 'mytool', cwd: work });
    await until(async () => (await c?.paneStates())?.states.some((s) => s.pane_id === paneId && s.state === 'idle') === true, 'mytool at its prompt');
    await c.sendPrompt(paneId, 'hello there');
    await until(async () => (await c?.getText(paneId, { lines: 20 }))?.text.includes('You said: hello there') === true, 'the answer to the prompt');

    const ask = await c.ask(paneId, 'What is the largest planet?', { wait: false, fromName: 'tester' });
    await until(async () => (await c?.getText(paneId, { lines: 20 }))?.text.includes('You said: What is the largest planet?') === true, 'the question typed and answered');
    const logged = await prompts(c, paneId);
    expect(logged[0]).toBe('hello there');
    expect(logged.slice(1)).toEqual([expect.stringContaining('What is the largest planet?')]);
    await c.askCancel(ask.ask_id).catch(() => undefined);
    await c.remove(paneId);
  });
});
