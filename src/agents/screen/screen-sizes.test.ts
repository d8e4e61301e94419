/**
 * Every recorded screen, cut to the terminal sizes people use (80x24, 100x30, 200x50): rows longer
 * than the width wrapped onto the next row, as a terminal wraps them, and only the bottom rows kept,
 * as a shorter terminal shows them. Detection must read the cut screen as it read the whole one,
 * and an approval must fail closed: a cut prompt is either read the same, or not read with
 * certainty; it is never read with certainty as something else.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { parseApproval } from './approval-prompt.js';
import { AgentCatalog } from '../profiles/catalog.js';
import { detectScreen } from './detect.js';
import { FIXTURES_DIR, loadScreen } from '../../../test/support/screen-fixtures.js';

const catalog = new AgentCatalog();
const SIZES = [
  [80, 24],
  [100, 30],
  [200, 50],
] as const;

/** Every recorded TUI screen: agent, version, fixture path. */
function recordings(): [string, string | undefined, string][] {
  const out: [string, string | undefined, string][] = [];
  for (const dir of readdirSync(path.join(FIXTURES_DIR, 'screens'))) {
    const [label = '', version] = dir.split(/-(?=\d)/);
    for (const f of readdirSync(path.join(FIXTURES_DIR, 'screens', dir))) if (!f.endsWith('.ansi.txt')) out.push([label.split('-')[0] ?? '', version, `screens/${dir}/${f}`]);
  }
  for (const f of readdirSync(path.join(FIXTURES_DIR, 'cli-captures'))) {
    if (!/-tui-.*(?<!\.ansi)\.txt$/.test(f)) continue;
    const agent = f.split('-')[0] ?? '';
    out.push([agent, agent === 'claude' ? '2.1.197' : undefined, `cli-captures/${f}`]);
  }
  return out;
}

/** The screen as a terminal of `cols` x `rows` shows it: long rows wrapped, the bottom rows kept. */
export function cutScreen(lines: readonly string[], cols: number, rows: number): string[] {
  const wrapped: string[] = [];
  for (const line of lines) {
    const chars = Array.from(line);
    if (chars.length <= cols) wrapped.push(line);
    else for (let at = 0; at < chars.length; at += cols) wrapped.push(chars.slice(at, at + cols).join(''));
  }
  // Blank rows below the content are not part of what a shorter terminal must show.
  while (wrapped.length > 0 && (wrapped[wrapped.length - 1] ?? '').trim() === '') wrapped.pop();
  return wrapped.slice(-rows);
}

describe.each(SIZES)('recorded screens cut to %dx%d', (cols, rows) => {
  it.each(recordings())('%s %s %s', (agent, version, file) => {
    const screens = catalog.get(agent).screensFor(version);
    const { lines } = loadScreen(path.join(FIXTURES_DIR, file));
    const whole = detectScreen(screens, { lines });
    const cut = cutScreen(lines, cols, rows);
    const seen = detectScreen(screens, { lines: cut });
    if (whole.kind === 'approval') {
      // Modal either way: the prompt, or a menu waiting for a choice when its question was cut off.
      expect(['approval', 'dialog']).toContain(seen.kind);
      const before = parseApproval(screens, { lines });
      const after = parseApproval(screens, { lines: cut });
      if (after?.certain) expect({ tool: after.tool, command: after.command, path: after.path }).toEqual({ tool: before?.tool, command: before?.command, path: before?.path });
      // A prompt still on screen whole and not wrapped (a shorter terminal, as wide) is read as before.
      const unwrapped = lines.every((l) => Array.from(l).length <= cols);
      const whole = before !== null && cut.length >= lines.slice(before.row).filter((l) => l.trim() !== '').length + 4;
      if (before?.certain && unwrapped && whole) expect(after?.certain, JSON.stringify(after?.doubts)).toBe(true);
      return;
    }
    if (whole.kind === 'dialog') {
      // A dialog stays a dialog; when the words that name it were cut off, it is one of unknown
      // meaning (nothing answers it) or unreadable, never an idle prompt, work or an approval.
      expect(['dialog', 'unknown']).toContain(seen.kind);
      if (seen.dialog) expect(seen.dialog.id).toBe(whole.dialog?.id);
      return;
    }
    // Wrapping can split the words a pattern looks for; the screen's shape still says the same.
    expect(seen.kind === 'unknown' && whole.kind !== 'unknown' ? `${file}: lost` : seen.kind).toBe(whole.kind);
  });
});

describe('a prompt cut by a narrow terminal', () => {
  it('is never read with certainty as a different command', () => {
    // Claude Code 2.1.330's prompt with a command longer than 80 columns, hard-wrapped.
    const rule = '╌'.repeat(80);
    const command = `rm -r /tmp/outside-the-workdir/${'x'.repeat(70)} && echo done`;
    const lines = [' Bash command', ' Clean up', rule, ` ${command}`, rule, ' Do you want to proceed?', ' ❯ 1. Yes', '   2. No', '', ' Esc to cancel · Tab to amend'];
    const screens = catalog.get('claude').screensFor('2.1.330');
    const whole = parseApproval(screens, lines);
    expect(whole).toMatchObject({ certain: true, command });
    const cut = parseApproval(screens, cutScreen(lines, 80, 24));
    expect(cut?.certain).toBe(false);
    expect(cut?.doubts.join(' ')).toMatch(/may be cut where it wrapped|not part of any layout|not one of the kinds/);
  });
});
