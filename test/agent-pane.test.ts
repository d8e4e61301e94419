/**
 * AgentPane on a real PTY, with a program that plays recorded Claude Code screens: the state change
 * that reports an approval carries the prompt as read; the approval has an id; answers go one at a
 * time and only to the prompt meant, by the option on screen; a person's answer is heard by whoever
 * waits for it; a prompt answered at the terminal is withdrawn.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentCatalog, AgentPane, type ScreenAnswer, type StateChange } from '../src/agents/index.js';
import { PaneRegistry } from '../src/pane/index.js';
import { writeScreenPlayer, type PlayerStep } from './support/screen-player.js';
import { tempDir } from './support/shell.js';
import { until } from './support/processes.js';

const screensDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'screens', 'claude-2.1.197');
const profile = new AgentCatalog().get('claude');
const registry = new PaneRegistry();
const scratch = tempDir('sb-agent-pane-');

afterAll(async () => {
  await registry.close({ graceMs: 500 });
  scratch.cleanup();
});

function player(steps: PlayerStep[]): string {
  return writeScreenPlayer(scratch.dir, screensDir, steps);
}

/** A folder of the recorded screens plus `approval-2`, the same prompt for another file (second.txt). */
function twoApprovalScreens(name: string): string {
  const dir = path.join(scratch.dir, name);
  mkdirSync(dir, { recursive: true });
  for (const screen of ['idle-start', 'approval', 'done-idle']) copyFileSync(path.join(screensDir, `${screen}.txt`), path.join(dir, `${screen}.txt`));
  writeFileSync(path.join(dir, 'approval-2.txt'), readFileSync(path.join(screensDir, 'approval.txt'), 'utf8').replaceAll('tool_out.txt', 'second.txt'));
  return dir;
}

function agentPane(file: string): AgentPane {
  const pane = registry.create({ argv: [process.execPath, file], cols: 120, rows: 40, agent: { name: 'claude', version: '2.1.197' } });
  return new AgentPane(pane, profile);
}

/** The next change to `state`; fails at once when the program ends first, rather than waiting for the test's time limit. */
const next = (agent: AgentPane, state: StateChange['state']): Promise<StateChange> =>
  new Promise((resolve, reject) => {
    const sub = agent.onState((c) => {
      if (c.state !== state && c.state !== 'exited') return;
      sub.dispose();
      if (c.state === state) resolve(c);
      else reject(new Error(`the program ended before the state ${state}`));
    });
  });

/**
 * The last screen of a player stays until the pane is closed (a key nobody presses): a time on it
 * would race the tracker, which calls a screen idle only once it has held still, on a busy machine
 * (a CI-style run timed out waiting for idle after a 600 ms last screen).
 */
const HOLD = 'q';

describe('AgentPane on a real PTY', () => {
  it('carries the prompt in the state change, and answers it once, by the option on screen, for whoever waits', async () => {
    const agent = agentPane(player([{ screen: 'idle-start', ms: 300 }, { screen: 'approval', key: '1' }, { screen: 'done-idle', key: HOLD }]));
    const announced: (string | null | undefined)[] = [];
    agent.onState((c) => c.state === 'waiting_approval' && announced.push(c.approval?.command));
    try {
      const change = await next(agent, 'waiting_approval');
      // Read once, as the change that reports it: no listener reads the screen again.
      expect(change.approval).toMatchObject({ tool: 'shell', command: 'echo hello-from-tool > tool_out.txt && cat tool_out.txt' });
      const pending = agent.approval;
      expect(pending?.request).toMatchObject({ id: `${agent.pane.id}-approval-1`, source: { kind: 'screen', paneId: agent.pane.id }, subject: { tool: 'shell' } });
      expect(pending?.prompt).toBe(change.approval);
      const id = pending?.request.id ?? '';

      const heard = agent.answerFromPerson(id);
      const told: string[] = [];
      agent.onAnswering((a) => told.push(`answering ${a.decision} by ${a.by}`));
      agent.onAnswered((a) => told.push(`answered ${a.presses}`));
      await expect(agent.answer('allow', { decidedBy: 'person', by: 'a test', approvalId: `${id}-stale` })).rejects.toMatchObject({ code: 'CONFLICT' });
      const answering = agent.answer('allow', { decidedBy: 'person', by: 'a test', approvalId: id });
      // One answer at a time: a second one while the first is pressed is refused, nothing pressed.
      // The refusal names the approval being answered, so a turn that lost the race records the person's answer.
      await expect(agent.answer('deny', { decidedBy: 'person', by: 'another test' })).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringMatching(/being answered already/) as unknown, details: { answering: id } });
      const answered: ScreenAnswer = await answering;
      expect(answered).toMatchObject({ decision: 'allow', decidedBy: 'person', option: { label: 'Yes' }, keys: ['1'] });
      expect(answered.presses).toBeGreaterThanOrEqual(1);
      expect(told).toEqual(['answering allow by a test', `answered ${answered.presses}`]);
      expect((await heard)?.decision).toBe('allow');
      await next(agent, 'idle');
      expect(agent.approval).toBeNull();
      // The idle prompt right after the answer had not held still yet: it is not a second approval.
      expect(announced).toEqual(['echo hello-from-tool > tool_out.txt && cat tool_out.txt']);
      await expect(agent.answer('allow', { decidedBy: 'person', by: 'a test' })).rejects.toThrow(/no approval is pending/);
    } finally {
      agent.dispose();
    }
  });

  it('never presses a decided prompt into a screen that no longer shows it (a redraw no pattern reads)', async () => {
    // The recorded approval, then a screen no pattern reads: the prompt read before is not on screen.
    const dir = path.join(scratch.dir, 'redraw-screens');
    mkdirSync(dir, { recursive: true });
    for (const name of ['idle-start', 'approval']) copyFileSync(path.join(screensDir, `${name}.txt`), path.join(dir, `${name}.txt`));
    writeFileSync(path.join(dir, 'redrawing.txt'), 'redrawing...\n');
    const pane = registry.create({ argv: [process.execPath, writeScreenPlayer(scratch.dir, dir, [{ screen: 'idle-start', ms: 300 }, { screen: 'approval', ms: 400 }, { screen: 'redrawing', key: 'x' }])], cols: 120, rows: 40, agent: { name: 'claude', version: '2.1.197' } });
    const agent = new AgentPane(pane, profile);
    try {
      const change = await next(agent, 'waiting_approval');
      expect(change.approval).toMatchObject({ tool: 'shell' });
      await until(() => pane.screenLines().some((l) => l.includes('redrawing')), 'the redraw on screen', 20_000);
      // Read again as the screen is now: nothing a policy could judge, so it can only be asked.
      const settled = await agent.settleApproval();
      expect(settled?.prompt ?? null).toBeNull();
      // The keys decided for the earlier read are refused, and nothing is typed.
      await expect(agent.answer('allow', { decidedBy: 'policy', by: 'the policy', prompt: change.approval ?? null })).rejects.toMatchObject({ code: 'CONFLICT' });
      expect(pane.alive).toBe(true);
      expect(pane.screenLines().join('\n')).toContain('redrawing');
    } finally {
      agent.dispose();
    }
  });

  it('opens a second prompt drawn right behind the first under a new id, and says so', async () => {
    const dir = twoApprovalScreens('two-approvals');
    const pane = registry.create({ argv: [process.execPath, writeScreenPlayer(scratch.dir, dir, [{ screen: 'idle-start', ms: 300 }, { screen: 'approval', key: '1' }, { screen: 'approval-2', key: '1' }, { screen: 'done-idle', key: HOLD }])], cols: 120, rows: 40, agent: { name: 'claude', version: '2.1.197' } });
    const agent = new AgentPane(pane, profile);
    try {
      const announced: { id: string | undefined; command: string | null | undefined }[] = [];
      agent.onState((c) => c.state === 'waiting_approval' && announced.push({ id: agent.approval?.request.id, command: agent.approval?.prompt?.command }));
      await next(agent, 'waiting_approval');
      const first = announced[0]?.id ?? '';
      await agent.answer('allow', { decidedBy: 'person', by: 'a test', approvalId: first });
      // No change of state between the two prompts: the second is announced under its own id, read anew.
      await until(() => announced.length === 2, 'the second approval announced');
      expect(announced[1]?.id).not.toBe(first);
      expect(announced[1]?.command).toContain('second.txt');
      await expect(agent.answer('allow', { decidedBy: 'person', by: 'a test', approvalId: first })).rejects.toMatchObject({ code: 'CONFLICT' });
      const second = await agent.answer('allow', { decidedBy: 'person', by: 'a test', approvalId: announced[1]?.id ?? '' });
      expect(second.approval.prompt?.command).toContain('second.txt');
      await next(agent, 'idle');
    } finally {
      agent.dispose();
    }
  });

  it('opens a second prompt drawn while the idle prompt between them had not yet held still', async () => {
    const dir = twoApprovalScreens('idle-between');
    // The idle prompt shows for less than it must hold still to count: the state stays waiting_approval throughout.
    const steps: PlayerStep[] = [{ screen: 'idle-start', ms: 300 }, { screen: 'approval', key: '1' }, { screen: 'done-idle', ms: 150 }, { screen: 'approval-2', key: '1' }, { screen: 'done-idle', key: HOLD }];
    const pane = registry.create({ argv: [process.execPath, writeScreenPlayer(scratch.dir, dir, steps)], cols: 120, rows: 40, agent: { name: 'claude', version: '2.1.197' } });
    const agent = new AgentPane(pane, profile);
    try {
      const announced: { id: string | undefined; command: string | null | undefined }[] = [];
      agent.onState((c) => c.state === 'waiting_approval' && announced.push({ id: agent.approval?.request.id, command: c.approval?.command }));
      await next(agent, 'waiting_approval');
      await agent.answer('allow', { decidedBy: 'person', by: 'a test', approvalId: announced[0]?.id ?? '' });
      await until(() => announced.length === 2, 'the second approval announced');
      expect(announced[1]?.command).toContain('second.txt');
      const second = await agent.answer('allow', { decidedBy: 'person', by: 'a test', approvalId: announced[1]?.id ?? '' });
      expect(second.approval.prompt?.command).toContain('second.txt');
      await next(agent, 'idle');
      expect(announced).toHaveLength(2);
    } finally {
      agent.dispose();
    }
  });

  it('refuses an answer, and presses nothing, while the screen shows no approval though the state has not moved on yet', async () => {
    const agent = agentPane(player([{ screen: 'idle-start', ms: 300 }, { screen: 'approval', key: '1' }, { screen: 'done-idle', ms: 2_000 }]));
    try {
      await next(agent, 'waiting_approval');
      await agent.answer('allow', { decidedBy: 'person', by: 'a test', approvalId: agent.approval?.request.id ?? '' });
      const keys = vi.spyOn(agent.pane, 'sendKeys');
      // An answer with no id (answer_approval lets a client leave it out) right after: the idle prompt is on screen.
      await expect(agent.answer('allow', { decidedBy: 'person', by: 'another test' })).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringMatching(/no approval is pending/) as unknown });
      expect(await agent.settleApproval()).toBeNull();
      expect(keys).not.toHaveBeenCalled();
    } finally {
      agent.dispose();
    }
  });

  it('withdraws an approval answered at the terminal', async () => {
    const agent = agentPane(player([{ screen: 'idle-start', ms: 300 }, { screen: 'approval', key: '3' }, { screen: 'done-idle', key: HOLD }]));
    try {
      await next(agent, 'waiting_approval');
      const id = agent.approval?.request.id ?? '';
      const withdrawn: string[] = [];
      agent.onWithdrawn((a) => withdrawn.push(a.request.id));
      const heard = agent.answerFromPerson(id);
      // Someone presses the key in the pane itself, not through Switchboard.
      agent.pane.sendKeys(['3']);
      expect(await heard).toBeNull();
      expect(withdrawn).toEqual([id]);
    } finally {
      agent.dispose();
    }
  });
});
