import { describe, expect, it } from 'vitest';
import { TaskList } from './task-list.js';

describe('the task list', () => {
  it('lets a task that depends on another be claimed only once that one is done', () => {
    const tasks = new TaskList();
    const build = tasks.add('implement the flag');
    const test = tasks.add('test the flag', [build.id]);
    expect(tasks.ready().map((t) => t.id)).toEqual([build.id]);
    expect(() => tasks.claim(test.id, 'tester')).toThrow(expect.objectContaining({ code: 'CONFLICT', message: `${test.id} waits for ${build.id} to be done` }));
    tasks.claim(build.id, 'executor');
    expect(() => tasks.claim(build.id, 'tester')).toThrow(expect.objectContaining({ code: 'CONFLICT', message: `${build.id} is executor's` }));
    expect(() => tasks.complete(build.id, 'tester')).toThrow(expect.objectContaining({ code: 'CONFLICT' }));
    tasks.complete(build.id, 'executor');
    expect(tasks.ready().map((t) => t.id)).toEqual([test.id]);
    expect(tasks.claim(test.id, 'tester')).toMatchObject({ state: 'claimed', owner: 'tester' });
  });

  it('keeps a task whose check failed with its owner, with the output, clears it once done, and is not reopened by a late check', () => {
    const tasks = new TaskList();
    const t = tasks.add('fix the bug');
    tasks.claim(t.id, 'fixer');
    expect(tasks.completable(t.id, 'fixer')).toMatchObject({ state: 'claimed' });
    expect(() => tasks.completable(t.id, 'someone-else')).toThrow(expect.objectContaining({ code: 'CONFLICT' }));
    expect(tasks.checkFailed(t.id, '1 failing test')).toMatchObject({ state: 'claimed', owner: 'fixer', failedCheck: '1 failing test' });
    expect(tasks.complete(t.id, 'planner', true)).toMatchObject({ state: 'done', failedCheck: null });
    expect(tasks.checkFailed(t.id, 'a check that ended late')).toMatchObject({ state: 'done', failedCheck: null });
  });

  it('refuses unknown dependencies and ids, and hands a gone worker’s tasks back', () => {
    const tasks = new TaskList();
    expect(() => tasks.add('x', ['task-9'])).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS', message: 'depends_on names no task: task-9' }));
    expect(() => tasks.add('  ')).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS' }));
    expect(() => tasks.claim('task-7', 'w')).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS', message: 'no task task-7 (there are: none)' }));
    const a = tasks.add('a');
    tasks.claim(a.id, 'w1');
    expect(tasks.release('w1')).toEqual([a.id]);
    expect(tasks.list()[0]).toMatchObject({ state: 'open', owner: null });
  });
});
