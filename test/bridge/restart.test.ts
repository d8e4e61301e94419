/**
 * A run service killed with SIGKILL in the middle of a run, and started again on the same ledger:
 * the run in flight is recorded as `failed (interrupted)` with every event before the kill intact,
 * the ledger checks clean, and the program the dead service had started is ended (the marker every
 * run process carries names its service, and that service is gone). The daemon-level test of the
 * same (a real daemon) comes with the daemon's wiring.
 */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RunLedger } from '../../src/ledger/run-ledger.js';
import { parseGovernancePolicy } from '../../src/governance/policy-file.js';
import { RunService } from '../../src/runs/run-service.js';
import { FakeBackend } from '../../src/runs/backends/fake-backend.js';
import { isProcessRunning } from '../../src/platform/index.js';
import { tempDir } from '../support/shell.js';
import { until } from '../support/processes.js';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('a run service restarted after a SIGKILL', () => {
  it('records the run in flight as failed (interrupted), keeps its events, and ends what it left running', { timeout: 60_000 }, async () => {
    const dir = tempDir('sb-bridge-restart-');
    const home = path.join(dir.dir, 'home');
    try {
      const host = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'test', 'support', 'bridge-host.ts'), home], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
      const exited = new Promise<void>((resolve) => host.once('exit', () => resolve()));
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        host.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
          if (out.includes('\n')) resolve(out.trim());
        });
        host.once('exit', () => reject(new Error('the host stopped by itself')));
      });
      const [finishedId, slowId, orphanPid] = line.split(' ') as [string, string, string];
      expect(isProcessRunning(Number(orphanPid))).toBe(true);
      host.kill('SIGKILL');
      await exited;

      const ledger = RunLedger.openSqlite({ home });
      try {
        const before = await ledger.events(slowId);
        const { service, recovered } = await RunService.start({ ledger, policy: parseGovernancePolicy({ sandbox: { roots: [home] } }), backends: [new FakeBackend()], scope: home });
        expect(recovered.interrupted).toEqual([slowId]);
        expect(recovered.processes).toBe(1);
        await until(() => !isProcessRunning(Number(orphanPid)), 'the orphan to end');
        expect(isProcessRunning(Number(orphanPid))).toBe(false);
        expect(await service.get(slowId)).toMatchObject({ status: 'failed', reason: 'interrupted' });
        const after = await ledger.events(slowId);
        expect(after.slice(0, before.length)).toEqual(before);
        expect(after.slice(before.length).map((e) => e.type)).toEqual(['state', 'done']);
        expect((await service.get(finishedId)).status).toBe('completed');
        expect(await ledger.check()).toBe('ok');
        await service.dispose();
      } finally {
        await ledger.close();
      }
    } finally {
      dir.cleanup();
    }
  });
});
