/**
 * `switchboard ask cancel JOB` did what it was asked and still exited 1 (the exit code of a
 * cancelled ask, which a wait reports). A cancel that took exits 0.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type SwitchboardClient } from '../../src/client/index.js';
import { startTestDaemon } from '../support/daemon.js';
import { cleanEnv, runCli } from '../support/cli.js';
import { tempDir } from '../support/shell.js';
import { agentHeldAtApproval } from '../support/held-agent.js';

const customAgent = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'custom-agent');
const scratch = tempDir('sb-ask-cancel-');
const home = path.join(scratch.dir, 'home');
const work = path.join(scratch.dir, 'work');
let started: Awaited<ReturnType<typeof startTestDaemon>> | undefined;
let client: SwitchboardClient | undefined;

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  mkdirSync(home, { recursive: true, mode: 0o700 });
  started = await startTestDaemon({ home, agentsFile: path.join(customAgent, 'agents.yaml'), env: { ...cleanEnv(), SWITCHBOARD_AGENT_PATH: customAgent } });
  client = await connect({ home, env: cleanEnv() });
});

afterAll(async () => {
  client?.close();
  await started?.stop();
  scratch.cleanup();
});

describe.runIf(process.platform !== 'win32')('switchboard ask cancel', () => {
  it('exits 0 once the ask is cancelled, and says so', async () => {
    const c = client as SwitchboardClient;
    const target = await agentHeldAtApproval(c, work);
    const ask = await c.ask(target, 'Which planet is the largest?', { wait: false });
    expect(ask.status).toBe('queued');
    const cancelled = await runCli(home, ['ask', 'cancel', ask.ask_id]);
    expect(cancelled, cancelled.stderr).toMatchObject({ code: 0, stdout: `cancelled (ask ${ask.ask_id})\n` });
    expect((await c.askGet(ask.ask_id)).status).toBe('cancelled');
    // Cancelling it again finds it cancelled already: the same answer.
    const again = await runCli(home, ['ask', 'cancel', ask.ask_id, '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ ask_id: ask.ask_id, status: 'cancelled' });
    await c.remove(target);
  });
});
