/**
 * tmux's key names (send-keys, bind-key, the prefix option): `Enter`, `C-c`, `M-x`, `S-Left`,
 * `F5`, `^A`, single characters; what each one sends to a program (tmux 3.3's input-keys table,
 * honouring the program's cursor-key mode); and the canonical spelling list-keys prints.
 */

interface Named {
  canonical: string;
  /** Bytes sent, or for cursor keys the final letter of `ESC [ x` / `ESC O x`. */
  bytes?: string;
  cursor?: string;
  /** The number of `ESC [ n ~` keys (for modified forms). */
  tilde?: number;
  /** A mouse key: bound, never sent (send-keys types its name as text, as tmux does). */
  mouse?: true;
}

const NAMED: Readonly<Record<string, Named>> = {
  enter: { canonical: 'Enter', bytes: '\r' },
  escape: { canonical: 'Escape', bytes: '\x1b' },
  space: { canonical: 'Space', bytes: ' ' },
  tab: { canonical: 'Tab', bytes: '\t' },
  btab: { canonical: 'BTab', bytes: '\x1b[Z' },
  bspace: { canonical: 'BSpace', bytes: '\x7f' },
  up: { canonical: 'Up', cursor: 'A' },
  down: { canonical: 'Down', cursor: 'B' },
  right: { canonical: 'Right', cursor: 'C' },
  left: { canonical: 'Left', cursor: 'D' },
  home: { canonical: 'Home', bytes: '\x1b[1~', tilde: 1 },
  end: { canonical: 'End', bytes: '\x1b[4~', tilde: 4 },
  ic: { canonical: 'IC', bytes: '\x1b[2~', tilde: 2 },
  dc: { canonical: 'DC', bytes: '\x1b[3~', tilde: 3 },
  ppage: { canonical: 'PPage', bytes: '\x1b[5~', tilde: 5 },
  npage: { canonical: 'NPage', bytes: '\x1b[6~', tilde: 6 },
  f1: { canonical: 'F1', bytes: '\x1bOP' },
  f2: { canonical: 'F2', bytes: '\x1bOQ' },
  f3: { canonical: 'F3', bytes: '\x1bOR' },
  f4: { canonical: 'F4', bytes: '\x1bOS' },
  f5: { canonical: 'F5', bytes: '\x1b[15~', tilde: 15 },
  f6: { canonical: 'F6', bytes: '\x1b[17~', tilde: 17 },
  f7: { canonical: 'F7', bytes: '\x1b[18~', tilde: 18 },
  f8: { canonical: 'F8', bytes: '\x1b[19~', tilde: 19 },
  f9: { canonical: 'F9', bytes: '\x1b[20~', tilde: 20 },
  f10: { canonical: 'F10', bytes: '\x1b[21~', tilde: 21 },
  f11: { canonical: 'F11', bytes: '\x1b[23~', tilde: 23 },
  f12: { canonical: 'F12', bytes: '\x1b[24~', tilde: 24 },
  any: { canonical: 'Any' },
  none: { canonical: 'None' },
  ...mouseKeys(),
};

/**
 * tmux's mouse keys (`MouseDown1Pane`, `WheelUpStatus`, `DoubleClick3Border`, …): an event on a
 * part of the screen. They are bound (bind-key -T root), never sent as bytes: a pane gets the
 * mouse only through an attached client, which the front end has none of.
 */
function mouseKeys(): Record<string, Named> {
  const events = ['MouseMove', 'WheelUp', 'WheelDown'];
  for (const event of ['MouseDown', 'MouseUp', 'MouseDrag', 'MouseDragEnd', 'SecondClick', 'DoubleClick', 'TripleClick']) {
    for (let button = 1; button <= 11; button++) events.push(`${event}${button}`);
  }
  const keys: Record<string, Named> = {};
  for (const event of events) {
    for (const where of ['Pane', 'Status', 'StatusLeft', 'StatusRight', 'StatusDefault', 'Border']) {
      keys[`${event}${where}`.toLowerCase()] = { canonical: `${event}${where}`, mouse: true };
    }
  }
  return keys;
}

/** Other spellings tmux accepts for the same keys. */
const ALIASES: Readonly<Record<string, string>> = {
  insert: 'ic',
  delete: 'dc',
  pageup: 'ppage',
  pgup: 'ppage',
  pagedown: 'npage',
  pgdn: 'npage',
};

const KEYPAD: Readonly<Record<string, string>> = {
  'kp/': '/', 'kp*': '*', 'kp-': '-', 'kp+': '+', 'kp.': '.', kpenter: '\r',
  kp0: '0', kp1: '1', kp2: '2', kp3: '3', kp4: '4', kp5: '5', kp6: '6', kp7: '7', kp8: '8', kp9: '9',
};

/** A key read from its name. */
interface Key {
  ctrl: boolean;
  meta: boolean;
  shift: boolean;
  /** The named key (lower case), or undefined for a character. */
  named: string | undefined;
  char: string | undefined;
}

function parseKey(text: string): Key | undefined {
  let rest = text;
  let ctrl = false;
  let meta = false;
  let shift = false;
  if (rest.length === 2 && rest[0] === '^') {
    ctrl = true;
    rest = rest.slice(1);
  }
  for (;;) {
    if (rest.length > 2 && rest[1] === '-') {
      const m = (rest[0] as string).toUpperCase();
      if (m === 'C') ctrl = true;
      else if (m === 'M') meta = true;
      else if (m === 'S') shift = true;
      else break;
      rest = rest.slice(2);
      continue;
    }
    break;
  }
  if (rest === '') return undefined;
  const lower = rest.toLowerCase();
  const named = ALIASES[lower] ?? lower;
  if (Object.hasOwn(NAMED, named) || Object.hasOwn(KEYPAD, named)) return { ctrl, meta, shift, named, char: undefined };
  if (Array.from(rest).length === 1) return { ctrl, meta, shift, named: undefined, char: rest };
  if (/^0x[0-9a-f]+$/i.test(rest)) {
    const code = Number.parseInt(rest, 16);
    if (code > 0x10ffff) return undefined;
    return { ctrl, meta, shift, named: undefined, char: String.fromCodePoint(code) };
  }
  return undefined;
}

/** True when tmux knows `text` as a key. */
export function isKeyName(text: string): boolean {
  return parseKey(text) !== undefined;
}

/** The key as list-keys prints it (`C-a`, `M-Enter`, `F5`), or the text itself when it is not a key. */
export function canonicalKey(text: string): string {
  const key = parseKey(text);
  if (!key) return text;
  const prefix = `${key.ctrl ? 'C-' : ''}${key.meta ? 'M-' : ''}${key.shift ? 'S-' : ''}`;
  if (key.named !== undefined) {
    const named = NAMED[key.named];
    if (named) return prefix + named.canonical;
    return prefix + key.named.toUpperCase().replace(/^KP/, 'KP');
  }
  return prefix + (key.char ?? '');
}

function controlOf(char: string): string | undefined {
  const code = char.codePointAt(0) ?? 0;
  if (char === ' ' || char === '@' || char === '2') return '\x00';
  if (char === '?' || char === '8') return '\x7f';
  if (code >= 0x40 && code <= 0x7f) return String.fromCharCode(code & 0x1f);
  if (char >= '3' && char <= '7') return String.fromCharCode(code - 0x33 + 0x1b);
  return undefined;
}

/**
 * The bytes a key sends to a program, or undefined when `text` is not a key name (send-keys then
 * types it as text). `applicationCursorKeys` is the program's DECCKM mode.
 */
export function keyBytes(text: string, applicationCursorKeys: boolean): string | undefined {
  const key = parseKey(text);
  if (!key || key.named === 'any' || key.named === 'none' || (key.named !== undefined && NAMED[key.named]?.mouse)) return undefined;
  const modifier = 1 + (key.shift ? 1 : 0) + (key.meta ? 2 : 0) + (key.ctrl ? 4 : 0);
  if (key.named !== undefined) {
    const keypad = KEYPAD[key.named];
    if (keypad !== undefined) return (key.meta ? '\x1b' : '') + keypad;
    const named = NAMED[key.named] as Named;
    if (named.cursor !== undefined) {
      if (modifier > 1) return `\x1b[1;${modifier}${named.cursor}`;
      return `${applicationCursorKeys ? '\x1bO' : '\x1b['}${named.cursor}`;
    }
    if (modifier > 1 && named.tilde !== undefined) return `\x1b[${named.tilde};${modifier}~`;
    let bytes = named.bytes ?? '';
    if (key.ctrl && key.named === 'space') bytes = '\x00';
    if (key.shift && key.named === 'tab') bytes = '\x1b[Z';
    return (key.meta ? '\x1b' : '') + bytes;
  }
  let char = key.char ?? '';
  if (key.shift && char.length === 1) char = char.toUpperCase();
  if (key.ctrl) char = controlOf(char) ?? char;
  return (key.meta ? '\x1b' : '') + char;
}
