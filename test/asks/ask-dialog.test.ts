/**
 * A dialog open on an ask's target is answered by the pane's launch policy before the question is
 * typed, never typed into: a made-up agent CLI (test/fixtures/dialog-agent) stops its turn on a
 * folder-trust dialog that takes one key; an ask made while it works waits, the dialog is answered
 * (trust: yes, the default policy), and the question goes in at the prompt after it, once, and is
 * in the pane's log as a prompt. A real daemon process (the built CLI).
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

const dialogAgent = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'dialog-agent');
const env = (): NodeJS.ProcessEnv => ({ ...cleanEnv(), SWITCHBOARD_AGENTS: path.join(dialogAgent, 'agents.yaml'), SWITCHBOARD_AGENT_PATH: dialogAgent });

const scratch = tempDir('sb-ask-dialog-');
let daemon: DaemonProcess | undefined;
let c: SwitchboardClient | undefined;
afterAll(async () => {
  c?.close();
  await daemon?.stop();
  scratch.cleanup();
});

describe('an ask to an agent with a dialog open', () => {
  it('waits while the dialog is answered by the pane policy, then types the question at the prompt', { timeout: 60_000 }, async () => {
    const home = path.join(scratch.dir, 'home');
    const work = path.join(scratch.dir, 'work');
    mkdirSync(home, { mode: 0o700 });
    mkdirSync(work);
    daemon = await startDaemonProcess(home, env());
    c = await connect({ home, env: cleanEnv() });
    const client = c;
    const { pane_id: paneId } = await client.createPane({ agent: 'dlgtool', cwd: work });
    await until(async () => (await client.paneStates()).states.some((s) => s.pane_id === paneId && s.state === 'idle'), 'dlgtool at its prompt');
    const text = async (): Promise<string> => (await client.getText(paneId, { lines: 40 })).text;

    await client.sendPrompt(paneId, 'go on with a dialog');
    const ask = await client.ask(paneId, 'What is the largest planet?', { wait: false, fromName: 'tester' });
    await until(async () => (await text()).includes('You said: What is the largest planet?'), 'the question typed and answered');
    const screen = await text();
    // The dialog took the policy's key, not a letter of the question; the question came after it.
    expect(screen).toContain('trusted: carrying on');
    expect(screen).not.toContain('not trusted');
    expect(screen.indexOf('trusted: carrying on')).toBeLessThan(screen.indexOf('You said: What is the largest planet?'));
    expect(screen.split('You said: What is the largest planet?')).toHaveLength(2);
    const history = await client.logGetHistory(paneId, { limit: 10_000 });
    const prompts = history.messages.flatMap((m) => (m.msg.type === 'normalized' && m.msg.entry.type === 'user_message' ? [m.msg.entry.content] : []));
    expect(prompts).toEqual(['go on with a dialog', expect.stringContaining('What is the largest planet?')]);
    await client.askCancel(ask.ask_id).catch(() => undefined);
    await client.remove(paneId);
  });
});
