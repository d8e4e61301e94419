/**
 * execute() with each real CLI against the scripted model while both cores are busy (two busy
 * loops, as a loaded CI machine): how many of N tasks complete, whether anything but a model's
 * question comes back as needs_input, and how many presses each approval took (one answer is one
 * approval, whatever the CLI ignored). Half the tasks are a plain reply, half run a shell command
 * that the auto-approve policy allows. No peer drives these CLIs to completion: the figures stand alone.
 */
import { busyLoop } from './busy.js';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CodingAgent, type ExecuteResult } from '../src/index.js';
import { ModelServer } from '../src/model-server/index.js';
import { percentile } from './stats.js';
import { CAPTURE_CASES } from './capture-cases.js';
import { captureCase } from './case-run.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.join(here, '..', 'test', 'agent-clis', 'node_modules', '.bin');
const PLUGIN = path.join(here, '..', 'test', 'agent-clis', 'opencode-plugin');
const CLIS = ['claude', 'codex', 'gemini', 'opencode'] as const;

export interface ReliabilityFigure {
  name: string;
  unit: string;
  value: number;
  better: 'lower' | 'higher';
}

export async function measureReliability(runs = Number(process.env.SWITCHBOARD_BENCH_RUNS ?? 20)): Promise<ReliabilityFigure[]> {
  process.env.SWITCHBOARD_OPENCODE_PLUGIN_DIR = PLUGIN;
  const figures: ReliabilityFigure[] = [];
  const model = await ModelServer.start({
    scenario: {
      name: 'reliability',
      rules: [
        { match: 'say hello', steps: [{ text: 'Hello from the scripted model.', delay_ms: 300 }] },
        { match: 'write report (\\d+)', steps: [{ tool: 'shell', command: 'echo report > report.txt', description: 'Write report.txt', escalate: true }, { text: 'Wrote the report.' }] },
      ],
    },
  });
  const loops = [busyLoop(), busyLoop()];
  try {
    for (const cli of CLIS) {
      const home = mkdtempSync(path.join(os.tmpdir(), `sb-bench-rel-${cli}-home-`));
      const work = mkdtempSync(path.join(os.tmpdir(), `sb-bench-rel-${cli}-work-`));
      const agent = new CodingAgent({ tool: cli, autoApprove: true, sandbox: { home, modelUrl: model.url }, binaryDirs: [BIN], timeoutMs: 180_000, idleTimeoutMs: 90_000 });
      const results: ExecuteResult[] = [];
      try {
        for (let i = 0; i < runs; i++) {
          const task = i % 2 === 0 ? `say hello please (${i})` : `write report ${i} please`;
          results.push(await agent.execute(task, { workdir: work }));
        }
      } finally {
        await agent.dispose();
        rmSync(home, { recursive: true, force: true });
        rmSync(work, { recursive: true, force: true });
      }
      const completed = results.filter((r) => r.status === 'completed').length;
      const needsInput = results.filter((r) => r.status === 'needs_input').length;
      const approvals = results.flatMap((r) => r.approvals.filter((a) => a.decision === 'allow'));
      const extraAnswers = results.filter((r, i) => i % 2 === 1 && r.approvals.filter((a) => a.decision === 'allow').length > 1).length;
      const presses = approvals.map((a) => a.presses);
      const durations = results.map((r) => r.durationMs).sort((a, b) => a - b);
      figures.push({ name: `execute() under load, tasks completed of ${runs}: ${cli}`, unit: 'tasks', value: completed, better: 'higher' });
      figures.push({ name: `execute() under load, needs_input without a model question: ${cli}`, unit: 'tasks', value: needsInput, better: 'lower' });
      figures.push({ name: `execute() under load, approvals answered twice: ${cli}`, unit: 'tasks', value: extraAnswers, better: 'lower' });
      figures.push({ name: `execute() under load, key presses per approval (mean): ${cli}`, unit: 'presses', value: presses.length > 0 ? presses.reduce((a, b) => a + b, 0) / presses.length : 0, better: 'lower' });
      figures.push({ name: `execute() under load, task duration p50: ${cli}`, unit: 'ms', value: percentile(durations, 50), better: 'lower' });
      figures.push({ name: `execute() under load, task duration p95: ${cli}`, unit: 'ms', value: percentile(durations, 95), better: 'lower' });
      for (const [i, r] of results.entries()) if (r.status !== 'completed') console.log(`  ${cli} task ${i}: ${r.status} ${r.errorMessage ?? r.question ?? ''}`.slice(0, 300));
    }
  } finally {
    for (const loop of loops) loop.kill('SIGKILL');
    await model.close();
  }
  return figures;
}

/** The terminal sizes people use: auto-approve must hold at each (issue 20). */
const SIZES = [
  [80, 24],
  [120, 40],
  [200, 50],
] as const;

/**
 * `--auto-approve` at each terminal size with each CLI, idle machine: the shell case (a command
 * long enough to wrap at 80 columns) and the edit case, `runs` times each, every task on a fresh
 * CLI. Counted: tasks completed with their work done; tasks that came back `needs_input` (none of
 * these models asks a question, so every one is a stop auto-approve should not have made); and
 * false completions (reported completed, work not done).
 */
export async function measureAutoApproveAtSizes(runs = Number(process.env.SWITCHBOARD_BENCH_SIZE_RUNS ?? 2)): Promise<ReliabilityFigure[]> {
  process.env.SWITCHBOARD_OPENCODE_PLUGIN_DIR = PLUGIN;
  const figures: ReliabilityFigure[] = [];
  const cases = [CAPTURE_CASES.shell, CAPTURE_CASES.edit].filter((c): c is NonNullable<typeof c> => c !== undefined);
  for (const cli of CLIS) {
    for (const [cols, rows] of SIZES) {
      let completed = 0;
      let needsInput = 0;
      let falseCompletions = 0;
      const total = runs * cases.length;
      for (let i = 0; i < runs; i++) {
        for (const spec of cases) {
          const r = await captureCase(cli, spec, cols, rows);
          if (r.status === 'completed' && r.verdict === 'ok') completed++;
          if (r.status === 'completed' && r.verdict !== 'ok') falseCompletions++;
          if (r.status === 'needs_input') needsInput++;
          if (r.verdict !== 'ok') console.log(`  ${cli} ${cols}x${rows} ${spec.name}: ${r.status} (${r.verdict}) ${JSON.stringify(r.approvals.map((a) => a.doubts))}`.slice(0, 300));
        }
      }
      const at = `${cli} at ${cols}x${rows}`;
      figures.push({ name: `auto-approve, tasks completed of ${total}: ${at}`, unit: 'tasks', value: completed, better: 'higher' });
      figures.push({ name: `auto-approve, needs_input without a model question: ${at}`, unit: 'tasks', value: needsInput, better: 'lower' });
      figures.push({ name: `auto-approve, false completions: ${at}`, unit: 'tasks', value: falseCompletions, better: 'lower' });
    }
  }
  return figures;
}
