/**
 * `switchboard run` in a real terminal (a PTY pane running the built CLI) against a real daemon
 * whose bridge runs the scripted fake backend: while the run works, a progress line at the bottom
 * says its state, time and events; a cancel from elsewhere ends it, the CLI says so, clears the
 * line and exits 130.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PaneRegistry } from '../../src/pane/index.js';
import { FakeBackend } from '../../src/runs/backends/fake-backend.js';
import { runServiceOf } from '../../src/api/index.js';
import { CLI, cleanEnv } from '../support/cli.js';
import { startTestDaemon } from '../support/daemon.js';
import { tempDir } from '../support/shell.js';

const scratch = tempDir('sb-run-tty-');
const home = path.join(scratch.dir, 'home');
const work = path.join(scratch.dir, 'work');
let started: Awaited<ReturnType<typeof startTestDaemon>> | undefined;
const registry = new PaneRegistry({ defaults: { killGraceMs: 1_000 }, baseEnv: cleanEnv() });

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(path.join(home, 'policy.yaml'), `sandbox:\n  roots: [${JSON.stringify(scratch.dir)}]\n`);
  started = await startTestDaemon({ home, bridge: { backends: [new FakeBackend()] } });
});

afterAll(async () => {
  await registry.close({ graceMs: 1_000 });
  await started?.stop();
  scratch.cleanup();
});

describe('switchboard run in a terminal', () => {
  it('shows a progress line while the run works, and exits 130 once it is cancelled', { timeout: 60_000 }, async () => {
    const daemon = started?.daemon;
    if (!daemon) throw new Error('no daemon');
    const pane = registry.create({ argv: [process.execPath, CLI, '--home', home, 'run', 'fake', 'silent', '--cwd', work], cwd: work, cols: 120, rows: 20 });
    const screen = (): string => pane.screenLines().join('\n');
    await expect.poll(screen, { timeout: 30_000 }).toMatch(/… running · \d+ s · \d+ events/);
    // The line moves on by itself while nothing else happens.
    const first = /· (\d+) s ·/.exec(screen())?.[1];
    await expect.poll(() => /· (\d+) s ·/.exec(screen())?.[1], { timeout: 10_000 }).not.toBe(first);
    const runs = runServiceOf(daemon.services);
    const [run] = (await runs.list({ status: 'running' })).runs;
    if (!run) throw new Error('no running run');
    await runs.cancel(run.id, 'owner');
    const exit = await pane.waitForExit();
    expect(exit.exitCode).toBe(130);
    const text = screen();
    expect(text).toContain(`run ${run.id} cancelled (cancelled_by_user)`);
    // The progress line was cleared, not left behind under the last words.
    expect(text).not.toMatch(/… (running|cancelled) · \d+ s/);
  });
});
