import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_FINISHED_SESSIONS, SessionLogs } from './session-logs.js';
import { until } from '../../test/support/processes.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'sb-sessionlogs-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function exported(logs: SessionLogs, id: string): Promise<string[]> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  await logs.get(id).store.exportJsonl(out);
  return Buffer.concat(chunks).toString('utf8').trimEnd().split('\n');
}

describe('SessionLogs', () => {
  it('spills what memory evicts, so an export holds the whole session, and removes the file with the session', async () => {
    const spillDir = path.join(scratch, 'spill');
    const logs = new SessionLogs({ spillDir });
    logs.open({ id: 'p1', kind: 'pane', title: 't', store: { maxMessages: 10 } });
    for (let i = 1; i <= 100; i++) logs.get('p1').store.push({ type: 'stdout', content: `line ${i}` });
    expect(logs.get('p1').store.stats()).toMatchObject({ retained: 10, evicted: 90 });
    const lines = await exported(logs, 'p1');
    expect(lines).toHaveLength(100);
    expect(lines.map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    const file = path.join(spillDir, 'p1.jsonl');
    expect(existsSync(file)).toBe(true);
    logs.remove('p1');
    expect(() => logs.get('p1')).toThrow(expect.objectContaining({ code: 'SESSION_NOT_FOUND' }) as Error);
    await until(() => !existsSync(file), 'the spill file to be removed', 10_000);
    expect(existsSync(file)).toBe(false);
  });

  it('refuses an id in use and keeps only so many finished runs', () => {
    const logs = new SessionLogs();
    logs.open({ id: 'a', kind: 'run', title: 'a' });
    expect(() => logs.open({ id: 'a', kind: 'run', title: 'again' })).toThrow(/already exists/);
    logs.get('a').store.finish();
    for (let i = 0; i < MAX_FINISHED_SESSIONS + 5; i++) {
      const log = logs.open({ id: `r${i}`, kind: 'run', title: 'r' });
      log.store.finish();
    }
    const finished = logs.list().filter((s) => s.finished);
    expect(finished.length).toBeLessThanOrEqual(MAX_FINISHED_SESSIONS + 1);
    expect(logs.find('a')).toBeUndefined();
    logs.dispose();
  });
});
