/**
 * A risk of issue 11: memory under a flood of output followed how much panes printed (8 MiB of log
 * and 4 MiB of unparsed output per pane, times the pane cap). One budget for the daemon now, an
 * equal share per pane or session: what a share cannot hold is evicted (and, for agent logs,
 * spilled to disk), so memory follows the number of panes.
 */
import { describe, expect, it } from 'vitest';
import { connect } from '../../src/index.js';
import { useTestDaemon } from '../support/daemon.js';
import { cleanEnv } from '../support/cli.js';

const BUDGET = 4 * 1024 * 1024;
const t = useTestDaemon({ outputMemoryBytes: BUDGET });

const FLOOD = "head -c 3000000 /dev/zero | tr '\\0' x | fold -w 100; echo; echo DONE; sleep 60";

describe('the daemon\u2019s memory budget', () => {
  it('holds what flooding panes print to the budget, and shrinks every share as panes are added', async () => {
    const client = await connect({ home: t.home, env: cleanEnv() });
    const flood = async (count: number): Promise<string[]> => {
      const ids = await Promise.all(Array.from({ length: count }, async () => (await client.createPane({ command: FLOOD, cwd: t.work })).pane_id));
      for (const id of ids) await client.waitFor(id, { pattern: '^DONE$', flags: 'm', timeoutMs: 60_000 });
      return ids;
    };
    const retained = async (): Promise<number[]> => (await client.request('log_sessions', {})).sessions.map((s) => s.stats.retainedBytes);

    const first = await flood(8);
    let info = await client.info();
    expect(info.output_budget).toMatchObject({ total_bytes: BUDGET, members: 8, share_bytes: BUDGET / 8 });
    // 24 MB printed; each log keeps two thirds of its share (the rest is for unparsed output).
    expect((await retained()).every((b) => b <= (BUDGET / 8) * (2 / 3))).toBe(true);
    expect((await retained()).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(BUDGET);

    const second = await flood(8);
    info = await client.info();
    expect(info.output_budget).toMatchObject({ members: 16, share_bytes: BUDGET / 16 });
    const now = await retained();
    expect(now).toHaveLength(16);
    expect(now.every((b) => b <= (BUDGET / 16) * (2 / 3))).toBe(true);
    // Removing panes gives their share back to the others.
    for (const id of [...first, ...second].slice(0, 12)) await client.remove(id);
    expect((await client.info()).output_budget).toMatchObject({ members: 4, share_bytes: BUDGET / 4 });
    for (const id of [...first, ...second].slice(12)) await client.remove(id);
    client.close();
  });
});
