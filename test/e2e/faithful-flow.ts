/**
 * Issue 10's checks with a real agent CLI and the scripted model, on one agent session: a 20 KB
 * task and a 200 KB one reach the model whole and the result is the model's answer (not a false
 * completion on an input box that redrew); a file written and a file edited inside the workdir are
 * approved by the auto-approve policy as file changes with their path; and, where the CLI asks
 * about shell commands, a destructive command outside the workdir is read as what the CLI will run
 * and never approved.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { CodingAgent, type ExecuteResult, type ProgressEvent } from '../../src/index.js';
import { ModelServer, type Scenario } from '../../src/model-server/index.js';
import { tempDir } from '../support/shell.js';
import { useAgentBinaries } from './agent-flow.js';
import { sandboxedAgentOptions } from './execute-flow.js';

export interface FaithfulFlowOptions {
  agent: string;
  /** The CLI asks before running a shell command (Codex runs one inside its sandbox without asking). */
  asksForShell: boolean;
  /** The CLI asks before writing a file inside the workdir. */
  asksForFiles: boolean;
  /** OpenCode asks for the folder outside the project before the command that touches it. */
  asksForFolderFirst?: boolean;
}

const MARK = 'END-OF-LONG-TASK';
const ANSWER = 'I read every word of the long task.';

/** A task of about `size` characters on one line, ending with the mark the scenario answers. */
function longTask(size: number): string {
  const words: string[] = ['Please read all of this before you answer:'];
  let length = words[0]?.length ?? 0;
  for (let i = 0; length < size - MARK.length - 1; i++) {
    const word = `word${i}`;
    words.push(word);
    length += word.length + 1;
  }
  words.push(MARK);
  return words.join(' ');
}

function scenario(victim: string): Scenario {
  return {
    name: 'faithful',
    title: 'Scripted tasks',
    rules: [
      // A model takes a moment to answer: the test asserts the CLI was seen at work, and an answer
      // in 0 ms let Claude Code 2.1.332 draw its spinner for less than a render under load.
      { match: MARK, steps: [{ text: ANSWER, delay_ms: 1_000 }] },
      { match: 'create the notes', steps: [{ tool: 'write', path: 'b.txt', content: 'hello b\n' }, { text: 'Created b.txt.' }] },
      { match: 'fix the greeting', steps: [{ tool: 'edit', path: 'a.txt', old: 'alpha', new: 'beta' }, { text: 'Edited a.txt.' }] },
      { match: 'clean the cache', steps: [{ tool: 'shell', command: `rm -r ${victim}`, description: 'Remove the cache', escalate: true }, { text: 'Removed the cache.' }] },
    ],
  };
}

const explain = (r: ExecuteResult): string => JSON.stringify({ ...r, outputLog: r.outputLog.split('\n').slice(-30) }, null, 2);

export async function runFaithfulFlow(options: FaithfulFlowOptions): Promise<void> {
  useAgentBinaries();
  const outside = tempDir(`sb-faithful-${options.agent}-outside-`);
  const victim = path.join(outside.dir, 'cache');
  mkdirSync(victim);
  writeFileSync(path.join(victim, 'keep.txt'), 'keep\n');
  const model = await ModelServer.start({ scenario: scenario(victim) });
  const home = tempDir(`sb-faithful-${options.agent}-home-`);
  const work = tempDir(`sb-faithful-${options.agent}-work-`);
  writeFileSync(path.join(work.dir, 'a.txt'), 'alpha\n');
  const events: ProgressEvent[] = [];
  const agent = new CodingAgent({ ...sandboxedAgentOptions(options.agent, home.dir, model.url, events), autoApprove: true });
  /** The main model requests that carried the long task, by how much of it they carried. */
  const received = (size: number): boolean =>
    model.modelRequests().some((r) => r.plan?.role === 'main' && r.plan.promptChars >= size && r.plan.promptEnd.includes(MARK));
  try {
    // 1. Long tasks, typed the way this CLI takes them, reach the model whole.
    for (const size of [20_000, 200_000]) {
      const result = await agent.execute(longTask(size), { workdir: work.dir });
      expect(result.status, explain(result)).toBe('completed');
      expect(result.finalMessage, explain(result)).toContain(ANSWER);
      expect(received(size), `the model did not receive the ${size}-character task whole`).toBe(true);
      expect(result.completedBy).toContain('work seen');
    }

    // 2. A file written and a file edited inside the workdir: file changes with their path, allowed.
    const wrote = await agent.execute('create the notes please', { workdir: work.dir });
    expect(wrote.status, explain(wrote)).toBe('completed');
    expect(readFileSync(path.join(work.dir, 'b.txt'), 'utf8')).toBe('hello b\n');
    const edited = await agent.execute('fix the greeting please', { workdir: work.dir });
    expect(edited.status, explain(edited)).toBe('completed');
    expect(readFileSync(path.join(work.dir, 'a.txt'), 'utf8')).toBe('beta\n');
    if (options.asksForFiles) {
      for (const [result, file] of [
        [wrote, 'b.txt'],
        [edited, 'a.txt'],
      ] as const) {
        expect(result.approvals.length, explain(result)).toBeGreaterThanOrEqual(1);
        const approval = result.approvals[0];
        expect(['file_edit', 'file_write']).toContain(approval?.request?.tool);
        expect(path.basename(approval?.request?.path ?? '')).toBe(file);
        expect(approval?.request?.certain).toBe(true);
        expect(approval?.decision).toBe('allow');
        // One answer, pressed as often as the CLI needed, is one approval.
        expect(result.approvals.filter((a) => a.decision === 'allow').length).toBe(1);
      }
    }

    // 3. A destructive command outside the workdir: read as what the CLI will run, never approved.
    if (options.asksForShell) {
      const cleaned = await agent.execute('clean the cache please', { workdir: work.dir });
      expect(cleaned.approvals.length, explain(cleaned)).toBeGreaterThanOrEqual(1);
      const asked = cleaned.approvals[0];
      if (options.asksForFolderFirst) expect(asked?.request?.path, explain(cleaned)).toBe(victim);
      else expect(asked?.request?.command, explain(cleaned)).toBe(`rm -r ${victim}`);
      expect(asked?.decision).not.toBe('allow');
      expect(['completed', 'needs_input']).toContain(cleaned.status);
      expect(existsSync(path.join(victim, 'keep.txt'))).toBe(true);
    }
  } finally {
    await agent.dispose();
    await model.close();
    home.cleanup();
    work.cleanup();
    outside.cleanup();
  }
}
