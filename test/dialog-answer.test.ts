/**
 * Choosing a dialog's option by its label, in a real PTY, against a menu that behaves like the
 * CLIs' first-run dialogs, including the way they fail under load: a menu drawn before it reads keys.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentCatalog, answerDialog, defineProfile, menuChoiceFor, nextMenuKey, sendPrompt, type Dialog } from '../src/agents/index.js';
import { PaneRegistry, waitForScreen } from '../src/pane/index.js';
import { tempDir } from './support/shell.js';

const registry = new PaneRegistry();
const scratch = tempDir('sb-menu-');
const captures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'cli-captures');

afterAll(async () => {
  await registry.close({ graceMs: 500 });
  scratch.cleanup();
});

/**
 * A menu like Codex's model nudge: "› 1. Try new model" highlighted, arrows move, Enter picks and
 * prints the choice. Keys that arrive in its first `deafMs` are read and thrown away, as a TUI does
 * while it is still setting up its input, and each arrow redraws only after `lagMs`.
 */
function menuProgram(labels: string[], { deafMs, lagMs }: { deafMs: number; lagMs: number }): string {
  const file = path.join(scratch.dir, `menu-${Math.random().toString(36).slice(2)}.cjs`);
  writeFileSync(
    file,
    `const labels = ${JSON.stringify(labels)};
let at = 0;
const started = Date.now();
process.stdin.setRawMode(true);
const draw = () => process.stdout.write('\\x1b[H\\x1b[2J  Pick one\\r\\n\\r\\n' + labels.map((l, i) => (i === at ? '› ' : '  ') + (i + 1) + '. ' + l).join('\\r\\n') + '\\r\\n\\r\\n  enter confirm\\r\\n');
draw();
process.stdin.on('data', (d) => {
  if (Date.now() - started < ${deafMs}) return;
  const s = d.toString();
  if (s === '\\x1b[B' || s === '\\x1bOB') { at = Math.min(at + 1, labels.length - 1); setTimeout(draw, ${lagMs}); }
  else if (s === '\\x1b[A' || s === '\\x1bOA') { at = Math.max(at - 1, 0); setTimeout(draw, ${lagMs}); }
  else if (s === '\\r') { process.stdout.write('\\x1b[H\\x1b[2Jchose: ' + labels[at] + '\\r\\n'); setTimeout(() => process.exit(0), 50); }
});
`,
  );
  return file;
}

const MIGRATION: Dialog = {
  id: 'model_migration',
  when: ['Pick one'],
  decides: 'keep_current_model',
  options: { pattern: '^(?<selected>›)? *\\d+\\. +(?<label>.*\\S)' },
  accept: { choose: '^Use existing model' },
  decline: { choose: '^Try new model' },
};

/** Resolves once the menu is on screen (a busy machine starts the program late). */
async function drawn(pane: ReturnType<PaneRegistry['create']>): Promise<void> {
  expect((await waitForScreen(pane, { pattern: /enter confirm/, timeoutMs: 20_000 })).matched).toBe(true);
}

async function chosen(pane: ReturnType<PaneRegistry['create']>): Promise<string> {
  await pane.waitForExit();
  return pane.readText(5).lines.find((l) => l.startsWith('chose: ')) ?? '(nothing chosen)';
}

describe('choosing a dialog option by its label', () => {
  it('walks the highlight to the option and confirms it, even when the first key is lost', async () => {
    const pane = registry.create({ argv: [process.execPath, menuProgram(['Try new model', 'Use existing model'], { deafMs: 400, lagMs: 0 })], cwd: scratch.dir });
    await drawn(pane);
    // Blind keys ("Down, Enter") sent now would be lost to the deaf start and pick the default.
    const keys = await answerDialog(pane, MIGRATION, 'accept');
    expect(await chosen(pane)).toBe('chose: Use existing model');
    expect(keys[keys.length - 1]).toBe('Enter');
    expect(keys.filter((k) => k === 'Down').length).toBeGreaterThanOrEqual(1);
  });

  it('waits for each slow redraw instead of pressing ahead of the screen', async () => {
    const labels = ['Alpha', 'Beta', 'Gamma', 'Delta'];
    const pane = registry.create({ argv: [process.execPath, menuProgram(labels, { deafMs: 0, lagMs: 500 })], cwd: scratch.dir });
    await drawn(pane);
    const keys = await answerDialog(pane, { ...MIGRATION, accept: { choose: '^Gamma$' } }, 'accept');
    expect(await chosen(pane)).toBe('chose: Gamma');
    expect(keys).toEqual(['Down', 'Down', 'Enter']);
  });

  it('comes back up when the highlight sits below the choice', async () => {
    const pane = registry.create({ argv: [process.execPath, menuProgram(['Alpha', 'Beta', 'Gamma'], { deafMs: 0, lagMs: 0 })], cwd: scratch.dir });
    // Moved down twice, each step waited for on screen (a busy machine draws late).
    for (const row of ['› 1. Alpha', '› 2. Beta', '› 3. Gamma']) {
      expect((await waitForScreen(pane, { pattern: new RegExp(`^${row.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'), timeoutMs: 10_000 })).matched).toBe(true);
      if (!row.includes('Gamma')) pane.sendKeys(['Down']);
    }
    expect(pane.screenLines()).toContain('› 3. Gamma');
    expect(await answerDialog(pane, { ...MIGRATION, accept: { choose: '^Alpha$' } }, 'accept')).toEqual(['Up', 'Up', 'Enter']);
    expect(await chosen(pane)).toBe('chose: Alpha');
  });

  it('keeps the default when the default is the choice: Enter alone', async () => {
    const pane = registry.create({ argv: [process.execPath, menuProgram(['Try new model', 'Use existing model'], { deafMs: 0, lagMs: 0 })], cwd: scratch.dir });
    await drawn(pane);
    expect(await answerDialog(pane, MIGRATION, 'decline')).toEqual(['Enter']);
    expect(await chosen(pane)).toBe('chose: Try new model');
  });

  it('refuses to guess when no option matches, or the highlight cannot be seen', async () => {
    const pane = registry.create({ argv: [process.execPath, menuProgram(['One', 'Two'], { deafMs: 0, lagMs: 0 })], cwd: scratch.dir });
    await drawn(pane);
    await expect(answerDialog(pane, MIGRATION, 'accept')).rejects.toThrow(/no option on screen matches .*Use existing model.*"One", "Two"/);
    const noMarker: Dialog = { ...MIGRATION, options: { pattern: '^(?<selected>»)? *\\d+\\. +(?<label>.*\\S)' }, accept: { choose: '^Two' } };
    await expect(answerDialog(pane, noMarker, 'accept')).rejects.toThrow(/cannot see which option is highlighted/);
    expect(pane.alive).toBe(true);
  });
});

describe('the built-in profiles choose on their recorded dialogs', () => {
  const catalog = new AgentCatalog();
  const screenOf = (file: string): string[] => readFileSync(path.join(captures, file), 'utf8').replace(/\n$/, '').split('\n');
  const dialog = (agent: string, id: string): Dialog => {
    const found = catalog.get(agent).data.screens.flatMap((s) => s.dialogs).find((d) => d.id === id);
    if (!found) throw new Error(`${agent} has no ${id} dialog`);
    return found;
  };

  it("Codex's model nudge: keeping the model is one Down from the highlighted 'Try new model'", () => {
    const lines = screenOf('codex-tui-onboarding-model-migration.txt');
    const d = dialog('codex', 'model_migration');
    expect(nextMenuKey(menuChoiceFor(d, 'accept') ?? expect.fail('choose'), lines)).toBe('Down');
    expect(nextMenuKey(menuChoiceFor(d, 'decline') ?? expect.fail('choose'), lines)).toBe('Enter');
  });

  it("Claude Code's API key question: 'No (recommended)' is highlighted, 'Yes' is one Up", () => {
    const lines = screenOf('claude-tui-onboarding-apikey-dialog.txt');
    const d = dialog('claude', 'use_api_key');
    expect(nextMenuKey(menuChoiceFor(d, 'accept') ?? expect.fail('choose'), lines)).toBe('Up');
    expect(nextMenuKey(menuChoiceFor(d, 'decline') ?? expect.fail('choose'), lines)).toBe('Enter');
  });
});

/**
 * An agent whose model nudge opens after its idle prompt was drawn, as Codex's does under load:
 * "idle> " first, then, `nudgeAfterMs` later (or on the first key, which it swallows, or on the
 * first Enter, which it swallows too), a menu that ignores keys for its first 200 ms. Closing the
 * menu, it draws the prompt empty for 150 ms before it puts the typed text back, as Codex 0.171
 * does. A line typed at the prompt is echoed back as "got: …"; the menu's choice is printed as
 * "model: …".
 */
function lateNudgeAgent(nudgeAfterMs: number | 'first key' | 'first enter'): string {
  const file = path.join(scratch.dir, `late-nudge-${Math.random().toString(36).slice(2)}.cjs`);
  writeFileSync(
    file,
    `let mode = 'idle', at = 0, line = '', shownAt = 0, model = 'unchanged';
const labels = ['Try new model', 'Use existing model'];
process.stdin.setRawMode(true);
const out = (s) => process.stdout.write(s);
const idle = () => { mode = 'idle'; out('\\x1b[H\\x1b[2Jmodel: ' + model + '\\r\\nidle> ' + line); };
const menu = () => out('\\x1b[H\\x1b[2JNew model available\\r\\n' + labels.map((l, i) => (i === at ? '› ' : '  ') + (i + 1) + '. ' + l).join('\\r\\n') + '\\r\\n');
idle();
const nudge = () => { mode = 'menu'; shownAt = Date.now(); menu(); };
let nudged = false;
const when = ${JSON.stringify(nudgeAfterMs)};
if (typeof when === 'number') setTimeout(() => { nudged = true; nudge(); }, when);
const blankThenIdle = () => { out('\\x1b[H\\x1b[2Jmodel: ' + model + '\\r\\nidle> '); setTimeout(idle, 150); };
process.stdin.on('data', (d) => {
  const s = d.toString();
  if (!nudged && (when !== 'first enter' || s === '\\r')) { nudged = true; return nudge(); }
  if (mode === 'menu') {
    if (Date.now() - shownAt < 200) return;
    if (s === '\\x1b[B' || s === '\\x1bOB') { at = 1; menu(); }
    else if (s === '\\x1b[A' || s === '\\x1bOA') { at = 0; menu(); }
    else if (s === '\\r') { model = labels[at]; setTimeout(blankThenIdle, 100); }
    return;
  }
  if (s === '\\r') { out('\\r\\ngot: ' + line + '\\r\\n'); line = ''; setTimeout(() => process.exit(0), 50); }
  else { line += s; out(s); }
});
`,
  );
  return file;
}

describe('a prompt sent while a late first-run dialog is up', () => {
  const profile = defineProfile(
    {
      name: 'nudger',
      binary: { names: ['nudger'] },
      screens: [
        {
          versions: '*',
          idle: ['^idle>'],
          dialogs: [{ ...MIGRATION, when: ['New model available'] }],
        },
      ],
      approval_keys: { allow_once: ['y'], deny: ['n'] },
      input: { separate_enter: true, echo_timeout_ms: 1_000, enter_delay_ms: 100, paste_multiline: true },
    },
    { builtin: false },
  );
  const target = { input: profile.data.input, screens: profile.screensFor(undefined), policy: { trustFolder: true, useEnvApiKey: false, keepCurrentModel: true, tryNewFeatures: false, keepRetrying: false } };

  it.each([
    // The nudge is up before the prompt is sent.
    { when: 'answers the dialog by policy first, then types the prompt at the idle prompt', nudge: 150 as const, lookAfterMs: 400, seen: 'New model available' },
    // The nudge opens while the text goes in: it would take the Enter.
    { when: 'answers a dialog that opened after the text went in, before pressing Enter', nudge: 400 as const, lookAfterMs: 300, seen: 'idle>' },
    // The nudge opens on the first key and swallows the text.
    { when: 'types the prompt again when the dialog swallowed it', nudge: 'first key' as const, lookAfterMs: 200, seen: 'idle>' },
    // The nudge opens on the Enter, and the text comes back a moment after the blank prompt.
    { when: 'presses Enter again once the text is back after a dialog that took the Enter', nudge: 'first enter' as const, lookAfterMs: 200, seen: 'idle>' },
  ])('$when', async ({ nudge, lookAfterMs, seen }) => {
    const pane = registry.create({ argv: [process.execPath, lateNudgeAgent(nudge)], cwd: scratch.dir });
    // What the agent shows when the prompt is sent, waited for on screen (a busy machine starts it late).
    expect((await waitForScreen(pane, { pattern: new RegExp(`^${seen}`, 'm'), timeoutMs: 10_000 })).matched).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, lookAfterMs - 150));
    await sendPrompt(pane, target, 'say hello please');
    await pane.waitForExit();
    const text = pane.readText(20).lines.join('\n');
    expect(text).toContain('model: Use existing model');
    expect(text).toContain('got: say hello please');
  });
});

/**
 * An agent that empties its input box on the first Enter and, a second later, puts the text back
 * untaken, as OpenCode did with a 20 KB paste under load; the next Enter sends it ("got: …").
 */
function handsBackAgent(): string {
  return boxedAgent('hands-back', 'let enters = 0;', `enters += 1;
  if (enters === 1) { draw(''); setTimeout(() => draw(line), 1000); return; }`);
}

/**
 * An agent with one input box between two rules: keys are drawn into it, and `onEnter` (with
 * `line` and `draw` in scope) decides what an Enter does: a `return` in it drops the Enter, and
 * falling through takes the prompt ("got: …", then the program ends). `state` declares what
 * `onEnter` keeps.
 */
function boxedAgent(name: string, state: string, onEnter: string): string {
  const file = path.join(scratch.dir, `${name}-${Math.random().toString(36).slice(2)}.cjs`);
  writeFileSync(
    file,
    `let line = '';
${state}
process.stdin.setRawMode(true);
const out = (s) => process.stdout.write(s);
const draw = (text) => out('\\x1b[H\\x1b[2J────────\\r\\n> ' + text + '\\r\\n────────\\r\\n');
draw('');
process.stdin.on('data', (d) => {
  const s = d.toString();
  if (s !== '\\r') { line += s; return draw(line); }
  ${onEnter}
  out('got: ' + line + '\\r\\n');
  setTimeout(() => process.exit(0), 50);
});
`,
  );
  return file;
}

/**
 * The profile of a boxed agent test program (boxedAgent and its like): idle at its `>` row, with
 * `screen`'s other patterns, and the input settings every one of them shares, `input` over them.
 */
function boxedProfile(name: string, screen: { busy?: string[]; approval?: string[] } = {}, input: { submit_patience_ms?: number } = {}) {
  return defineProfile(
    {
      name,
      binary: { names: [name] },
      screens: [{ versions: '*', idle: ['^>'], ...screen }],
      approval_keys: { allow_once: ['y'], deny: ['n'] },
      input: { separate_enter: true, echo_timeout_ms: 1_000, enter_delay_ms: 100, paste_multiline: true, ...input },
    },
    { builtin: false },
  );
}

/** Prompts the program in `file` as `profile` says, and expects the prompt sent on the second Enter ("got: …"). */
async function expectSentOnSecondEnter(file: string, profile: ReturnType<typeof boxedProfile>): Promise<void> {
  const pane = registry.create({ argv: [process.execPath, file], cwd: scratch.dir });
  expect((await waitForScreen(pane, { pattern: /^>/m, timeoutMs: 10_000 })).matched).toBe(true);
  const submission = await sendPrompt(pane, { input: profile.data.input, screens: profile.screensFor(undefined) }, 'say hello please');
  expect(submission.enters).toBe(2);
  await pane.waitForExit();
  expect(pane.readText(20).lines.join('\n')).toContain('got: say hello please');
}

describe('a prompt the agent hands back', () => {
  it('is sent again when the emptied input box shows the text once more', async () => {
    await expectSentOnSecondEnter(handsBackAgent(), boxedProfile('hands-back'));
  });
});

/**
 * An agent that takes its first Enter as a line break, as Gemini CLI 0.61 does with an Enter that
 * comes within 40 ms of a paste by its clock (a busy machine stretches that), and redraws in two
 * pieces: the screen erased, then, 50 ms later, the box with the text and a blank line under it.
 * A loaded daemon reads such a frame between two chunks of the program's output. The next Enter
 * sends the prompt ("got: …").
 */
function lineBreakThenSplitRedrawAgent(): string {
  return boxedAgent('split-redraw', 'let enters = 0;', `enters += 1;
  if (enters === 1) { out('\\x1b[H\\x1b[2J'); setTimeout(() => draw(line + '\\r\\n  '), 50); return; }`);
}

describe('a prompt whose first Enter became a line break, redrawn in two pieces', () => {
  // CI saw Gemini's ask sit in its box: the erased half-frame read as a prompt taken with no input
  // box to watch, so no second Enter came, and the ask took the empty screen as the reply.
  it('is judged on the whole frame, and sent by a second Enter', async () => {
    await expectSentOnSecondEnter(lineBreakThenSplitRedrawAgent(), boxedProfile('split-redraw'));
  });
});

/**
 * An agent that drops every Enter until `deafMs` after its first one, with the text left in its
 * box, as OpenCode 1.18's home screen does while its own server is still making the session the
 * prompt goes into; then it takes the prompt ("got: …"). With `deafMs` past the default patience
 * (about 15 s of Enters), only a profile's longer `submit_patience_ms` gets the prompt in.
 */
function slowToTakeAgent(deafMs: number): string {
  return boxedAgent('slow-take', 'let firstEnterAt = 0;', `firstEnterAt ||= Date.now();
  if (Date.now() - firstEnterAt < ${deafMs}) return;`);
}

describe('a prompt the agent is slow to take', () => {
  const profileWith = (submitPatienceMs: number) => boxedProfile('slow-take', {}, { submit_patience_ms: submitPatienceMs });

  it('keeps pressing Enter for as long as the profile is patient', async () => {
    const profile = profileWith(40_000);
    const pane = registry.create({ argv: [process.execPath, slowToTakeAgent(16_500)], cwd: scratch.dir });
    expect((await waitForScreen(pane, { pattern: /^>/m, timeoutMs: 10_000 })).matched).toBe(true);
    const submission = await sendPrompt(pane, { input: profile.data.input, screens: profile.screensFor(undefined) }, 'say hello please');
    // 1.5 + 2 + 3 + 4 + 5 s of the default patience pass with the text in the box; the next Enter is taken.
    expect(submission.enters).toBeGreaterThan(5);
    await pane.waitForExit();
    expect(pane.readText(20).lines.join('\n')).toContain('got: say hello please');
  }, 60_000);

  it('answers NOT_DELIVERED with the screen once its patience is spent', async () => {
    const profile = profileWith(1_000);
    const pane = registry.create({ argv: [process.execPath, slowToTakeAgent(600_000)], cwd: scratch.dir });
    expect((await waitForScreen(pane, { pattern: /^>/m, timeoutMs: 10_000 })).matched).toBe(true);
    const failure = await sendPrompt(pane, { input: profile.data.input, screens: profile.screensFor(undefined) }, 'say hello please').catch((err: unknown) => err);
    expect(failure).toMatchObject({ code: 'NOT_DELIVERED', details: { pane_id: pane.id } });
    const screen = (failure as { details: { screen: string[] } }).details.screen;
    expect(screen.some((row) => row.startsWith('> say hello please'))).toBe(true);
    await pane.kill({ graceMs: 500 });
  });
});

/**
 * An agent that queues a prompt as Gemini CLI 0.61 does while it initializes: on Enter the text
 * stays in its box while a counter row redraws every 100 ms; 1.8 s later it starts the turn by
 * itself (a spinner row, box emptied) and 0.8 s after that shows the reply, idle again.
 */
function queuesWhileStartingAgent(): string {
  return boxedAgent(
    'queues',
    'let queuedAt = 0;',
    `if (queuedAt) return;
  queuedAt = Date.now();
  const frame = (box, status) => out('\\x1b[H\\x1b[2J' + status + '\\r\\n────────\\r\\n> ' + box + '\\r\\n────────\\r\\n');
  const starting = setInterval(() => frame(line, 'initializing ' + (Date.now() - queuedAt) + ' ms'), 100);
  setTimeout(() => {
    clearInterval(starting);
    const working = setInterval(() => frame('', 'working ' + (Date.now() - queuedAt) + ' ms (esc to cancel)'), 50);
    setTimeout(() => { clearInterval(working); frame('', 'reply: ' + line); }, 800);
  }, 1_800);
  return;`,
  );
}

describe('a prompt the agent queues and takes by itself', () => {
  const profile = boxedProfile('queues', { busy: ['esc to cancel'] });

  // While the screen keeps changing with the text in the box, the wait for it to hold still (before
  // another Enter) once outlasted the whole turn: the prompt's caller heard of it after the reply,
  // as "input cleared", and never saw the agent at work.
  it('is confirmed by the work it starts, however the screen changed before', async () => {
    const pane = registry.create({ argv: [process.execPath, queuesWhileStartingAgent()], cwd: scratch.dir });
    try {
      expect((await waitForScreen(pane, { pattern: /^>/m, timeoutMs: 10_000 })).matched).toBe(true);
      const submission = await sendPrompt(pane, { input: profile.data.input, screens: profile.screensFor(undefined) }, 'say hello please');
      expect(submission.confirmedBy).toBe('work');
      expect(pane.screenLines().join('\n')).toContain('(esc to cancel)');
    } finally {
      await pane.kill({ graceMs: 500 });
    }
  });
});

/**
 * An agent that, on Enter, empties its box, then for 200 ms shows the prompt's echo boxed just
 * like its input box (the input box itself hidden), then draws an approval under it: Gemini CLI
 * 0.61's frames as it starts a turn that needs an approval. Any further Enter would answer the
 * approval with nobody's decision, and it says so.
 */
function approvalAfterEchoAgent(): string {
  const file = path.join(scratch.dir, `echo-then-approval-${Math.random().toString(36).slice(2)}.cjs`);
  writeFileSync(
    file,
    `let line = '', entered = false;
process.stdin.setRawMode(true);
const out = (s) => process.stdout.write(s);
const box = (text) => '────────\\r\\n> ' + text + '\\r\\n────────\\r\\n';
const draw = (s) => out('\\x1b[H\\x1b[2J' + s);
draw(box(''));
process.stdin.on('data', (d) => {
  const s = d.toString();
  if (entered) {
    if (s === '\\r') out('\\r\\nSTRAY ENTER ANSWERED THE APPROVAL\\r\\n');
    if (s === 'y') { out('\\r\\nallowed by its key\\r\\n'); setTimeout(() => process.exit(0), 50); }
    return;
  }
  if (s !== '\\r') { line += s; return draw(box(line)); }
  entered = true;
  draw(box(''));
  setTimeout(() => draw(box(line)), 30);
  setTimeout(() => draw(box(line) + '\\r\\nAllow execution of: printf?\\r\\n› 1. Allow once\\r\\n  2. No\\r\\n'), 230);
});
`,
  );
  return file;
}

describe('a prompt whose turn opens an approval', () => {
  const profile = boxedProfile('echo-then-approval', { approval: ['Allow execution of'] });

  it('presses no second Enter on the frames between the box emptying and the approval', async () => {
    const pane = registry.create({ argv: [process.execPath, approvalAfterEchoAgent()], cwd: scratch.dir });
    expect((await waitForScreen(pane, { pattern: /^>/m, timeoutMs: 10_000 })).matched).toBe(true);
    const submission = await sendPrompt(pane, { input: profile.data.input, screens: profile.screensFor(undefined) }, 'run it please');
    expect(submission).toEqual({ confirmedBy: 'work', enters: 1, pasted: false });
    expect(pane.screenLines().join('\n')).toContain('Allow execution of');
    pane.sendKeys(['y']);
    await pane.waitForExit();
    const text = pane.readText(30).lines.join('\n');
    expect(text).toContain('allowed by its key');
    expect(text).not.toContain('STRAY');
  });
});
