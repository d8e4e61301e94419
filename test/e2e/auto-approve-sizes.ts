/**
 * `--auto-approve` as a user runs it, with the newest CLI at the sizes people use (80x24, 120x40,
 * 200x50): a shell command in the working folder and a file edit complete without a person, each
 * approved by the policy on a sure read of the prompt (issue 20: ordinary prompts read unsure
 * turned auto-approve into a stop). A shell command long enough to wrap in a box at 80 columns, so
 * the wrapping is read live, not only in fixtures.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { CodingAgent, type CodingAgentOptions, type ExecuteResult } from '../../src/index.js';
import { ModelServer, type Scenario } from '../../src/model-server/index.js';
import { PaneRegistry } from '../../src/pane/index.js';
import { tempDir } from '../support/shell.js';
import { AGENT_BIN_DIRS, useAgentBinaries } from './agent-flow.js';

export const SIZES = [
  [80, 24],
  [120, 40],
  [200, 50],
] as const;

/** 71 characters: wider than OpenCode's and Gemini CLI's approval boxes at 80 columns. */
const LONG_COMMAND = 'printf "%s\\n" "the answer, written slowly to a file of its own" > slow.txt';
/** 42 characters: fits every box. */
const SHORT_COMMAND = 'printf "%s\\n" "the short answer" > short.txt';

const scenario: Scenario = {
  name: 'auto-approve sizes',
  rules: [
    { match: 'run the slow command', steps: [{ tool: 'shell', command: LONG_COMMAND, description: 'Write slow.txt', escalate: true }, { text: 'Wrote slow.txt.' }] },
    { match: 'run the short command', steps: [{ tool: 'shell', command: SHORT_COMMAND, description: 'Write short.txt', escalate: true }, { text: 'Wrote short.txt.' }] },
    { match: 'change the colour', steps: [{ tool: 'edit', path: 'settings.txt', old: 'colour = red', new: 'colour = blue' }, { text: 'Changed the colour.' }] },
  ],
};

function explain(result: ExecuteResult): string {
  return JSON.stringify({ ...result, outputLog: result.outputLog.split('\n').slice(-30) }, null, 2);
}

/**
 * Completed, every approval asked allowed by the policy on a sure read of the prompt; `asks`: the
 * CLI asks before this tool at all (Codex writes files in its workspace without asking).
 */
function expectApprovedByPolicy(result: ExecuteResult, tool: string, asks = true): void {
  expect(result.status, explain(result)).toBe('completed');
  if (asks) expect(result.approvals.length, explain(result)).toBeGreaterThanOrEqual(1);
  for (const approval of result.approvals) {
    expect(approval.decision, explain(result)).toBe('allow');
    expect(approval.decidedBy).toBe('policy');
    expect(approval.request?.certain, JSON.stringify(approval.request?.doubts)).toBe(true);
    expect(approval.request?.tool).toBe(tool);
  }
}

/** A CodingAgent on the pinned CLI at `cols` x `rows`, isolated HOME, scripted model; everything ends after `body`. */
async function withAgent(agent: string, size: { cols: number; rows: number }, scenario: Scenario, options: Partial<CodingAgentOptions>, body: (runner: CodingAgent, work: string, registry: PaneRegistry) => Promise<void>): Promise<void> {
  useAgentBinaries();
  const model = await ModelServer.start({ scenario });
  const home = tempDir(`sb-auto-${agent}-home-`);
  const work = tempDir(`sb-auto-${agent}-work-`);
  // The registry's default size is the terminal the agent gets.
  const registry = new PaneRegistry({ defaults: size });
  const runner = new CodingAgent({ tool: agent, sandbox: { home: home.dir, modelUrl: model.url }, binaryDirs: AGENT_BIN_DIRS, registry, timeoutMs: 120_000, idleTimeoutMs: 60_000, ...options });
  try {
    await body(runner, work.dir, registry);
  } finally {
    await runner.dispose();
    await registry.close();
    await model.close();
    home.cleanup();
    work.cleanup();
  }
}

/**
 * Runs the tasks at one size. `longCommand`: `completes`, or `asked` where the CLI's box wraps it
 * and nothing on screen shows it whole (Gemini CLI at 80 columns): an unsure read is asked, never
 * allowed, and the command does not run.
 */
export async function runAutoApproveAtSize(agent: string, cols: number, rows: number, longCommand: 'completes' | 'asked' = 'completes'): Promise<void> {
  await withAgent(agent, { cols, rows }, scenario, { autoApprove: true }, async (runner, work, registry) => {
    writeFileSync(path.join(work, 'settings.txt'), 'name = demo\ncolour = red\nsize = 3\n');
    const { paneId } = await runner.start({ workdir: work });
    expect(registry.get(paneId).cols).toBe(cols);

    const edited = await runner.execute('change the colour please', { workdir: work });
    expectApprovedByPolicy(edited, 'file_edit', agent !== 'codex');
    expect(readFileSync(path.join(work, 'settings.txt'), 'utf8'), explain(edited)).toContain('colour = blue');

    const short = await runner.execute('run the short command please', { workdir: work });
    expectApprovedByPolicy(short, 'shell');
    expect(readFileSync(path.join(work, 'short.txt'), 'utf8'), explain(short)).toBe('the short answer\n');

    const long = await runner.execute('run the slow command please', { workdir: work });
    if (longCommand === 'completes') {
      expectApprovedByPolicy(long, 'shell');
      expect(long.approvals[0]?.request?.command).toBe(LONG_COMMAND);
      expect(readFileSync(path.join(work, 'slow.txt'), 'utf8'), explain(long)).toContain('written slowly');
    } else {
      expect(long.status, explain(long)).toBe('needs_input');
      expect(long.approvals[0]?.decision).toBe('ask');
      expect(long.approvals[0]?.request?.certain).toBe(false);
      expect(long.filesChanged).not.toContain('slow.txt');
    }
  });
}

/**
 * Two tasks in a row whose commands a callback refuses, on a screen short enough that the first
 * refusal's notice scrolls away during the second (Codex at 80x24 shows the same "■ Conversation
 * interrupted" both times): each ends `needs_input`, never `completed`, and neither command runs.
 */
export async function runTwoRefusals(agent: string, cols: number, rows: number): Promise<void> {
  const notes = Array.from({ length: 30 }, (_, i) => `Note ${i + 1} before the command.`).join('\n');
  const refusals: Scenario = {
    name: 'two refusals',
    rules: [
      { match: 'first task', steps: [{ tool: 'shell', command: 'echo one > one.txt', description: 'Write one', escalate: true }, { text: 'Done one.' }] },
      { match: 'second task', steps: [{ text: notes, tool: 'shell', command: 'echo two > two.txt', description: 'Write two', escalate: true }, { text: 'Done two.' }] },
    ],
  };
  await withAgent(agent, { cols, rows }, refusals, { onApproval: () => 'deny' }, async (runner, work) => {
    for (const task of ['do the first task please', 'do the second task please']) {
      const result = await runner.execute(task, { workdir: work });
      expect(result.status, explain(result)).toBe('needs_input');
      expect(result.approvals.map((a) => a.decision)).toEqual(['deny']);
      expect(result.filesChanged).toEqual([]);
    }
  });
}
