import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { RunLedger } from '../../ledger/run-ledger.js';
import { SqliteLedgerStore } from '../../ledger/sqlite-store.js';
import { parseGovernancePolicy, type GovernancePolicyInput } from '../../governance/policy-file.js';
import { RunService } from '../run-service.js';
import { CommandBackend } from './command-backend.js';
import type { RunEvent } from '../../ledger/run-events.js';
import { isSwitchboardError } from '../../core/errors.js';
import { findProcessesWithEnv } from '../../platform/index.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(policy: GovernancePolicyInput = {}): Promise<{ service: RunService; work: string }> {
  const root = mkdtempSync(path.join(tmpdir(), 'sb-shell-runs-'));
  const work = path.join(root, 'work');
  mkdirSync(work);
  const ledger = new RunLedger({ store: new SqliteLedgerStore(':memory:') });
  const { service } = await RunService.start({ ledger, policy: parseGovernancePolicy({ sandbox: { roots: [root] }, ...policy }), backends: [new CommandBackend()], scope: root });
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  cleanups.push(() => ledger.close());
  cleanups.push(() => service.dispose());
  return { service, work };
}

function follow(service: RunService, runId: string): Promise<RunEvent[]> {
  const got: RunEvent[] = [];
  return new Promise((resolve, reject) => {
    service.subscribe(runId, 0, (e) => got.push(e), { onEnd: () => resolve(got), onError: reject }).catch(reject);
  });
}

const text = (events: RunEvent[]): string => events.filter((e) => e.type === 'token').map((e) => String(e.data.text)).join('');

describe.runIf(process.platform !== 'win32')('the shell backend', () => {
  it('runs the prompt as a command line to its exit, its output streamed as tokens', async () => {
    const { service, work } = await setup();
    const ok = await service.submit({ backend: 'shell', prompt: 'echo hi; echo oops >&2; pwd', cwd: work });
    const events = await follow(service, ok.id);
    expect(text(events)).toContain('hi\n');
    expect(text(events)).toContain('oops\n');
    expect(text(events)).toContain(`${work}\n`);
    expect(await service.get(ok.id)).toMatchObject({ status: 'completed', reason: 'finished' });
    const failed = await service.submit({ backend: 'shell', prompt: 'exit 3', cwd: work });
    await follow(service, failed.id);
    expect(await service.get(failed.id)).toMatchObject({ status: 'failed', reason: 'agent_error', message: expect.stringContaining('exited with 3') as unknown });
  });

  it('puts the command to the policy before it runs: a deny rule leaves the file in place', async () => {
    const { service, work } = await setup({ approvals: { rules: [{ tool: 'shell', command: '^rm ', decision: 'deny' }] } });
    const victim = path.join(work, 'victim.txt');
    writeFileSync(victim, 'keep me\n');
    const run = await service.submit({ backend: 'shell', prompt: `rm ${victim}`, cwd: work });
    const events = await follow(service, run.id);
    expect(existsSync(victim)).toBe(true);
    expect(events.find((e) => e.type === 'decision' && (e.data.subject as { tool?: string }).tool === 'shell')?.data).toMatchObject({ decision: 'deny', rule: 'approvals.rules[0]' });
    expect(await service.get(run.id)).toMatchObject({ status: 'failed', reason: 'policy' });
  });

  it('ends a cancelled command and everything it started', async () => {
    const { service, work } = await setup();
    const run = await service.submit({ backend: 'shell', prompt: 'sleep 60 & sleep 61; wait', cwd: work });
    const events = follow(service, run.id);
    const marked = (): number[] => findProcessesWithEnv('SWITCHBOARD_BRIDGE_RUN').filter((p) => p.value === run.id).map((p) => p.pid);
    while (marked().length < 3) await new Promise((r) => setTimeout(r, 25));
    await service.cancel(run.id);
    await events;
    expect(await service.get(run.id)).toMatchObject({ status: 'cancelled' });
    expect(marked()).toEqual([]);
  });

  it('refuses a follow-up: a command has no conversation', async () => {
    const { service, work } = await setup();
    const first = await service.submit({ backend: 'shell', prompt: 'true', cwd: work });
    await follow(service, first.id);
    const refusal = await service.submit({ backend: 'shell', prompt: 'true', cwd: work, parent: first.id }).catch((err: unknown) => err);
    expect(isSwitchboardError(refusal) && refusal.code).toBe('INVALID_PARAMS');
    expect((refusal as Error).message).toMatch(/no conversation to follow up/);
  });
});
