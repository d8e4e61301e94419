import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCheck } from './check-command.js';

const dir = mkdtempSync(path.join(tmpdir(), 'sb-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.runIf(process.platform !== 'win32')("a role's check", () => {
  it('passes on exit 0 and fails on any other, with the end of what it printed, in its folder', async () => {
    const never = new AbortController().signal;
    expect(await runCheck('pwd; echo fine', dir, process.env, never)).toMatchObject({ command: 'pwd; echo fine', passed: true, exitCode: 0, output: `${dir}\nfine\n` });
    const failed = await runCheck('seq 1 5000; echo broken >&2; exit 4', dir, process.env, never);
    expect(failed).toMatchObject({ passed: false, exitCode: 4 });
    expect(failed.output.length).toBeLessThanOrEqual(8_000);
    expect(failed.output.endsWith('5000\nbroken\n')).toBe(true);
  });

  it('is ended, and fails saying why, past its time limit or when the run ends', async () => {
    const timedOut = await runCheck('sleep 60', dir, process.env, new AbortController().signal, 300);
    expect(timedOut).toMatchObject({ passed: false, output: '(it ran past 0.3 s and was ended)\n' });
    const ending = new AbortController();
    const running = runCheck('echo started; sleep 60', dir, process.env, ending.signal);
    setTimeout(() => ending.abort('the run ended while it ran'), 200);
    expect(await running).toMatchObject({ passed: false, output: expect.stringContaining('(the run ended while it ran)') });
  });

  it('ends what it left running in the background, which would hold its output open', async () => {
    // Without that, the check would wait on the background sleep's copy of its output for a minute.
    expect(await runCheck('sleep 60 & echo left-running', dir, process.env, new AbortController().signal)).toMatchObject({ passed: true, exitCode: 0, output: 'left-running\n' });
  });
});
