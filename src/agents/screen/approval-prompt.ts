/**
 * Reads a tool approval prompt on screen into what it asks (the kind of tool, its command or file)
 * and the answers it offers, each with what it means and the keys that choose it from the screen
 * as it is. What each CLI's prompt looks like is data (`approval_request` in a profile's screens
 * set), so a user's profile describes a new CLI the same way the built-ins do.
 */
import { compileSafeRegex } from '../../core/safe-regex.js';
import { encodeKey } from '../../pane/index.js';
import { patternFlags, patternSource } from '../profiles/check-profile.js';
import { detectScreen, lineIndexAt, lowestMatchOf, region, type Detection, type ScreenRows } from './detect.js';
import { isRule, leftOfPanel, rowContent, screenWidth, sidePanelColumn } from './structure.js';
import type { AnswerMeaning, ApprovalRequestSpec, ScreenPattern, Screens, ToolKind } from '../profiles/schema.js';

export type { AnswerMeaning, ToolKind };

// The parsed prompt is shared vocabulary: a state change carries it (src/contract/approval.ts).
export type { ApprovalOption, ApprovalPrompt } from '../../contract/approval.js';
import type { ApprovalOption, ApprovalPrompt } from '../../contract/approval.js';

interface Compiled {
  kinds: { kind: ToolKind; toolName: string | null; regex: RegExp; rows: number | undefined; gutter: RegExp | undefined; wrap: 'lines' | 'word' }[];
  decorations: RegExp[];
  witnesses: { regex: RegExp; rows: number | undefined }[];
  option: RegExp;
  continuation: RegExp | undefined;
  separator: RegExp;
  shortcut: { regex: RegExp; strip: boolean } | undefined;
  highlight: RegExp | undefined;
  meanings: { regex: RegExp; meaning: AnswerMeaning | null }[];
}

const cache = new WeakMap<ApprovalRequestSpec, Compiled>();

/** Patterns come from users' profiles too: they run on the linear-time fallback engine, as detect.ts's do. */
function regex(p: ScreenPattern, global = false): RegExp {
  const safe = compileSafeRegex(patternSource(p), patternFlags(p));
  return new RegExp(safe.source, global ? `${safe.flags}g` : safe.flags);
}

function compiled(spec: ApprovalRequestSpec): Compiled {
  let c = cache.get(spec);
  if (!c) {
    const { options } = spec;
    c = {
      kinds: spec.kinds.map((k) => ({ kind: k.kind, toolName: k.tool_name ?? null, regex: regex(k.pattern, true), rows: typeof k.pattern === 'string' ? undefined : k.pattern.rows, gutter: k.gutter ? regex(k.gutter) : undefined, wrap: k.wrap })),
      decorations: spec.decorations.map((d) => regex(d)),
      witnesses: spec.witnesses.map((w) => ({ regex: regex(w, true), rows: typeof w === 'string' ? undefined : w.rows })),
      option: regex(options.pattern),
      continuation: options.continuation ? regex(options.continuation) : undefined,
      separator: regex(options.separator ?? ' {2,}', true),
      shortcut: options.shortcut ? { regex: regex(options.shortcut.pattern), strip: options.shortcut.strip } : undefined,
      highlight: options.highlight ? regex(options.highlight) : undefined,
      meanings: spec.meanings.map((m) => ({ regex: regex(m.pattern), meaning: m.meaning })),
    };
    cache.set(spec, c);
  }
  return c;
}

/** An option as read from the screen, before its keys and meaning are worked out. */
export interface MenuRow {
  row: number;
  label: string;
  number: string | undefined;
  selected: boolean;
}
type RawOption = MenuRow;

/**
 * The rows of a menu: the lowest run of rows that `option` matches (group `label`, and `number` and
 * `selected` where it has them), each with the `continuation` rows below it (a wrapped label). The
 * lowest, because a live prompt is modal and drawn last; numbered lists higher up are history.
 */
export function menuRows(lines: readonly string[], option: RegExp, continuation?: RegExp): MenuRow[] {
  let last: MenuRow[] = [];
  let current: MenuRow[] = [];
  lines.forEach((line, row) => {
    const m = option.exec(line);
    const label = m?.groups?.label;
    if (m && label !== undefined) {
      current.push({ row, label: label.trim(), number: m.groups?.number, selected: Boolean(m.groups?.selected) });
      return;
    }
    const previous = current[current.length - 1];
    const more = previous && continuation ? continuation.exec(line)?.groups?.label : undefined;
    if (previous && more !== undefined) {
      previous.label = `${previous.label} ${more.trim()}`.trim();
      return;
    }
    if (current.length > 0) last = current;
    current = [];
  });
  return current.length > 0 ? current : last;
}

/** The answers of a list layout, with the highlight read from colours where the profile says how. */
function listOptions(c: Compiled, screen: ScreenRows): RawOption[] {
  const options = menuRows(screen.lines, c.option, c.continuation);
  if (c.highlight && screen.ansiLines) {
    for (const o of options) if (c.highlight.test(screen.ansiLines[o.row] ?? '')) o.selected = true;
  }
  return options;
}

/** Letters and digits only, in lower case: "(Y)es" and "[Yes]" name the same option. */
const sameLabel = (a: string, b: string): boolean => {
  const key = (s: string): string => s.toLowerCase().replace(/\((\w)\)/g, '$1').replace(/[^a-z0-9]+/g, ' ').trim();
  return key(a) === key(b);
};

/** The answers of an inline layout: the lowest row that holds them, split by the separator. */
function inlineOptions(c: Compiled, screen: ScreenRows): RawOption[] {
  for (let row = screen.lines.length - 1; row >= 0; row--) {
    const m = c.option.exec(screen.lines[row] ?? '');
    const text = m?.groups?.options;
    if (!m || text === undefined) continue;
    const labels: string[] = [];
    let from = 0;
    c.separator.lastIndex = 0;
    for (let s = c.separator.exec(text); s; s = c.separator.exec(text)) {
      if (s[0].length === 0) {
        c.separator.lastIndex += 1;
        continue;
      }
      labels.push(text.slice(from, s.index));
      from = s.index + s[0].length;
    }
    labels.push(text.slice(from));
    const options = labels.map((l) => l.trim()).filter((l) => l !== '').map((label) => ({ row, label, number: undefined, selected: false }));
    const marked = m.groups?.selected;
    const lit = c.highlight && screen.ansiLines ? c.highlight.exec(screen.ansiLines[row] ?? '')?.groups?.label : undefined;
    for (const name of [marked, lit]) {
      if (name === undefined || name.trim() === '') continue;
      const chosen = options.find((o) => sameLabel(o.label, name));
      if (chosen) chosen.selected = true;
    }
    return options;
  }
  return [];
}

/** Captured rows without what the CLI draws before each of them. */
function ungutter(text: string | undefined, gutter: RegExp | undefined): string | undefined {
  if (text === undefined || !gutter) return text;
  return text
    .split('\n')
    .map((row) => row.replace(gutter, ''))
    .join('\n');
}

/** Captured text without the screen's padding: each row's trailing blanks, and the ends. */
function clean(text: string | undefined): string | null {
  if (text === undefined) return null;
  const tidy = text
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n')
    .trim();
  return tidy === '' ? null : tidy;
}

interface KindMatch {
  kind: ToolKind;
  toolName: string | null;
  command: string | null;
  path: string | null;
  row: number;
  /** The last row the match covers. */
  endRow: number;
  /** The rows the command was read from (for the wrap check). */
  commandRows: number;
  /** How the kind's box breaks a long command (see the schema's `wrap`). */
  wrap: 'lines' | 'word';
}

/**
 * What the prompt asks: the kind whose match begins lowest at or above `limit` (the options), so a
 * prompt left in the history above does not count. A specific kind beats the catch-all `other`;
 * on the same row, the one listed first wins.
 */
function findKind(c: Compiled, lines: readonly string[], limit: number): KindMatch | undefined {
  let best: (KindMatch & { specific: boolean }) | undefined;
  for (const k of c.kinds) {
    const { text, rowOf, starts } = region(lines, k.rows);
    k.regex.lastIndex = 0;
    for (let m = k.regex.exec(text); m; m = k.regex.exec(text)) {
      if (m[0].length === 0) k.regex.lastIndex += 1;
      // The row where the matched text starts (a leading \s* may begin on an earlier row).
      const row = rowOf[lineIndexAt(starts, m.index + (m[0].length - m[0].trimStart().length))] ?? 0;
      if (row > limit) break;
      const specific = k.kind !== 'other';
      const better = !best || (specific && !best.specific) || (specific === best.specific && row > best.row);
      if (better) {
        // The row of the match's last character (a match may end with the newline of its last row).
        const endAt = Math.max(m.index, m.index + m[0].replace(/\n$/, '').length - 1);
        const endRow = rowOf[lineIndexAt(starts, endAt)] ?? row;
        const command = clean(ungutter(m.groups?.command, k.gutter));
        const commandRows = command?.split('\n').length ?? 0;
        const joined = k.wrap === 'word' && command !== null ? unwrapWords(command, lines, row, endRow) : command;
        const path = clean(ungutter(m.groups?.path, k.gutter));
        best = { kind: k.kind, toolName: clean(m.groups?.tool) ?? k.toolName, command: joined, path: path === null ? null : unwrapPath(path, lines), row, endRow, commandRows, wrap: k.wrap, specific };
      }
    }
  }
  if (!best) return undefined;
  const { specific: _, ...match } = best;
  return match;
}

const NAMED_KEYS: Record<string, string> = { esc: 'Escape', escape: 'Escape', enter: 'Enter', return: 'Enter', tab: 'Tab', 'shift+tab': 'BTab', space: 'Space' };

/**
 * A key hint as send_keys names it, or undefined when it is not a key. Letters are pressed in lower
 * case: a hint such as "(Y)es" shows the letter capitalised, and Shift+Y may mean something else.
 */
function keyName(hint: string): string | undefined {
  const text = hint.trim();
  const named = NAMED_KEYS[text.toLowerCase()];
  if (named) return named;
  if (/^.$/u.test(text)) return text.toLowerCase();
  try {
    encodeKey(text, { applicationCursorKeys: false });
    return text;
  } catch {
    return undefined;
  }
}

/** Typographic apostrophes as plain ones, and mnemonics ("(D)on't", "[a]pprove") as words, for reading a label. */
const plain = (label: string): string =>
  label
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/\((\w)\)|\[(\w)\]/g, '$1$2')
    .trim();

const DENY = /^(no|reject|deny|decline|cancel|don't allow|do not allow)\b/i;
const ALWAYS = /\b(always|don't ask again|do not ask again|for this session|during this session|allow all|remember)\b/i;
const ONCE = /^(yes|allow|approve|accept|proceed|run|ok|okay)\b/i;

/**
 * What an option means, from its label: "No…", "Reject" → deny; "…always…", "…don't ask again…",
 * "…for this session" → allow_always; "Yes…", "Allow once", "Proceed" → allow_once; anything else
 * (an editor, a feedback box) → null. A profile's `meanings` come before these.
 */
export function meaningOfLabel(label: string): AnswerMeaning | null {
  const text = plain(label);
  if (DENY.test(text)) return 'deny';
  if (ALWAYS.test(text)) return 'allow_always';
  if (ONCE.test(text)) return 'allow_once';
  return null;
}

function meaningOf(label: string, c: Compiled): AnswerMeaning | null {
  for (const o of c.meanings) if (o.regex.test(label)) return o.meaning;
  return meaningOfLabel(label);
}

/** The keys that choose option `index`, by the first of the profile's ways that this option offers. */
function keysFor(spec: ApprovalRequestSpec, options: readonly { number: string | undefined; key: string | undefined }[], index: number, selected: number): string[] {
  const option = options[index];
  if (!option) return [];
  for (const way of spec.select) {
    if (way === 'shortcut' && option.key !== undefined) return [option.key, ...spec.submit];
    if (way === 'number' && option.number !== undefined) return [...Array.from(option.number), ...spec.submit];
    if (way === 'arrows') {
      const [back, forward] = spec.options.layout === 'inline' ? ['Left', 'Right'] : ['Up', 'Down'];
      const steps = index - selected;
      return [...Array<string>(Math.abs(steps)).fill(steps > 0 ? forward : back), 'Enter'];
    }
  }
  return [];
}

/**
 * Parses the approval prompt on `screen` with a profile's screens set; null when the screen is not
 * an approval prompt (as detectScreen decides). A profile without `approval_request` gives a request
 * of kind `other` with no options, so callers fall back to the profile's approval_keys. `detection`
 * is the screen's, when the caller has it already (the state tracker).
 */
export function parseApproval(screens: Screens, screen: ScreenRows | readonly string[], known?: Detection): ApprovalPrompt | null {
  const rows: ScreenRows = Array.isArray(screen) ? { lines: screen as readonly string[] } : (screen as ScreenRows);
  const detection = known ?? detectScreen(screens, rows);
  if (detection.kind !== 'approval') return null;
  const anchor = detection.evidence?.row ?? 0;
  const spec = screens.approval_request;
  if (!spec) {
    return { certain: false, doubts: ['the profile does not say how to read its approval prompts'], tool: 'other', toolName: null, command: null, path: null, options: [], row: anchor };
  }
  const c = compiled(spec);
  const raw = spec.options.layout === 'list' ? listOptions(c, rows) : inlineOptions(c, rows);
  const top = raw[0]?.row;
  const kind = findKind(c, rows.lines, top ?? rows.lines.length - 1);

  const parsed = raw.map((o) => {
    const hint = c.shortcut?.regex.exec(o.label);
    const key = hint?.groups?.key !== undefined ? keyName(hint.groups.key) : undefined;
    const label = hint && key !== undefined && c.shortcut?.strip ? `${o.label.slice(0, hint.index)}${o.label.slice(hint.index + hint[0].length)}`.trim() : o.label;
    return { ...o, label, key };
  });
  const first = parsed[0];
  if (first && !parsed.some((o) => o.selected)) first.selected = true;
  const selected = parsed.findIndex((o) => o.selected);
  const options = parsed.map((o, i) => ({ label: o.label, keys: keysFor(spec, parsed, i, selected), meaning: meaningOf(o.label, c), selected: o.selected }));
  const doubts = kind ? doubtsAbout(kind, screens, c, rows, top) : ['no part of the prompt says what it asks'];
  if (options.length === 0) doubts.push('the answers it offers could not be read');

  return {
    certain: doubts.length === 0,
    doubts,
    tool: kind?.kind ?? 'other',
    toolName: kind?.toolName ?? null,
    command: kind?.command ?? null,
    path: kind?.path ?? null,
    options,
    row: kind?.row ?? Math.min(anchor, top ?? anchor),
  };
}

/** Rows a prompt never hides a call in: blank, a rule, a frame. */
const isFiller = (content: string): boolean => content === '' || isRule(content) || /^[\s│┃╭╮╰╯─]*$/.test(content);

/**
 * Why the parse of a prompt may not say what the CLI will do: a catch-all kind; a row between the
 * kind's match and the answers that no part of the layout explains (a tip read as the command is
 * how a destructive command was once approved); a witness that disagrees; a command that may be cut
 * where a long row wrapped.
 */
function doubtsAbout(kind: KindMatch, screens: Screens, c: Compiled, rows: ScreenRows, optionsTop: number | undefined): string[] {
  const doubts: string[] = [];
  if (kind.kind === 'other') doubts.push('the prompt is not one of the kinds this profile reads');
  if (kind.kind === 'shell' && kind.command === null) doubts.push('no command was read from the prompt');
  if ((kind.kind === 'file_edit' || kind.kind === 'file_write' || kind.kind === 'file_read') && kind.path === null) doubts.push('no file was read from the prompt');
  const { lines } = rows;
  const end = optionsTop ?? lines.length;
  // A side panel's words on a row the prompt leaves empty (OpenCode's folder and version at 200
  // columns) are no part of it. Only such rows: a row of the call is never cut.
  const panel = sidePanelColumn(lines);
  // What the rows above said: prose may start only once the call is closed, by a rule of the kind's
  // own (Claude Code's dashed rules), the question or a decoration, and goes on only from prose. A
  // blank row closes nothing: a command may hold one, with more of it below.
  let above: 'closed' | 'open' | 'prose' = isRule(rowContent(lines[kind.endRow] ?? '')) ? 'closed' : 'open';
  for (let row = kind.endRow + 1; row < end; row++) {
    const line = lines[row] ?? '';
    const content = rowContent(line);
    if (isFiller(content) && !isRule(content)) continue;
    if (isRule(content) || lowestMatchOf(screens.approval, { lines: [line] }) || c.decorations.some((d) => d.test(content))) {
      above = 'closed';
      continue;
    }
    if (panel !== undefined && isFiller(rowContent(leftOfPanel(line, panel)))) continue;
    const prose = isProse(content);
    if ((prose === 'starts' && above === 'closed') || (prose !== false && above === 'prose')) {
      above = 'prose';
      continue;
    }
    above = 'open';
    doubts.push(`a row of the prompt is not part of any layout this profile knows: "${content.slice(0, 80)}"`);
  }
  // The witness is read without a side panel, whose words would run on from it (OpenCode's "0%
  // used" under "$ <command>" at 200 columns): cutting it can only make a witness disagree.
  const said = witnessFor(c, panel === undefined ? lines : lines.map((l) => leftOfPanel(l, panel)), kind.row);
  if (said) {
    const read = said.group === 'command' ? kind.command : kind.path;
    const agrees = read !== null && (said.group === 'command' ? sameCall(said.text, read) : sameFile(said.text, read));
    if (!agrees) doubts.push(`the prompt reads "${(read ?? '').slice(0, 80)}" but the CLI also shows "${said.text.slice(0, 80)}"`);
  }
  if (kind.wrap === 'word' && kind.commandRows > 1) {
    // Word wrapping hides whether a break was a space or a line of its own: only a witness that
    // shows the command whole, its breaks at the screen's edge, says which.
    const whole = said?.group === 'command' ? unwrapChars(said.rows, lines) : undefined;
    if (whole !== kind.command) doubts.push('the command wraps in its box, and nothing on screen shows it whole: where it breaks may be a line break');
  } else if (kind.commandRows > 1 && mayWrap(lines, kind)) doubts.push('the command spans rows that reach the edge of the screen: it may be cut where it wrapped');
  return doubts;
}

/**
 * What prose between a call and its question never has, and a command, a path, a URL, a pattern, a
 * key hint, an option ("--force") or a menu's numbered row does: a row with one is never prose.
 */
const NOT_PROSE = /[/\\~$`|&;<>=*{}[\]#@%^"+_]|\p{Cc}|(?:^|\s)-|^\d+[.)]/u;
/** Words: letters (any script) with inner apostrophes or hyphens; digits only as a whole word. */
const PROSE_ROW = /^[\p{L}\d][\p{L}\p{M}\d'’\s,.:!?()–—-]*$/u;

/**
 * Whether a row of a prompt reads as prose: a sentence a CLI puts between the call and its
 * question ("This command requires approval", "A nested command in this command can't be checked
 * before it runs"), which says why it asks and never what is asked. `starts`: it can open a
 * sentence (a capital letter and three words at least); `continues`: only the wrapped rest of one.
 * Anything that could name a command, a file or an answer is not prose, so such a row still makes
 * the read unsure.
 */
export function isProse(content: string): 'starts' | 'continues' | false {
  const text = content.trim();
  if (NOT_PROSE.test(text) || !PROSE_ROW.test(text)) return false;
  const words = text.split(/\s+/).filter((w) => /\p{L}/u.test(w));
  if (words.length === 0) return false;
  return /^\p{Lu}/u.test(text) && words.length >= 3 ? 'starts' : 'continues';
}

/** The lowest witness above the prompt, with what it says. */
function witnessFor(c: Compiled, lines: readonly string[], promptRow: number): { group: 'command' | 'path'; text: string; rows: string[] } | undefined {
  let best: { row: number; group: 'command' | 'path'; text: string; rows: string[] } | undefined;
  for (const w of c.witnesses) {
    const { text, rowOf, starts } = region(lines.slice(0, promptRow), w.rows);
    w.regex.lastIndex = 0;
    for (let m = w.regex.exec(text); m; m = w.regex.exec(text)) {
      if (m[0].length === 0) w.regex.lastIndex += 1;
      const row = rowOf[lineIndexAt(starts, m.index)] ?? 0;
      const group = m.groups?.command !== undefined ? 'command' : m.groups?.path !== undefined ? 'path' : undefined;
      const raw = group ? m.groups?.[group] : undefined;
      const said = clean(raw);
      if (group && said !== null && (!best || row >= best.row)) best = { row, group, text: said, rows: (raw ?? '').split('\n') };
    }
  }
  return best;
}

/** The same call, whitespace aside; a witness cut short with … need only begin the same way. */
function sameCall(witness: string, read: string): boolean {
  const squeeze = (t: string): string => t.replace(/\s+/g, '');
  const w = squeeze(witness);
  const r = squeeze(read);
  if (w.endsWith('…')) return r.startsWith(w.slice(0, -1));
  return w === r;
}

/**
 * The same file: CLIs name it relative in one place and absolute or by its bare name in another
 * ("Write(/home/dev/a.txt)" above "../a.txt"), so the names must agree; where the file is, the
 * policy judges from the prompt's own path.
 */
function sameFile(witness: string, read: string): boolean {
  const name = (p: string): string => p.replace(/…$/, '').split(/[\\/]/).filter(Boolean).pop() ?? '';
  const w = name(witness);
  return witness.endsWith('…') ? name(read).startsWith(w) : w === name(read);
}

/**
 * A word-wrapped command's rows as the one line they show: a break where the next row's first word
 * could not have fit on the row above (within the row's box, or the screen) was a space the wrap
 * took; any other break is a line of the command's own and stays one. Rows are found on screen
 * between `from` and `to` to know where each ends.
 */
function unwrapWords(command: string, lines: readonly string[], from: number, to: number): string {
  const parts = command.split('\n');
  const width = screenWidth(lines);
  let out = parts[0] ?? '';
  let searchFrom = from;
  for (let i = 0; i < parts.length - 1; i++) {
    const part = parts[i] ?? '';
    let row = searchFrom;
    while (row <= to && !(lines[row] ?? '').includes(part)) row++;
    const text = lines[row] ?? '';
    const end = Array.from(text.slice(0, text.indexOf(part))).length + Array.from(part).length;
    // The box's right side, where the row has one past its text; else the screen's edge.
    const side = Array.from(text).findIndex((ch, at) => at >= end && (ch === '│' || ch === '┃'));
    const edge = side >= 0 ? side - 1 : width;
    const nextWord = Array.from((parts[i + 1] ?? '').split(' ')[0] ?? '').length;
    out += (end + 1 + nextWord > edge ? ' ' : '\n') + (parts[i + 1] ?? '');
    searchFrom = row + 1;
  }
  return out;
}

/**
 * A path's rows as the one path they show: a path is never two lines, so a row that reaches the
 * screen's edge goes on in the next row with nothing between them. A break short of the edge is
 * kept, and the path then matches no file a witness names.
 */
function unwrapPath(path: string, lines: readonly string[]): string {
  if (!path.includes('\n')) return path;
  return unwrapChars(path.split('\n'), lines);
}

/**
 * A witness's rows as the one line they show when the CLI wraps it character by character at the
 * screen's edge: a row that reaches the edge goes on in the next row with nothing between them,
 * and a row that ends short of it ends a line.
 */
function unwrapChars(rows: readonly string[], lines: readonly string[]): string {
  const width = screenWidth(lines);
  let out = '';
  rows.forEach((row, i) => {
    const text = i === 0 ? row.trimEnd() : row.trim();
    if (i > 0) {
      const above = rows[i - 1] ?? '';
      const full = lines.some((l) => l.trimEnd().endsWith(above.trimEnd()) && Array.from(l.trimEnd()).length >= width - 2);
      out += full ? '' : '\n';
    }
    out += text;
  });
  return out.trim();
}

/** True when a row of a multi-row command reaches within two columns of the screen's widest row. */
function mayWrap(lines: readonly string[], kind: KindMatch): boolean {
  const width = screenWidth(lines);
  const commandLines = (kind.command ?? '').split('\n');
  // An empty line of the command is in every row, and cannot be cut.
  return commandLines.slice(0, -1).some((l) => l.trim() !== '' && lines.some((row) => row.includes(l) && Array.from(row.trimEnd()).length >= width - 2));
}

/**
 * The option that gives `meaning`: the first one offered with it. allow_always falls back to
 * allow_once (approving this call is the closest the prompt allows); deny must be an explicit
 * option, never guessed.
 */
export function optionFor(request: ApprovalPrompt, meaning: AnswerMeaning): ApprovalOption | null {
  const find = (m: AnswerMeaning): ApprovalOption | null => request.options.find((o) => o.meaning === m && o.keys.length > 0) ?? null;
  return meaning === 'allow_always' ? (find('allow_always') ?? find('allow_once')) : find(meaning);
}
