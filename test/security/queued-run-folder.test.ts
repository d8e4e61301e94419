/**
 * Issue 21, item 7: a queued run's folder was checked only at admission. With concurrency 1, a run
 * queued for `<root>/swap`, then `swap` replaced by a symlink to /etc: the run started in /etc. The
 * real path is kept at admission and checked again at start (it must be the same, and still inside
 * the roots); the run starts in the stored real path, or fails with the policy's outcome and why.
 */
import { mkdirSync, realpathSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type SwitchboardClient } from '../../src/client/index.js';
import { FakeBackend } from '../../src/runs/backends/fake-backend.js';
import type { DriverRun, DriverRunRequest } from '../../src/runs/backends/backend-driver.js';
import { startTestDaemon } from '../support/daemon.js';
import { cleanEnv } from '../support/cli.js';
import { tempDir } from '../support/shell.js';
import { until } from '../support/processes.js';

/** The fake backend, noting the folder each run was started in. */
class RecordingBackend extends FakeBackend {
  readonly startedIn = new Map<string, string>();
  override stream(request: DriverRunRequest): DriverRun {
    this.startedIn.set(request.runId, request.cwd);
    return super.stream(request);
  }
}

const scratch = tempDir('sb-queued-folder-');
const home = path.join(scratch.dir, 'home');
const root = path.join(scratch.dir, 'root');
const backend = new RecordingBackend();
let started: Awaited<ReturnType<typeof startTestDaemon>> | undefined;
let client: SwitchboardClient | undefined;

beforeAll(async () => {
  mkdirSync(root, { recursive: true });
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(path.join(home, 'policy.yaml'), `sandbox:\n  roots: [${JSON.stringify(root)}]\nlimits:\n  concurrency: 1\n`);
  started = await startTestDaemon({ home, bridge: { backends: [backend] } });
  client = await connect({ home, env: cleanEnv() });
});

afterAll(async () => {
  client?.close();
  await started?.stop();
  scratch.cleanup();
});

describe.runIf(process.platform !== 'win32')('a queued run’s folder', () => {
  it('is checked again at start: a folder swapped for a symlink out of the roots fails the run; the others start in their real path', { timeout: 60_000 }, async () => {
    const c = client as SwitchboardClient;
    const swap = path.join(root, 'swap');
    const keep = path.join(root, 'keep');
    const moved = path.join(root, 'moved');
    const inside = path.join(root, 'inside');
    for (const dir of [swap, keep, moved, path.join(inside, 'target')]) mkdirSync(dir, { recursive: true });

    const { run: blocker } = await c.runSubmit({ backend: 'fake', prompt: 'silent', cwd: root });
    await until(async () => (await c.runGet(blocker.id)).run.status === 'running', 'the first run holds the only place');
    const { run: toEtc } = await c.runSubmit({ backend: 'fake', prompt: 'hello', cwd: swap });
    const { run: toInside } = await c.runSubmit({ backend: 'fake', prompt: 'hello', cwd: moved });
    const { run: kept } = await c.runSubmit({ backend: 'fake', prompt: 'hello', cwd: keep });
    for (const r of [toEtc, toInside, kept]) expect(r.status).toBe('queued');

    // While they wait: one folder now leads out of the roots, another to a different folder inside them.
    renameSync(swap, path.join(root, 'swap-old'));
    symlinkSync('/etc', swap);
    renameSync(moved, path.join(root, 'moved-old'));
    symlinkSync(path.join(inside, 'target'), moved);

    await c.runCancel(blocker.id);
    const ended = async (id: string): Promise<boolean> => ['completed', 'failed', 'cancelled'].includes((await c.runGet(id)).run.status);
    await until(async () => (await ended(toEtc.id)) && (await ended(toInside.id)) && (await ended(kept.id)), 'the queued runs ended');

    const etc = (await c.runGet(toEtc.id)).run;
    expect(etc).toMatchObject({ status: 'failed', reason: 'policy' });
    expect(etc.message).toMatch(/\/etc/);
    expect(backend.startedIn.has(toEtc.id)).toBe(false);

    const inner = (await c.runGet(toInside.id)).run;
    expect(inner).toMatchObject({ status: 'failed', reason: 'policy' });
    expect(inner.message).toMatch(/changed/);
    expect(backend.startedIn.has(toInside.id)).toBe(false);

    expect((await c.runGet(kept.id)).run).toMatchObject({ status: 'completed' });
    expect(backend.startedIn.get(kept.id)).toBe(realpathSync(keep));
  });
});
