import type { ShellDialect, ShellWord, SimpleCommand } from './types.js';

/**
 * What a simple command runs once wrappers are seen through (`sudo`, `env`, `nohup`, `timeout`,
 * `xargs`, `cmd /c`, `bash -c '…'`, `powershell -Command …`), its options and operands, and the
 * files it writes.
 */

/** A command and its arguments, from its name on. */
export interface Invocation {
  words: ShellWord[];
  /** The program's name: base name, lower case, without .exe/.com/.bat/.cmd; '' when it is not literal. */
  name: string;
  /** The name as written. */
  shown: string;
}

/** An inline script a command runs (`bash -c '…'`), to be split and judged in turn. */
interface InlineScript {
  text: string;
  dialect: ShellDialect;
}

export interface Unwrapped {
  wrappers: Invocation[];
  /** The command that finally runs, or null when the wrappers run nothing (`sudo -i`, `command -v x`). */
  command: Invocation | null;
  script: InlineScript | null;
  /** Words that are code (a `-c` script), not paths. */
  scriptWords: Set<ShellWord>;
  /** Why what runs cannot be judged with confidence. */
  notes: string[];
  /** More arguments are added at run time (xargs). */
  unknownArgs: boolean;
  /** It runs in a directory the policy cannot tell (env -C, chroot, sudo -D). */
  cwdUnknown: boolean;
}

/** The program name of a command word: `/usr/bin/rm` → rm, `C:\Windows\cmd.exe` → cmd, `Remove-Item` → remove-item. */
export function commandName(text: string): string {
  const base = text.split(/[\\/]/).pop() ?? text;
  return base.toLowerCase().replace(/\.(exe|com|bat|cmd)$/, '');
}

const DASHES = /^[-\u2013\u2014\u2015]/;

/** True when `word` is an option rather than an operand in `dialect`. */
function isOption(word: ShellWord, dialect: ShellDialect): boolean {
  const t = word.text;
  if (t.length < 2 || word.code) return false;
  if (dialect === 'powershell') return DASHES.test(t) && !/^-\d/.test(t);
  if (dialect === 'cmd' && /^\/[^\\/]*$/.test(t)) return true;
  return t.startsWith('-');
}

export interface ParsedArgs {
  /** Normalised flags: `-r`, `-f` (each letter of a POSIX cluster), `--force`, `-recurse` (PowerShell, lower case), `/s` (cmd, lower case). */
  flags: Set<string>;
  options: ShellWord[];
  operands: ShellWord[];
  /** Values attached to options: `--file=x`, `-Path:x`, `/user:x`. */
  values: ShellWord[];
}

function sliceWord(word: ShellWord, from: number): ShellWord {
  const vars = word.vars.filter((v) => v.start >= from).map((v) => ({ ...v, start: v.start - from, end: v.end - from }));
  return { ...word, text: word.text.slice(from), vars, dynamic: vars.length > 0 || (word.dynamic && word.vars.length === 0) };
}

/** Splits arguments into options and operands the way most programs of `dialect` read them. */
export function parseArgs(words: readonly ShellWord[], dialect: ShellDialect): ParsedArgs {
  const out: ParsedArgs = { flags: new Set(), options: [], operands: [], values: [] };
  let ended = false;
  for (const w of words) {
    const t = w.text;
    if (ended || !isOption(w, dialect)) {
      out.operands.push(w);
      continue;
    }
    if (t === '--') {
      ended = true;
      continue;
    }
    out.options.push(w);
    if (dialect === 'powershell' || (dialect === 'cmd' && t.startsWith('/'))) {
      const colon = t.indexOf(':');
      const name = (colon < 0 ? t : t.slice(0, colon)).toLowerCase().replace(DASHES, dialect === 'cmd' ? '/' : '-');
      out.flags.add(name.startsWith('/') ? name : `-${name.replace(/^-/, '')}`);
      if (colon >= 0 && colon < t.length - 1) out.values.push(sliceWord(w, colon + 1));
    } else if (t.startsWith('--')) {
      const eq = t.indexOf('=');
      out.flags.add(eq < 0 ? t : t.slice(0, eq));
      if (eq >= 0) out.values.push(sliceWord(w, eq + 1));
    } else {
      for (const ch of t.slice(1)) out.flags.add(`-${ch}`);
    }
  }
  return out;
}

/** True when a PowerShell parameter given in `flags` abbreviates `full` (`-rec` for -Recurse). */
export function hasParam(flags: ReadonlySet<string>, full: string, min = 1): boolean {
  for (const f of flags) {
    if (f.startsWith('--') || f.startsWith('/')) continue;
    const name = f.slice(1).toLowerCase();
    if (name.length >= min && full.startsWith(name)) return true;
  }
  return false;
}

const POSIX_SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish', 'yash', 'posh']);
const POWERSHELLS = new Set(['powershell', 'pwsh']);
const MAX_WRAPPERS = 8;

/** Sees through wrappers to the command that runs, and finds inline scripts. */
export function unwrap(words: readonly ShellWord[], dialect: ShellDialect): Unwrapped {
  const u: Unwrapped = { wrappers: [], command: null, script: null, scriptWords: new Set(), notes: [], unknownArgs: false, cwdUnknown: false };
  let rest: ShellWord[] = [...words];
  for (let level = 0; level < MAX_WRAPPERS; level++) {
    const head = rest[0];
    if (!head) return u;
    const inv: Invocation = { words: rest, name: head.dynamic || head.code ? '' : commandName(head.text), shown: head.text };
    const inner = step(inv, dialect, u);
    if (inner === null) {
      u.command = inv;
      return u;
    }
    u.wrappers.push(inv);
    rest = inner;
  }
  u.notes.push('too many nested command wrappers');
  return u;
}

/** Skips POSIX-style options; `withValue` are short letters and long names that take a value. */
function skipOptions(args: ShellWord[], withValue: ReadonlySet<string>, stopAtDoubleDash = true): number {
  let k = 0;
  while (k < args.length) {
    const t = (args[k] as ShellWord).text;
    if (t === '--' && stopAtDoubleDash) return k + 1;
    if (!t.startsWith('-') || t === '-') return k;
    if (t.startsWith('--')) {
      k += !t.includes('=') && withValue.has(t) ? 2 : 1;
      continue;
    }
    let consumed = 1;
    for (let j = 1; j < t.length; j++) {
      if (withValue.has(`-${t[j] as string}`)) {
        if (j === t.length - 1) consumed = 2;
        break;
      }
    }
    k += consumed;
  }
  return k;
}

const set = (...xs: string[]): ReadonlySet<string> => new Set(xs);
const SUDO_VALUES = set('-u', '-g', '-h', '-p', '-C', '-D', '-r', '-t', '-T', '-U', '--user', '--group', '--host', '--prompt', '--close-from', '--chdir', '--role', '--type', '--command-timeout', '--other-user');
const SIMPLE_WRAPPERS: Record<string, ReadonlySet<string>> = {
  sudo: SUDO_VALUES,
  doas: set('-u', '-C'),
  pkexec: set('--user'),
  nohup: set(),
  setsid: set(),
  unbuffer: set(),
  builtin: set(),
  exec: set('-a'),
  time: set('-f', '-o', '--format', '--output'),
  nice: set('-n', '--adjustment'),
  ionice: set('-c', '-n', '--class', '--classdata'),
  stdbuf: set('-i', '-o', '-e', '--input', '--output', '--error'),
  caffeinate: set('-t', '-w'),
  strace: set('-o', '-e', '-p', '-s', '-u', '-E', '-a', '-I', '-O', '-S', '-P', '-X'),
  ltrace: set('-o', '-e', '-p', '-s', '-u', '-E', '-a', '-n'),
  busybox: set(),
};
const XARGS_VALUES = set('-a', '-d', '-E', '-I', '-L', '-n', '-P', '-s', '--arg-file', '--delimiter', '--eof', '--replace', '--max-lines', '--max-args', '--max-procs', '--max-chars', '--process-slot-var');
const TIMEOUT_VALUES = set('-s', '-k', '--signal', '--kill-after');
const CHROOT_VALUES = set('--userspec', '--groups');
const FLOCK_VALUES = set('-w', '-E', '--timeout', '--conflict-exit-code');
const WATCH_VALUES = set('-n', '-q', '--interval');
const SHELL_VALUES = set('-o', '-O', '+o', '+O', '--rcfile', '--init-file');
const SSH_VALUES = set('-p', '-i', '-l', '-o', '-F', '-J', '-L', '-R', '-D', '-b', '-c', '-E', '-e', '-I', '-m', '-O', '-Q', '-S', '-W', '-w', '-B');
/** Interpreters that take a program on the command line (`python -c`, `node -e`, `perl -e`). */
const INLINE_CODE = /^(python[\d.]*|pypy[\d.]*|node|nodejs|bun|perl|ruby|php|lua[\d.]*|rscript|osascript|tclsh|jshell)$/;
const INLINE_FLAGS = /^(-[A-Za-z]*[ceE]|-p|--eval|--print|--command|--exec)$/;

/** The words of the command a wrapper runs, or null when `inv` is not a wrapper (it is what runs). */
function step(inv: Invocation, dialect: ShellDialect, u: Unwrapped): ShellWord[] | null {
  const args = inv.words.slice(1);
  const name = inv.name;
  const simple = SIMPLE_WRAPPERS[name];
  if (simple) {
    if (name === 'sudo' && args.some((w) => /^(-D|--chdir)/.test(w.text))) u.cwdUnknown = true;
    return args.slice(skipOptions(args, simple));
  }
  switch (name) {
    case 'command': {
      const k = skipOptions(args, set());
      if (args.slice(0, k).some((w) => /^-[a-zA-Z]*[vV]/.test(w.text))) return [];
      return args.slice(k);
    }
    case 'env':
      return stepEnv(args, u);
    case 'timeout': {
      const k = skipOptions(args, TIMEOUT_VALUES);
      return args.slice(k + 1);
    }
    case 'chroot': {
      u.cwdUnknown = true;
      const k = skipOptions(args, CHROOT_VALUES);
      return args.slice(k + 1);
    }
    case 'flock': {
      const k = skipOptions(args, FLOCK_VALUES);
      const c = args.findIndex((w) => w.text === '-c' || w.text === '--command');
      if (c >= 0) {
        takeScript(args[c + 1], 'posix', 'flock -c', u);
        return [];
      }
      return args.slice(k + 1);
    }
    case 'watch': {
      const k = skipOptions(args, WATCH_VALUES);
      if (args.slice(0, k).some((w) => w.text === '-x' || w.text === '--exec')) return args.slice(k);
      takeJoined(args.slice(k), 'posix', 'watch', u);
      return [];
    }
    case 'xargs': {
      u.unknownArgs = true;
      return args.slice(skipOptions(args, XARGS_VALUES));
    }
    case 'su': {
      const c = args.findIndex((w) => w.text === '-c' || w.text === '--command' || w.text.startsWith('--command='));
      if (c >= 0) {
        const w = args[c] as ShellWord;
        takeScript(w.text.startsWith('--command=') ? sliceWord(w, 10) : args[c + 1], 'posix', 'su -c', u);
      }
      return [];
    }
    case 'runas': {
      takeScript(args.find((w) => !w.text.startsWith('/')), 'cmd', 'runas', u);
      return [];
    }
    case 'wsl': {
      const values = set('-d', '-u', '--distribution', '--user', '--cd');
      if (args.some((w) => w.text === '--cd')) u.cwdUnknown = true;
      let k = 0;
      while (k < args.length && (args[k] as ShellWord).text.startsWith('-')) {
        const t = (args[k] as ShellWord).text;
        if (t === '-e' || t === '--exec') return args.slice(k + 1);
        if (t === '--') {
          k++;
          break;
        }
        k += values.has(t) ? 2 : 1;
      }
      takeJoined(args.slice(k), 'posix', 'wsl', u);
      return [];
    }
    case 'call':
      return dialect === 'cmd' ? args : null;
    case 'start':
      if (dialect === 'cmd') return stepStart(args);
      if (dialect === 'powershell') u.notes.push('Start-Process starts a program whose arguments cannot be judged');
      return null;
    case 'start-process':
    case 'saps':
      u.notes.push('Start-Process starts a program whose arguments cannot be judged');
      return null;
    case 'eval':
      u.notes.push('eval runs a string as code and cannot be judged');
      takeJoined(args, 'posix', 'eval', u);
      return null;
    case 'iex':
    case 'invoke-expression': {
      u.notes.push('Invoke-Expression runs a string as code and cannot be judged');
      const parsed = parseArgs(args, 'powershell');
      takeScript(parsed.values[0] ?? parsed.operands[0], 'powershell', 'Invoke-Expression', u);
      return null;
    }
    case 'cmd': {
      const c = args.findIndex((w) => /^\/[ck]/i.test(w.text));
      if (c >= 0) {
        const first = args[c] as ShellWord;
        const attached = first.text.length > 2 ? [sliceWord(first, 2)] : [];
        takeJoined([...attached, ...args.slice(c + 1)], 'cmd', 'cmd /c', u);
      }
      return null;
    }
    case 'trap': {
      // `trap 'cmd' EXIT` runs cmd later: judge it as if it ran now.
      const operands = parseArgs(args, 'posix').operands;
      if (operands.length > 1) takeScript(operands[0], 'posix', 'trap', u);
      return null;
    }
    case 'alias':
    case 'set-alias':
    case 'new-alias':
    case 'sal':
    case 'nal':
    case 'doskey':
      if (args.length > 0) u.notes.push(`${inv.shown} changes what later commands run and cannot be judged`);
      return null;
    case 'ssh': {
      const k = skipOptions(args, SSH_VALUES);
      if (args.length > k + 1) u.notes.push('ssh runs a command on another machine that cannot be judged');
      return null;
    }
    default:
      if (INLINE_CODE.test(name) && args.some((w) => INLINE_FLAGS.test(w.text) || (name === 'php' && w.text === '-r'))) u.notes.push(`${inv.shown} runs inline code that cannot be judged`);
      if (name === 'deno' && args[0]?.text === 'eval') u.notes.push('deno eval runs inline code that cannot be judged');
      if (/^[gmn]?awk$/.test(name) && args.some((w) => !w.text.startsWith('-') && /system\s*\(|\||>|getline/.test(w.text))) {
        u.notes.push(`${inv.shown} program runs commands or writes files, which cannot be judged`);
      }
      if (POSIX_SHELLS.has(name)) {
        stepShell(args, u, name);
        return null;
      }
      if (POWERSHELLS.has(name)) {
        stepPowerShell(args, u, name);
        return null;
      }
      return null;
  }
}

function stepEnv(args: ShellWord[], u: Unwrapped): ShellWord[] {
  let k = 0;
  while (k < args.length) {
    const w = args[k] as ShellWord;
    const t = w.text;
    if (t === '--') return args.slice(k + 1);
    if (t === '-C' || t === '--chdir' || t.startsWith('--chdir=')) u.cwdUnknown = true;
    if (t === '-S' || t === '--split-string' || t.startsWith('--split-string=')) {
      takeScript(t.startsWith('--split-string=') ? sliceWord(w, 15) : args[k + 1], 'posix', 'env -S', u);
      return [];
    }
    if (t === '-u' || t === '-C' || t === '--unset' || t === '--chdir') k += 2;
    else if (t.startsWith('-') && t !== '-') k++;
    else if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(t)) k++;
    else return args.slice(k);
  }
  return [];
}

function stepStart(args: ShellWord[]): ShellWord[] {
  let k = 0;
  // The first quoted argument of `start` is the window title.
  if (args[0]?.quoted) k = 1;
  while (k < args.length && (args[k] as ShellWord).text.startsWith('/')) {
    const t = (args[k] as ShellWord).text.toLowerCase();
    k += t === '/d' || t === '/affinity' || t === '/node' ? 2 : 1;
  }
  return args.slice(k);
}

function stepShell(args: ShellWord[], u: Unwrapped, name: string): void {
  let k = 0;
  let inline = false;
  while (k < args.length) {
    const t = (args[k] as ShellWord).text;
    if (t === '--' || t === '-') {
      k++;
      break;
    }
    if (!/^[-+]/.test(t)) break;
    if (SHELL_VALUES.has(t)) {
      k += 2;
      continue;
    }
    if (/^-[A-Za-z]*c[A-Za-z]*$/.test(t) || t === '--command') inline = true;
    k++;
  }
  if (inline) takeScript(args[k], 'posix', `${name} -c`, u);
}

function stepPowerShell(args: ShellWord[], u: Unwrapped, name: string): void {
  const values = /^-(ex|exe|exec|execu|execut|executi|executio|execution|executionp|executionpo|executionpol|executionpoli|executionpolic|executionpolicy|ep|w|wi|win|wind|windo|window|windows|windowst|windowsty|windowstyl|windowstyle|inputformat|if|outputformat|of|o|version|v|configurationname|config|settingsfile|psconsolefile|custompipename|workingdirectory|wd)$/i;
  for (let k = 0; k < args.length; k++) {
    const w = args[k] as ShellWord;
    const t = w.text.replace(DASHES, '-').toLowerCase();
    if (/^[-/]c(o(m(m(a(n(d)?)?)?)?)?)?$/.test(t)) {
      const rest = args.slice(k + 1);
      if (rest.length === 1 && rest[0]?.text === '-') u.notes.push(`${name} -Command - reads commands from input that cannot be judged`);
      else takeJoined(rest, 'powershell', `${name} -Command`, u);
      return;
    }
    if (/^[-/]e(c|n(c(o(d(e(d(c(o(m(m(a(n(d)?)?)?)?)?)?)?)?)?)?)?)?)?$/.test(t)) {
      u.notes.push(`${name} -EncodedCommand cannot be judged`);
      for (const s of args.slice(k + 1)) u.scriptWords.add(s);
      return;
    }
    if (/^[-/](f|fi|fil|file)$/.test(t)) return;
    if (/^-(workingdirectory|wd)$/.test(t)) u.cwdUnknown = true;
    if (values.test(t)) {
      k++;
      continue;
    }
    if (t.startsWith('-')) continue;
    // Windows PowerShell reads a first bare argument as a command; a .ps1 file is a script file.
    if (/\.ps1$/i.test(w.text)) return;
    takeJoined(args.slice(k), 'powershell', name, u);
    return;
  }
}

function takeScript(word: ShellWord | undefined, dialect: ShellDialect, via: string, u: Unwrapped): void {
  if (!word) {
    u.notes.push(`${via} without a script cannot be judged`);
    return;
  }
  takeJoined([word], dialect, via, u);
}

/** Records `words` (joined by spaces, as the program joins them) as a script, if they are literal. */
function takeJoined(words: ShellWord[], dialect: ShellDialect, via: string, u: Unwrapped): void {
  if (words.length === 0) return;
  for (const w of words) u.scriptWords.add(w);
  if (words.some((w) => w.dynamic || w.code)) {
    u.notes.push(`${via} runs a script that is not a literal string and cannot be judged`);
    return;
  }
  u.script = { text: words.map((w) => w.text).join(' '), dialect };
}

/** Commands whose arguments are never paths (so `echo $HOME` is not a path outside the workdir). */
const NO_PATH_ARGS = new Set([
  'echo', 'printf', 'true', 'false', 'test', '[', '[[', 'pwd', 'date', 'whoami', 'hostname', 'which', 'type', 'sleep', 'seq', 'expr', 'basename', 'dirname',
  'export', 'set', 'unset', 'shift', 'let', 'local', 'declare', 'typeset', 'exit', 'return', 'write-host', 'write-output', 'write-error', 'get-date', 'get-command',
]);

const URL = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
const PATH_LIKE = /^([~.\\/$%]|[A-Za-z]:)/;
const LITERALS = new Set(['$true', '$false', '$null']);

/** The words of a command that may name files: operands and path-like option values, not code or URLs. */
export function pathOperands(part: SimpleCommand, u: Unwrapped): ShellWord[] {
  const out: ShellWord[] = [];
  const chain = [...u.wrappers, ...(u.command ? [u.command] : [])];
  const last = chain.at(-1);
  const commandWords = new Set(chain.map((inv) => inv.words[0]));
  const args = last && NO_PATH_ARGS.has(last.name) && u.command === last ? part.words.slice(0, part.words.length - last.words.length + 1) : part.words;
  const parsed = parseArgs(args, part.dialect);
  for (const w of [...parsed.operands, ...parsed.values.filter((v) => PATH_LIKE.test(v.text))]) {
    if (commandWords.has(w) || u.scriptWords.has(w) || w.code || w.text === '-' || w.text === '' || URL.test(w.text) || LITERALS.has(w.text.toLowerCase())) continue;
    out.push(w);
  }
  return out;
}

const PS_PATH_PARAMS: Record<string, string[]> = {
  'out-file': ['filepath', 'literalpath', 'path', 'pspath'],
  'set-content': ['path', 'literalpath', 'pspath'],
  'add-content': ['path', 'literalpath', 'pspath'],
  'tee-object': ['filepath', 'literalpath', 'path'],
  'new-item': ['path', 'literalpath'],
};
const PS_ALIASES: Record<string, string> = { sc: 'set-content', ac: 'add-content', tee: 'tee-object', ni: 'new-item' };
const PS_VALUE_PARAMS = ['encoding', 'width', 'inputobject', 'value', 'stream', 'delimiter', 'itemtype', 'name', 'variable', 'type', 'filter', 'include', 'exclude', 'credential'];

/** The file a PowerShell writing cmdlet writes: its path parameter or first positional argument. */
function psTarget(args: ShellWord[], pathParams: string[]): ShellWord | null {
  for (let k = 0; k < args.length; k++) {
    const w = args[k] as ShellWord;
    if (!isOption(w, 'powershell')) return w;
    const t = w.text.replace(DASHES, '').toLowerCase();
    const colon = t.indexOf(':');
    const name = colon < 0 ? t : t.slice(0, colon);
    const isPath = pathParams.some((p) => p.startsWith(name));
    if (colon >= 0) {
      if (isPath) return sliceWord(w, w.text.indexOf(':') + 1);
      continue;
    }
    if (isPath) return args[k + 1] ?? null;
    if (PS_VALUE_PARAMS.some((p) => p.startsWith(name))) k++;
  }
  return null;
}

const POSIX_LAST_OPERAND_WRITERS = new Set(['cp', 'mv', 'ln', 'install', 'rsync']);
const POSIX_ALL_OPERAND_WRITERS = new Set(['tee', 'touch', 'mkdir', 'truncate']);
const CMD_WRITERS = new Set(['copy', 'xcopy', 'move', 'robocopy']);

/** The files a command writes: output redirections, tee, PowerShell's Out-File family, dd of=, cp/mv targets. */
export function writeTargets(part: SimpleCommand, u: Unwrapped): ShellWord[] {
  const out: ShellWord[] = [];
  for (const r of part.redirects) if (r.kind === 'write' && r.target) out.push(r.target);
  const inv = u.command;
  if (!inv) return out;
  const args = inv.words.slice(1);
  const name = part.dialect === 'powershell' ? (PS_ALIASES[inv.name] ?? inv.name) : inv.name;
  const psParams = PS_PATH_PARAMS[name];
  if (psParams) {
    const t = psTarget(args, psParams);
    if (t) out.push(t);
    return out;
  }
  if (name === 'dd') {
    for (const w of args) if (w.text.startsWith('of=')) out.push(sliceWord(w, 3));
    return out;
  }
  const parsed = parseArgs(args, part.dialect);
  const operands = parsed.operands.filter((w) => !w.code);
  if (POSIX_ALL_OPERAND_WRITERS.has(name) && part.dialect !== 'cmd') out.push(...operands);
  else if ((POSIX_LAST_OPERAND_WRITERS.has(name) && part.dialect === 'posix') || (CMD_WRITERS.has(name) && part.dialect === 'cmd')) {
    const dirFlag = args.findIndex((w) => /^(-t|--target-directory)$/.test(w.text));
    const target = dirFlag >= 0 ? args[dirFlag + 1] : operands.length > 1 ? operands.at(-1) : undefined;
    if (target) out.push(target);
  }
  return out;
}
