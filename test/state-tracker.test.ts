import { afterAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentCatalog, AgentStateTracker, type StateChange } from '../src/agents/index.js';
import { PaneRegistry } from '../src/pane/index.js';
import { writeScreenPlayer, type PlayerStep } from './support/screen-player.js';
import { tempDir } from './support/shell.js';

const screensDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'screens', 'claude-2.1.197');
const screens = new AgentCatalog().get('claude').screensFor('2.1.197');
const registry = new PaneRegistry();
const scratch = tempDir('sb-tracker-');

afterAll(async () => {
  await registry.close({ graceMs: 500 });
  scratch.cleanup();
});

function player(steps: PlayerStep[]): string {
  return writeScreenPlayer(scratch.dir, screensDir, steps);
}

function track(file: string, idleSettleMs = 300): { tracker: AgentStateTracker; changes: StateChange[]; exited: Promise<void> } {
  const pane = registry.create({ argv: [process.execPath, file], cols: 120, rows: 40 });
  const tracker = new AgentStateTracker(pane, screens, { idleSettleMs });
  const changes: StateChange[] = [];
  const exited = new Promise<void>((resolve) => {
    tracker.onChange((c) => {
      changes.push(c);
      if (c.state === 'exited') resolve();
    });
  });
  return { tracker, changes, exited };
}

describe('the agent state tracker on a real PTY', () => {
  it('follows thinking, an approval (answered by a key), and idle, with evidence', async () => {
    const file = player([
      { screen: 'idle-start', ms: 600 },
      { screen: 'thinking', ms: 400 },
      { screen: 'approval', key: '1' },
      { screen: 'done-idle', ms: 900 },
    ]);
    const { tracker, changes, exited } = track(file);
    const pane = registry.list().at(-1);
    tracker.onChange((c) => {
      if (c.state === 'waiting_approval') pane?.sendKeys(['1']);
    });
    await exited;
    const states = changes.map((c) => c.state);
    expect(states).toEqual(['idle', 'thinking', 'waiting_approval', 'idle', 'exited']);
    const approval = changes.find((c) => c.state === 'waiting_approval');
    expect(approval?.evidence).toMatchObject({ rule: 'approval' });
    expect(approval?.evidence?.line).toMatch(/Do you want to proceed|1\. Yes/);
    const thinking = changes.find((c) => c.state === 'thinking');
    expect(thinking?.evidence?.rule).toBe('busy');
    expect(changes.at(-1)?.exit).toEqual({ exitCode: 0, signal: null });
    tracker.dispose();
  });

  it('reports idle only once the prompt has held still', async () => {
    // The idle screen flickers by between two busy ones: too short to count as idle.
    const file = player([
      { screen: 'thinking', ms: 300 },
      { screen: 'reply-idle', ms: 100 },
      { screen: 'thinking', ms: 300 },
      { screen: 'done-idle', ms: 800 },
    ]);
    const { tracker, changes, exited } = track(file, 400);
    await exited;
    expect(changes.map((c) => c.state)).toEqual(['thinking', 'idle', 'exited']);
    const [thinking, idle] = changes;
    expect((idle?.at ?? 0) - (thinking?.at ?? 0)).toBeGreaterThanOrEqual(400);
    tracker.dispose();
  });

  it('calls an error on screen an error only in the turn it appeared', async () => {
    const file = player([
      { screen: 'error', key: 'n' },
      { screen: 'error', ms: 800 },
    ]);
    const { tracker, changes, exited } = track(file);
    const pane = registry.list().at(-1);
    const sub = tracker.onChange((c) => {
      if (c.state === 'error') {
        // A new turn begins with the old error still in view.
        tracker.beginTurn();
        pane?.sendKeys(['n']);
      }
    });
    await exited;
    sub.dispose();
    expect(changes.map((c) => c.state)).toEqual(['error', 'idle', 'exited']);
    expect(changes[0]?.error).toMatch(/API Error/);
    tracker.dispose();
  });
});
