/**
 * A dialog is a dialog whenever it opens (issue 10): a fake agent in a real PTY opens its model
 * nudge in the middle of a task, as Codex did under load, and execute() answers it by the launch
 * policy and finishes the task instead of handing the nudge back as the model's question. A menu
 * no profile knows is never answered: at start-up it ends the start with its screen.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { AgentCatalog, defineProfile, startAgent } from '../src/agents/index.js';
import { PaneRegistry } from '../src/pane/index.js';
import { CodingAgent } from '../src/drivers/pane/index.js';
import { tempDir } from './support/shell.js';

const scratch = tempDir('sb-late-dialog-');
const registry = new PaneRegistry();

afterAll(async () => {
  await registry.close({ graceMs: 500 });
  scratch.cleanup();
});

/**
 * "idle> " with the model on the line above; a prompt makes it "working…" for a moment, then it
 * opens "New model available" (keys ignored for its first 200 ms), and after the answer it prints
 * "done: <prompt>" and its idle prompt again.
 */
function nudgeMidTaskAgent(): string {
  const file = path.join(scratch.dir, 'nudge-mid-task.cjs');
  writeFileSync(
    file,
    `let mode = 'idle', at = 0, line = '', shownAt = 0, model = 'unchanged', nudged = false, task = '';
const labels = ['Try new model', 'Use existing model'];
process.stdin.setRawMode(true);
const out = (s) => process.stdout.write(s);
const idle = () => { mode = 'idle'; out('\\x1b[H\\x1b[2Jmodel: ' + model + (task ? '\\r\\n● done: ' + task : '') + '\\r\\nidle> ' + line); };
const menu = () => out('\\x1b[H\\x1b[2JNew model available\\r\\n' + labels.map((l, i) => (i === at ? '› ' : '  ') + (i + 1) + '. ' + l).join('\\r\\n') + '\\r\\n\\r\\n  Press enter to confirm\\r\\n');
idle();
process.stdin.on('data', (d) => {
  const s = d.toString();
  if (mode === 'menu') {
    if (Date.now() - shownAt < 200) return;
    if (s === '\\x1b[B' || s === '\\x1bOB') { at = 1; menu(); }
    else if (s === '\\x1b[A' || s === '\\x1bOA') { at = 0; menu(); }
    else if (s === '\\r') { model = labels[at]; mode = 'working'; setTimeout(idle, 300); }
    return;
  }
  if (mode === 'working') return;
  if (s === '\\r') {
    task = line; line = ''; mode = 'working';
    out('\\r\\n✽ working… (esc to interrupt)\\r\\n');
    if (!nudged) { nudged = true; setTimeout(() => { mode = 'menu'; shownAt = Date.now(); menu(); }, 300); }
    else setTimeout(idle, 300);
  } else { line += s; out(s); }
});
`,
  );
  return file;
}

const profile = defineProfile(
  {
    name: 'nudger',
    binary: { names: [process.execPath] },
    interactive_args: [nudgeMidTaskAgent()],
    screens: [
      {
        versions: '*',
        idle: ['^idle>'],
        busy: ['esc to interrupt'],
        reply: ['^● '],
        dialogs: [
          {
            id: 'model_migration',
            when: ['New model available'],
            decides: 'keep_current_model',
            accept: { choose: '^Use existing model' },
            decline: { choose: '^Try new model' },
          },
        ],
      },
    ],
    approval_keys: { allow_once: ['y'], deny: ['n'] },
    version_args: null,
  },
  { builtin: false },
);

describe('a dialog that opens in the middle of a task', () => {
  it('is answered by the launch policy, and the task completes with the reply', async () => {
    const agent = new CodingAgent({ tool: 'nudger', catalog: new AgentCatalog([profile]), timeoutMs: 60_000 });
    try {
      const result = await agent.execute('say hello please', { workdir: scratch.dir });
      expect(result.status, JSON.stringify(result)).toBe('completed');
      expect(result.question).toBeNull();
      expect(result.finalMessage).toContain('done: say hello please');
      // The nudge was seen, as a dialog, and answered: the model kept.
      expect(result.states.map((s) => s.state)).toContain('waiting_input');
      expect(agent.pane?.screenLines().join('\n')).toContain('model: Use existing model');
    } finally {
      await agent.dispose();
    }
  });
});

describe('a menu no profile knows', () => {
  it('is never answered: the start ends with its screen and a clear reason', async () => {
    const file = path.join(scratch.dir, 'unknown-menu.cjs');
    writeFileSync(
      file,
      `process.stdin.setRawMode(true);
process.stdout.write('Try the shiny new thing?\\r\\n› 1. Yes, try it\\r\\n  2. Not now\\r\\n\\r\\n  Enter to confirm · Esc to cancel\\r\\n');
process.stdin.on('data', (d) => { if (d.toString() === '\\r') { process.stdout.write('\\r\\nANSWERED\\r\\n'); } });
`,
    );
    const offerer = defineProfile(
      { name: 'offerer', binary: { names: [process.execPath] }, interactive_args: [file], screens: [{ versions: '*', idle: ['^idle>'] }], approval_keys: { allow_once: ['y'], deny: ['n'] }, version_args: null },
      { builtin: false },
    );
    const started = startAgent(registry, offerer, { cwd: scratch.dir, readyTimeoutMs: 60_000, unknownDialogPatienceMs: 1_500 });
    await expect(started).rejects.toMatchObject({ code: 'SPAWN_FAILED', message: expect.stringMatching(/menu Switchboard does not know \(› 1\. Yes, try it\)/) as string });
    // Nothing was pressed: the program never printed its answer.
    const panes = registry.list();
    expect(panes.every((p) => !p.screenLines().join('\n').includes('ANSWERED'))).toBe(true);
  });
});
