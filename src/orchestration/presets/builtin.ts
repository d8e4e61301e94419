/**
 * The built-in teams (seed 003's FR-104 and its three core scenarios): implement + test +
 * document; bug triage (reproduce, read logs, minimize, fix and verify); compare approaches. They
 * are validated like a user's preset, and a user's preset of the same name takes their place.
 */
import { parsePreset, type PresetInput, type TeamPreset } from './preset.js';

const PLANNER_BRIEF =
  'You lead this team. Split the goal into 2 to 5 tasks, give each to the worker whose role fits, wait for their results, check them, and write the report. Do not do the workers’ jobs yourself.';

const BUILTIN_INPUTS: readonly PresetInput[] = [
  {
    name: 'implement-test-document',
    description: 'A planner, an executor who writes the code, a tester who writes and runs the tests, and a writer who documents the change.',
    planner: 'planner',
    roles: [
      { name: 'planner', agent: 'claude', brief: PLANNER_BRIEF },
      { name: 'executor', agent: 'codex', brief: 'Implement what you are given, in small steps, and say which files you changed.', worktree: true },
      { name: 'tester', agent: 'gemini', brief: 'Write tests for the change and run them; report what passed and what failed, with the command.' },
      { name: 'doc', agent: 'claude', brief: 'Document the change for its users: what it does, how to use it, what changed.' },
    ],
  },
  {
    name: 'bug-triage',
    description: 'Reproduce a bug, read the logs, cut it down to a minimal case, then fix it and verify the fix.',
    planner: 'planner',
    roles: [
      { name: 'planner', agent: 'claude', brief: PLANNER_BRIEF },
      { name: 'reproducer', agent: 'codex', brief: 'Reproduce the bug with exact steps and the output that shows it.' },
      { name: 'log-reader', agent: 'gemini', brief: 'Read the logs and the code around the failure; say where it starts and why.', approvals: 'ask' },
      { name: 'minimizer', agent: 'opencode', brief: 'Cut the reproduction down to the smallest case that still fails.' },
      { name: 'fixer', agent: 'codex', brief: 'Fix the cause, add a test that failed before the fix, and run it.', worktree: true },
    ],
  },
  {
    name: 'compare-approaches',
    description: 'Several workers each propose an approach with its risks and steps; the planner compares them in a table.',
    planner: 'planner',
    roles: [
      { name: 'planner', agent: 'claude', brief: `${PLANNER_BRIEF} End with a table comparing the approaches: effort, risk, what each changes.` },
      { name: 'approach-a', agent: 'codex', brief: 'Propose one way to reach the goal: the steps, the risks, what it changes. Do not change files.', approvals: 'ask' },
      { name: 'approach-b', agent: 'gemini', brief: 'Propose a way to reach the goal other than the obvious one: the steps, the risks, what it changes. Do not change files.', approvals: 'ask' },
      { name: 'approach-c', agent: 'opencode', brief: 'Propose the simplest way to reach the goal: the steps, the risks, what it changes. Do not change files.', approvals: 'ask' },
    ],
  },
];

/** The built-in presets, validated once. */
export const BUILTIN_PRESETS: readonly TeamPreset[] = BUILTIN_INPUTS.map((input) => parsePreset(input));
