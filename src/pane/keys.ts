import { SwitchboardError } from '../core/errors.js';

/** Terminal modes that change the bytes a key sends. */
export interface KeyModes {
  /** DECCKM: arrows and Home/End send `ESC O x` instead of `ESC [ x`. */
  applicationCursorKeys: boolean;
}

interface Modifiers {
  shift: boolean;
  alt: boolean;
  ctrl: boolean;
}

const ESC = '\x1b';
const CSI = `${ESC}[`;

/** Cursor-like keys: final byte of `CSI … x` / `SS3 x`. */
const CURSOR_KEYS: Record<string, string> = { up: 'A', down: 'B', right: 'C', left: 'D', home: 'H', end: 'F' };

/** Keys sent as `CSI n ~`. */
const TILDE_KEYS: Record<string, number> = {
  insert: 2,
  delete: 3,
  pageup: 5,
  pagedown: 6,
  f5: 15,
  f6: 17,
  f7: 18,
  f8: 19,
  f9: 20,
  f10: 21,
  f11: 23,
  f12: 24,
};

const SS3_FUNCTION_KEYS: Record<string, string> = { f1: 'P', f2: 'Q', f3: 'R', f4: 'S' };

const PLAIN_KEYS: Record<string, string> = {
  enter: '\r',
  tab: '\t',
  escape: ESC,
  space: ' ',
  backspace: '\x7f',
  linefeed: '\n',
  backtab: `${CSI}Z`,
};

/** Other spellings people use (tmux names among them), mapped to one canonical name. */
const ALIASES: Record<string, string> = {
  return: 'enter',
  cr: 'enter',
  ret: 'enter',
  esc: 'escape',
  bspace: 'backspace',
  bs: 'backspace',
  del: 'delete',
  dc: 'delete',
  ins: 'insert',
  ic: 'insert',
  pgup: 'pageup',
  ppage: 'pageup',
  'page-up': 'pageup',
  pgdn: 'pagedown',
  npage: 'pagedown',
  'page-down': 'pagedown',
  btab: 'backtab',
  lf: 'linefeed',
  spc: 'space',
};

/** Control characters for Ctrl + a punctuation key. */
const CTRL_PUNCTUATION: Record<string, string> = {
  '@': '\x00',
  ' ': '\x00',
  '[': '\x1b',
  '\\': '\x1c',
  ']': '\x1d',
  '^': '\x1e',
  _: '\x1f',
  '?': '\x7f',
};

/** The list of key names this module understands, for help texts and error messages. */
const KEY_NAMES = [
  'Enter', 'Tab', 'BTab', 'Escape', 'Space', 'Backspace', 'Delete', 'Insert', 'Home', 'End',
  'PageUp', 'PageDown', 'Up', 'Down', 'Left', 'Right', 'F1…F12', 'C-x', 'M-x', 'S-x',
] as const;

function invalidKey(key: string, why: string): SwitchboardError {
  return new SwitchboardError('INVALID_PARAMS', `invalid key '${key}': ${why}`, { key });
}

/** Splits `C-M-Up`, `Ctrl+Shift+Tab` or `^C` into modifiers and the base key. */
function parseModifiers(key: string): { mods: Modifiers; base: string } {
  const mods: Modifiers = { shift: false, alt: false, ctrl: false };
  let rest = key;
  if (rest.length === 2 && rest.startsWith('^')) return { mods: { ...mods, ctrl: true }, base: rest.slice(1) };
  for (;;) {
    const match = /^(c|ctrl|control|m|alt|meta|s|shift)[-+](.+)$/i.exec(rest);
    if (!match) break;
    const mod = (match[1] ?? '').toLowerCase();
    if (mod === 'c' || mod === 'ctrl' || mod === 'control') mods.ctrl = true;
    else if (mod === 'm' || mod === 'alt' || mod === 'meta') mods.alt = true;
    else mods.shift = true;
    rest = match[2] ?? '';
  }
  return { mods, base: rest };
}

function modifierParam(mods: Modifiers): number {
  return 1 + (mods.shift ? 1 : 0) + (mods.alt ? 2 : 0) + (mods.ctrl ? 4 : 0);
}

function encodeSingleCharacter(key: string, ch: string, mods: Modifiers): string {
  let out = ch;
  if (mods.shift) out = out.toUpperCase();
  if (mods.ctrl) {
    const lower = out.toLowerCase();
    if (lower >= 'a' && lower <= 'z') out = String.fromCharCode(lower.charCodeAt(0) & 0x1f);
    else if (out in CTRL_PUNCTUATION) out = CTRL_PUNCTUATION[out] ?? out;
    else throw invalidKey(key, `Ctrl cannot be combined with '${out}'`);
  }
  return mods.alt ? ESC + out : out;
}

function codePointCount(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** Encodes one named key (`Enter`, `C-c`, `M-Left`, `F5`, or a single character) as terminal input. */
export function encodeKey(key: string, modes: KeyModes): string {
  if (key.length === 0) throw invalidKey(key, 'empty key name');
  // A lone character (including one that looks like a modifier prefix, such as '-') is itself.
  if (codePointCount(key) === 1) return key;
  const { mods, base } = parseModifiers(key);
  if (codePointCount(base) === 1) return encodeSingleCharacter(key, base, mods);
  const lower = base.toLowerCase();
  const name = ALIASES[lower] ?? lower;
  const anyMod = mods.shift || mods.alt || mods.ctrl;
  const param = modifierParam(mods);

  const cursorFinal = CURSOR_KEYS[name];
  if (cursorFinal !== undefined) {
    if (anyMod) return `${CSI}1;${param}${cursorFinal}`;
    return (modes.applicationCursorKeys ? `${ESC}O` : CSI) + cursorFinal;
  }
  const tilde = TILDE_KEYS[name];
  if (tilde !== undefined) return anyMod ? `${CSI}${tilde};${param}~` : `${CSI}${tilde}~`;
  const ss3 = SS3_FUNCTION_KEYS[name];
  if (ss3 !== undefined) return anyMod ? `${CSI}1;${param}${ss3}` : `${ESC}O${ss3}`;

  if (name === 'tab' && mods.shift && !mods.alt && !mods.ctrl) return `${CSI}Z`;
  if (name === 'enter' && (mods.shift || mods.ctrl)) {
    // No legacy encoding exists; send the CSI-u form modern terminals use (kitty, modifyOtherKeys).
    return `${CSI}13;${param}u`;
  }
  const plain = PLAIN_KEYS[name];
  if (plain !== undefined) {
    if (mods.ctrl || mods.shift) {
      if (name === 'space' && mods.ctrl && !mods.shift) return (mods.alt ? ESC : '') + '\x00';
      throw invalidKey(key, `modifiers other than Alt are not supported with ${base}`);
    }
    return mods.alt ? ESC + plain : plain;
  }
  throw invalidKey(key, `unknown key name (try ${KEY_NAMES.join(', ')})`);
}

/** Encodes a sequence of keys into one string to write. */
export function encodeKeys(keys: readonly string[], modes: KeyModes): string {
  return keys.map((key) => encodeKey(key, modes)).join('');
}
