/**
 * Issue 21, item 8: `wall_clock_ms: 3000000000` in policy.yaml ended every run at once (Node clamps
 * a delay above 2^31-1 ms to 1 ms). Limits are bounded where they are read (30 days at most, with
 * an error naming the field), and a limit longer than Node's longest delay is waited in steps.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connect, type SwitchboardClient } from '../../src/client/index.js';
import { FakeBackend } from '../../src/runs/backends/fake-backend.js';
import { startTestDaemon } from '../support/daemon.js';
import { cleanEnv } from '../support/cli.js';
import { tempDir } from '../support/shell.js';
import { until } from '../support/processes.js';

const THIRTY_DAYS_MS = 30 * 24 * 3_600_000;
const scratch = tempDir('sb-long-timers-');
const stops: (() => Promise<void>)[] = [];
const clients: SwitchboardClient[] = [];

afterAll(async () => {
  for (const c of clients) c.close();
  for (const stop of stops) await stop();
  scratch.cleanup();
});

/** A daemon whose policy.yaml has these limits; its bridge runs the fake backend, a step every 50 ms. */
async function daemonWithLimits(name: string, limits: string): Promise<{ daemon: Awaited<ReturnType<typeof startTestDaemon>>['daemon']; client: SwitchboardClient; work: string }> {
  const home = path.join(scratch.dir, name);
  const work = path.join(scratch.dir, `${name}-work`);
  mkdirSync(work, { recursive: true });
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(path.join(home, 'policy.yaml'), `sandbox:\n  roots: [${JSON.stringify(scratch.dir)}]\nlimits:\n${limits}`);
  const started = await startTestDaemon({ home, bridge: { backends: [new FakeBackend({ stepMs: 50 })] } });
  stops.push(started.stop);
  const client = await connect({ home, env: cleanEnv() });
  clients.push(client);
  return { daemon: started.daemon, client, work };
}

describe('time limits longer than a Node timer', () => {
  it('a run under a 30-day wall clock and silence limit runs to its end', { timeout: 60_000 }, async () => {
    const { client, work } = await daemonWithLimits('thirty-days', `  wall_clock_ms: ${THIRTY_DAYS_MS}\n  no_output_ms: ${THIRTY_DAYS_MS}\n`);
    const { run } = await client.runSubmit({ backend: 'fake', prompt: 'hello', cwd: work });
    expect(run.limits).toMatchObject({ wall_clock_ms: THIRTY_DAYS_MS, no_output_ms: THIRTY_DAYS_MS });
    await until(async () => ['completed', 'failed', 'cancelled'].includes((await client.runGet(run.id)).run.status), 'the run ended');
    expect((await client.runGet(run.id)).run).toMatchObject({ status: 'completed', reason: 'finished' });
  });

  it('a limit past 30 days in policy.yaml is refused, naming the field; so is one in a request', { timeout: 60_000 }, async () => {
    const { daemon } = await daemonWithLimits('too-long', '  wall_clock_ms: 3000000000\n');
    expect(daemon.bridge).toBeUndefined();
    expect(daemon.services.bridge.offReason).toMatch(/limits\.wall_clock_ms/);
    expect(daemon.services.bridge.offReason).toMatch(/30 days/);

    const { client, work } = await daemonWithLimits('request', `  wall_clock_ms: ${THIRTY_DAYS_MS}\n`);
    const refused = await client.runSubmit({ backend: 'fake', prompt: 'hello', cwd: work, limits: { wall_clock_ms: 3_000_000_000 } }).then(
      () => 'accepted',
      (err: unknown) => (err as { code?: string }).code,
    );
    expect(refused).toBe('INVALID_PARAMS');
  });
});
