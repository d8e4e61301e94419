/**
 * A team's shared task list (issue 24 item 10, after Claude Code's agent teams): tasks with an
 * owner, a state and dependencies. A task can be claimed only once every task it depends on is
 * done, by one worker at a time; only its owner (or the planner) completes it; a failing check
 * sends it back to its owner, open with the check's output. Dependencies must name tasks that
 * exist, so the list is always acyclic.
 */
import { SwitchboardError } from '../core/errors.js';

/** open: nobody has it; claimed: its owner works on it; done: its owner (or the planner) said so and its check passed. */
type TaskState = 'open' | 'claimed' | 'done';

export interface Task {
  id: string;
  title: string;
  /** Who works on it (a worker's id), or null while open. */
  owner: string | null;
  state: TaskState;
  dependsOn: string[];
  /** The last check that failed on it (its command's output, cut), cleared once it passes. */
  failedCheck: string | null;
}

/** Tasks in one list, at most: a plan is 2 to 5 tasks, a long one a few dozen. */
const MAX_TASKS = 200;
const MAX_TITLE_CHARS = 2_000;

export class TaskList {
  private readonly tasks = new Map<string, Task>();
  private next = 1;

  /** Adds a task; its dependencies must be tasks already on the list. */
  add(title: string, dependsOn: readonly string[] = []): Task {
    const text = title.trim();
    if (text === '' || text.length > MAX_TITLE_CHARS) throw new SwitchboardError('INVALID_PARAMS', `a task's title is 1 to ${MAX_TITLE_CHARS} characters`);
    if (this.tasks.size >= MAX_TASKS) throw new SwitchboardError('LIMIT_EXCEEDED', `the task list holds ${MAX_TASKS} tasks at most`, { max: MAX_TASKS });
    const unknown = dependsOn.filter((id) => !this.tasks.has(id));
    if (unknown.length > 0) throw new SwitchboardError('INVALID_PARAMS', `depends_on names no task: ${unknown.join(', ')}`, { unknown });
    const task: Task = { id: `task-${this.next++}`, title: text, owner: null, state: 'open', dependsOn: [...new Set(dependsOn)], failedCheck: null };
    this.tasks.set(task.id, task);
    return { ...task };
  }

  /** Every task, in the order they were added. */
  list(): Task[] {
    return [...this.tasks.values()].map((t) => ({ ...t, dependsOn: [...t.dependsOn] }));
  }

  /** The tasks someone could claim now: open, with every dependency done. */
  ready(): Task[] {
    return this.list().filter((t) => t.state === 'open' && this.waitingOn(t).length === 0);
  }

  /** `worker` takes the task; CONFLICT when another has it, it is done, or a dependency is not done yet. */
  claim(id: string, worker: string): Task {
    const task = this.get(id);
    if (task.state === 'done') throw new SwitchboardError('CONFLICT', `${id} is done already`, { task: id });
    if (task.state === 'claimed' && task.owner !== worker) throw new SwitchboardError('CONFLICT', `${id} is ${task.owner ?? 'someone'}'s`, { task: id, owner: task.owner });
    const waiting = this.waitingOn(task);
    if (waiting.length > 0) throw new SwitchboardError('CONFLICT', `${id} waits for ${waiting.join(', ')} to be done`, { task: id, waiting_on: waiting });
    task.state = 'claimed';
    task.owner = worker;
    return { ...task, dependsOn: [...task.dependsOn] };
  }

  /** Task `id` as it is, when `by` (or the planner, `asPlanner`) may complete it; CONFLICT when it is not theirs. Changes nothing. */
  completable(id: string, by: string, asPlanner = false): Task {
    const task = this.get(id);
    if (task.state !== 'done' && !asPlanner && task.owner !== by) throw new SwitchboardError('CONFLICT', `${id} is not ${by}'s to complete${task.owner ? ` (it is ${task.owner}'s)` : ' (claim it first)'}`, { task: id, owner: task.owner });
    return { ...task, dependsOn: [...task.dependsOn] };
  }

  /** The owner (or the planner, `asPlanner`) marks the task done. */
  complete(id: string, by: string, asPlanner = false): Task {
    this.completable(id, by, asPlanner);
    const task = this.get(id);
    if (task.state === 'done') return { ...task, dependsOn: [...task.dependsOn] };
    task.state = 'done';
    task.failedCheck = null;
    return { ...task, dependsOn: [...task.dependsOn] };
  }

  /** A check failed on a task its owner said was done: it goes back to them, with the output. */
  checkFailed(id: string, output: string): Task {
    const task = this.get(id);
    // Completed meanwhile (by the planner, say): a check that ended late does not reopen it.
    if (task.state === 'done') return { ...task, dependsOn: [...task.dependsOn] };
    task.state = task.owner ? 'claimed' : 'open';
    task.failedCheck = output;
    return { ...task, dependsOn: [...task.dependsOn] };
  }

  /** Hands a worker's tasks back to the list (the worker ended or was restarted). */
  release(worker: string): string[] {
    const released: string[] = [];
    for (const task of this.tasks.values()) {
      if (task.owner !== worker || task.state !== 'claimed') continue;
      task.state = 'open';
      task.owner = null;
      released.push(task.id);
    }
    return released;
  }

  private get(id: string): Task {
    const task = this.tasks.get(id);
    if (!task) throw new SwitchboardError('INVALID_PARAMS', `no task ${id} (there are: ${[...this.tasks.keys()].join(', ') || 'none'})`, { task: id });
    return task;
  }

  private waitingOn(task: Task): string[] {
    return task.dependsOn.filter((dep) => this.tasks.get(dep)?.state !== 'done');
  }
}
