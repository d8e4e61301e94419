/**
 * CodingAgent.execute() end to end with a real agent CLI and the scripted model: four tasks in
 * sequence on one agent session. A task whose model runs a shell command that writes a file; a
 * model that asks a question instead of working; a model that runs `rm -rf ~`, which the policy
 * refuses; a model error. Each result is checked for status, files changed, approvals and message.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { CodingAgent, type CodingAgentOptions, type ExecuteResult, type ProgressEvent } from '../../src/index.js';
import { ModelServer, type Scenario } from '../../src/model-server/index.js';
import { tempDir } from '../support/shell.js';
import { AGENT_BIN_DIRS, useAgentBinaries } from './agent-flow.js';

export interface ExecuteFlowOptions {
  agent: string;
  /** The HTTP status the model fails with (one the CLI shows rather than retries forever). */
  errorStatus: 500 | 400;
  /** The error as the result's errorMessage carries it. */
  errorShown: RegExp;
  /** Run in a git work tree (filesChanged from git) or a plain folder (from a snapshot). */
  git: boolean;
  /**
   * How `rm -rf ~` is stopped: refused by the blocklist when the CLI asks about the command, or
   * asked (never allowed) when the CLI first asks for access to the folder (OpenCode).
   */
  refusal?: 'deny' | 'ask_folder';
  /** The CLI reports its own state in a file (Claude Code): completion must have heard it say idle. */
  statusFile?: boolean;
}

export const QUESTION = 'Which port should the server listen on?';

function executeScenario(errorStatus: number): Scenario {
  return {
    name: 'execute',
    title: 'Scripted tasks',
    rules: [
      {
        match: 'create the report',
        steps: [
          { tool: 'shell', command: 'echo report-body > report.txt', description: 'Write report.txt', escalate: true },
          { text: 'Created report.txt with the report.', delay_ms: 300 },
        ],
      },
      { match: 'set up the server', steps: [{ text: QUESTION, delay_ms: 300 }] },
      {
        match: 'clean up everything',
        steps: [
          { tool: 'shell', command: 'rm -rf ~', description: 'Remove everything', escalate: true },
          { text: 'Removed everything.' },
        ],
      },
      { match: 'fail now', steps: [{ error: errorStatus as 500, message: 'scripted failure for the test' }] },
    ],
  };
}

/** A CodingAgent on the pinned CLI in an isolated HOME against the scripted model; progress events other than output go to `events`. */
export function sandboxedAgentOptions(tool: string, home: string, modelUrl: string, events: ProgressEvent[]): CodingAgentOptions {
  return {
    tool,
    sandbox: { home, modelUrl },
    binaryDirs: AGENT_BIN_DIRS,
    timeoutMs: 120_000,
    idleTimeoutMs: 60_000,
    onProgress: (e) => {
      if (e.type !== 'output') events.push(e);
    },
  };
}

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, { cwd, stdio: 'ignore', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
}

function explain(result: ExecuteResult): string {
  return JSON.stringify({ ...result, outputLog: result.outputLog.split('\n').slice(-40) }, null, 2);
}

export async function runExecuteFlow(options: ExecuteFlowOptions): Promise<void> {
  useAgentBinaries();
  const model = await ModelServer.start({ scenario: executeScenario(options.errorStatus) });
  const home = tempDir(`sb-exec-${options.agent}-home-`);
  const work = tempDir(`sb-exec-${options.agent}-work-`);
  // A file in the agent's HOME that `rm -rf ~` would take with it.
  const canary = path.join(home.dir, 'canary.txt');
  writeFileSync(canary, 'still here\n');
  if (options.git) {
    writeFileSync(path.join(work.dir, 'README.md'), '# project\n');
    git(work.dir, 'init', '-q');
    git(work.dir, 'add', '.');
    git(work.dir, 'commit', '-q', '-m', 'start');
  }
  const events: ProgressEvent[] = [];
  const agent = new CodingAgent({ ...sandboxedAgentOptions(options.agent, home.dir, model.url, events), autoApprove: true });
  try {
    // 1. A shell command that writes a file, approved by policy (inside the workdir).
    const made = await agent.execute('create the report please', { workdir: work.dir });
    expect(made.status, explain(made)).toBe('completed');
    expect(made.filesChanged, explain(made)).toEqual(['report.txt']);
    expect(made.fileChanges).toEqual([{ path: 'report.txt', change: 'added' }]);
    expect(made.approvals.length, explain(made)).toBeGreaterThanOrEqual(1);
    const approved = made.approvals[0];
    expect(approved?.decision).toBe('allow');
    expect(approved?.decidedBy).toBe('policy');
    expect(approved?.request?.tool).toBe('shell');
    expect(approved?.request?.command).toContain('report.txt');
    expect(approved?.answered?.keys.length).toBeGreaterThan(0);
    expect(made.finalMessage, explain(made)).toContain('Created report.txt');
    expect(made.states.map((s) => s.state)).toContain('waiting_approval');
    expect(made.outputLog).toContain('Created report.txt');
    expect(made.completedBy).toEqual(expect.arrayContaining(['idle prompt', 'work seen']));
    if (options.statusFile) expect(made.completedBy).toContain('status file: idle');

    // 2. The model asks instead of working: the task hands the question back.
    const asked = await agent.execute('set up the server please', { workdir: work.dir });
    expect(asked.status, explain(asked)).toBe('needs_input');
    expect(asked.question).toContain(QUESTION);
    expect(asked.filesChanged).toEqual([]);

    // 3. `rm -rf ~`: the blocklist refuses it, the agent is told no, nothing is removed.
    const refused = await agent.execute('clean up everything please', { workdir: work.dir });
    expect(refused.approvals.length, explain(refused)).toBeGreaterThanOrEqual(1);
    const denial = refused.approvals[0];
    if (options.refusal === 'ask_folder') {
      expect(denial?.decision, explain(refused)).toBe('ask');
      expect(denial?.request?.path).toBe('~');
      expect(refused.status).toBe('needs_input');
      expect(refused.question).toContain('~');
      // Leave it unanswered: closing the session ends the CLI, and the next task starts a new one.
      await agent.close();
    } else {
      expect(denial?.decision, explain(refused)).toBe('deny');
      expect(denial?.request?.command).toContain('rm -rf');
      expect(denial?.reason).toMatch(/rm/);
      // The turn ends either way: the model carries on without the command, or the CLI stops and
      // asks what to do instead (Claude Code: "Interrupted · What should Claude do instead?").
      expect(['completed', 'needs_input'], explain(refused)).toContain(refused.status);
    }
    expect(existsSync(canary)).toBe(true);
    expect(existsSync(path.join(work.dir, 'report.txt'))).toBe(true);

    // 4. A model error, with the CLI's message.
    const failed = await agent.execute('fail now please', { workdir: work.dir });
    expect(failed.status, explain(failed)).toBe('error');
    expect(failed.errorMessage, explain(failed)).toMatch(options.errorShown);

    // The progress stream saw the session start, states and approvals.
    expect(events.some((e) => e.type === 'started')).toBe(true);
    expect(events.filter((e) => e.type === 'approval').length).toBeGreaterThanOrEqual(2);
    expect(events.filter((e) => e.type === 'started').length).toBe(options.refusal === 'ask_folder' ? 2 : 1);
  } finally {
    const pane = agent.pane;
    await agent.dispose();
    if (pane) expect(pane.alive).toBe(false);
    await model.close();
    home.cleanup();
    work.cleanup();
  }
}
