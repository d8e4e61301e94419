import { describe, expect, it } from 'vitest';
import { renderReport } from './report.js';
import { TaskList } from './task-list.js';

describe('the team report', () => {
  it('names the goal, the plan, what each worker changed, the checks, what is open and how to verify', () => {
    const tasks = new TaskList();
    const impl = tasks.add('implement | the flag');
    const test = tasks.add('test the flag', [impl.id]);
    tasks.claim(impl.id, 'executor-1');
    tasks.complete(impl.id, 'executor-1');
    tasks.claim(test.id, 'tester-1');
    tasks.checkFailed(test.id, '1 failing');
    const report = renderReport({
      goal: 'add a\n--verbose flag',
      preset: 'implement-test-document',
      state: 'completed',
      startedAt: '2026-11-29T12:00:00Z',
      endedAt: '2026-11-29T12:20:00Z',
      summary: 'The flag is in; one test still fails.',
      draft: 'Executor added the flag.',
      tasks: tasks.list(),
      workers: [
        { id: 'executor-1', role: 'executor', agent: 'codex', state: 'completed', folder: '/w/exec', changes: { files: [{ path: 'src/cli.ts', change: 'modified' }], diffStat: '1 file changed, 12 insertions(+)', branch: 'team/executor-1' } },
        { id: 'tester-1', role: 'tester', agent: 'gemini', state: 'idle', folder: '/w/test', checks: [{ command: 'npm test', passed: false, output: 'FAIL verbose.test.ts\n' }] },
      ],
    });
    expect(report).toContain('# Team run: add a --verbose flag');
    expect(report).toContain('| task-1 | implement \\| the flag | executor-1 | done | — |');
    expect(report).toContain('| task-2 | test the flag | tester-1 | claimed | task-1 |');
    expect(report).toContain('### executor-1: executor (codex), completed\n\nFolder: `/w/exec`, branch `team/executor-1`\n\nChanged (1 file changed, 12 insertions(+)):\n- modified `src/cli.ts`');
    expect(report).toContain('Check `npm test`: failed\n\n```\nFAIL verbose.test.ts\n```');
    expect(report).toContain('- task-2 (test the flag) is claimed with tester-1: its check failed');
    expect(report).toContain('- tester-1: `npm test` failed');
    expect(report).toContain('## How to verify\n\n- `(cd /w/test && npm test)`');
    expect(report).toContain("## The planner's draft\n\nExecutor added the flag.\n");
  });

  it('says so when nothing is open', () => {
    const report = renderReport({ goal: 'g', preset: 'p', state: 'completed', startedAt: 't', draft: '', tasks: [], workers: [] });
    expect(report).toContain('No tasks were listed.');
    expect(report).toContain('## Still open\n\nNothing.');
    expect(report).not.toContain('How to verify');
  });
});
