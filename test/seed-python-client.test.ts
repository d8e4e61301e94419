import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { useTestDaemon } from './support/daemon.js';

const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'seed-ccb-client');
const t = useTestDaemon();

describe("seed 000's Python client, unmodified", () => {
  it('creates, drives, reads, lists and kills a pane', async () => {
    const env = { ...process.env, ENSO_RPC_HOST: '127.0.0.1', ENSO_RPC_PORT: String(t.daemon.tcp?.port), ENSO_RPC_TOKEN: t.daemon.token, PYTHONDONTWRITEBYTECODE: '1' };
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile('python3', ['drive.py', t.work], { cwd: fixture, env, timeout: 60_000 }, (err, out, errOut) => {
        if (err) reject(new Error(`${err.message}\n${errOut}`));
        else resolve(out);
      });
    });
    const steps = new Map(stdout.trim().split('\n').map((line) => {
      const parsed = JSON.parse(line) as { step: string; value: unknown };
      return [parsed.step, parsed.value] as const;
    }));
    const paneId = steps.get('create_pane') as string;
    expect(paneId).toMatch(/^p[0-9a-f]{8}$/);
    expect(steps.get('is_alive')).toBe(true);
    expect(steps.get('get_text')).toContain('CCB_DONE: 42');
    const listed = steps.get('list_panes') as { pane_id: string; title: string; alive: boolean; cwd: string }[];
    expect(listed.find((p) => p.pane_id === paneId)).toMatchObject({ title: 'codex', alive: true, cwd: t.work });
    expect(steps.get('is_alive_after_kill')).toBe(false);
    expect(steps.get('error')).toBe('RPC Error -32002: pane not found: no-such-pane');
  });
});
