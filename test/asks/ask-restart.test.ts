/**
 * Asks outlive the daemon (they are in the run ledger), through real daemon processes (the built
 * CLI) and a made-up agent CLI (test/fixtures/custom-agent): a daemon killed with SIGKILL while an
 * ask waits in a pane's line, started again, still lists that ask, now failed (interrupted), and
 * the one that had ended, unchanged; a daemon stopped cleanly records the ask it held as failed
 * (SHUTTING_DOWN) before its ledger closes, and the next one finds it so.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { connect, type SwitchboardClient } from '../../src/client/index.js';
import { CLI, cleanEnv } from '../support/cli.js';
import { tempDir } from '../support/shell.js';
import { agentHeldAtApproval } from '../support/held-agent.js';

const customAgent = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'custom-agent');
const env = (): NodeJS.ProcessEnv => ({ ...cleanEnv(), SWITCHBOARD_AGENTS: path.join(customAgent, 'agents.yaml'), SWITCHBOARD_AGENT_PATH: customAgent });

interface DaemonProcess {
  child: ChildProcess;
  exited: Promise<void>;
}

const daemons: DaemonProcess[] = [];
const clients: SwitchboardClient[] = [];
const scratch = tempDir('sb-ask-restart-');
afterAll(async () => {
  for (const c of clients) c.close();
  for (const d of daemons) {
    if (d.child.exitCode === null && d.child.signalCode === null) {
      d.child.kill('SIGTERM');
      await d.exited;
    }
  }
  scratch.cleanup();
});

/** Starts `switchboard daemon` for `home` (no dashboard); resolves once it listens. */
async function startDaemon(home: string): Promise<DaemonProcess> {
  const child = spawn(process.execPath, [CLI, '--home', home, 'daemon', '--port', '0', '--no-dashboard', '--log-level', 'warn'], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const d = { child, exited };
  daemons.push(d);
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      if (/listening on /.test(out)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the daemon exited (${code}): ${out}${err}`)));
  });
  return d;
}

async function client(home: string): Promise<SwitchboardClient> {
  const c = await connect({ home, env: cleanEnv() });
  clients.push(c);
  return c;
}

describe('asks across a daemon restart', () => {
  it('are still listed after a SIGKILL (the one in flight failed, interrupted) and after a clean stop (failed, SHUTTING_DOWN)', { timeout: 120_000 }, async () => {
    const home = path.join(scratch.dir, 'home');
    const work = path.join(scratch.dir, 'work');
    mkdirSync(home, { mode: 0o700 });
    mkdirSync(work);

    const first = await startDaemon(home);
    const one = await client(home);
    const pane = await agentHeldAtApproval(one, work);
    const cancelled = (await one.askCancel((await one.ask(pane, 'Never mind this one.', { wait: false, fromName: 'tester' })).ask_id)).ask_id;
    const pending = await one.ask(pane, 'What is the largest planet?', { wait: false, fromName: 'tester' });
    expect(pending.status).toBe('queued');
    expect((await one.askGet(cancelled)).status).toBe('cancelled');
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await startDaemon(home);
    const two = await client(home);
    expect(await two.askGet(pending.ask_id)).toMatchObject({
      status: 'failed',
      question: 'What is the largest planet?',
      from: { name: 'tester' },
      target: { pane_id: pane, agent: 'mytool' },
      created_at: pending.created_at,
      error: { code: 'SHUTTING_DOWN', message: expect.stringMatching(/^interrupted: /) as unknown },
    });
    expect(await two.askGet(cancelled)).toMatchObject({ status: 'cancelled', error: null });
    const listed = (await two.askList()).asks.map((a) => [a.ask_id, a.status]);
    expect(listed).toEqual([
      [cancelled, 'cancelled'],
      [pending.ask_id, 'failed'],
    ]);
    // Waiting on an ask of the dead daemon answers at once with how it ended.
    expect((await two.askWait(pending.ask_id)).status).toBe('failed');

    const held = await two.ask(await agentHeldAtApproval(two, work), 'What is the smallest planet?', { wait: false });
    second.child.kill('SIGTERM');
    await second.exited;

    await startDaemon(home);
    const three = await client(home);
    expect(await three.askGet(held.ask_id)).toMatchObject({ status: 'failed', error: { code: 'SHUTTING_DOWN', message: 'Switchboard stopped before the reply came' } });
    expect((await three.askList()).asks.map((a) => a.ask_id)).toEqual([cancelled, pending.ask_id, held.ask_id]);
  });
});
