import { commandName, hasParam, parseArgs, unwrap, writeTargets, type Invocation, type Unwrapped } from './commands.js';
import { classifyPath, combineChains, pathEnv, type CwdChains, type PathEnv } from './paths.js';
import { splitShellCommand } from './split.js';
import type { PolicyContext, ShellWord, SimpleCommand } from './types.js';

/**
 * Destructive commands that are never auto-approved, whatever the rules say: each is at least
 * asked, and denied outright when it aims at the filesystem root, the home directory, a parent of
 * the workdir or a system folder. The list follows seed 003's FR-006 (rm, del, rmdir,
 * Remove-Item -Recurse, format, diskpart, reg delete, shutdown, Stop-Computer, git reset --hard,
 * git clean -fdx) and what peers block (mkfs, dd of=/dev, fork bombs, sudo, curl | sh); with each
 * its siblings: `git checkout .` and `git restore .` beside `git reset --hard`, `killall -u` and
 * `pkill -u` beside `kill -9 -1`, and commands that run work later, outside the run (`crontab`,
 * `at`, `systemd-run`, `schtasks`, a detached tmux or screen).
 */

export interface BlockHit {
  decision: 'ask' | 'deny';
  reason: string;
}

const deny = (reason: string): BlockHit => ({ decision: 'deny', reason: `blocked: ${reason}` });
const ask = (reason: string): BlockHit => ({ decision: 'ask', reason: `asked (never auto-approved): ${reason}` });

const MAX_SCRIPT_DEPTH = 4;

const DELETERS = new Set(['rm', 'rmdir', 'unlink', 'shred', 'srm', 'wipe', 'del', 'erase', 'rd', 'remove-item', 'ri']);
const DISK_TOOLS = new Set(['format', 'format-volume', 'clear-disk', 'initialize-disk', 'diskpart', 'mkfs', 'mke2fs', 'mkswap', 'newfs', 'fdisk', 'sfdisk', 'cfdisk', 'gdisk', 'sgdisk', 'parted', 'wipefs']);
const POWER = new Set(['shutdown', 'reboot', 'halt', 'poweroff', 'stop-computer', 'restart-computer', 'logoff']);
const ELEVATORS = new Set(['sudo', 'doas', 'su', 'pkexec', 'runas']);
const PERMISSIONS = new Set(['chmod', 'chown', 'chgrp']);
const INTERPRETERS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish', 'python', 'python3', 'perl', 'ruby', 'node', 'php', 'pwsh', 'powershell', 'cmd', 'iex', 'invoke-expression']);
/** Block devices and raw memory: writing there destroys disks or the running system. */
const DEVICE = /^(\/dev\/(sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|md|dm-|loop|mapper\/|mem$|kmem$|port$|sr\d)|\\\\\.\\)/i;
const DOWNLOADERS = new Set(['curl', 'wget', 'fetch', 'aria2c', 'http', 'iwr', 'irm', 'invoke-webrequest', 'invoke-restmethod', 'wget2']);

/** Why the blocklist stops this simple command from being auto-approved, or null. */
export function blockedReason(part: SimpleCommand, ctx: PolicyContext): string | null {
  return checkBlocklist(part, ctx)?.reason ?? null;
}

/** The blocklist's verdict for one simple command (and any script it runs inline), or null. */
export function checkBlocklist(part: SimpleCommand, ctx: PolicyContext): BlockHit | null {
  return check(part, pathEnv(ctx), 0);
}

function check(part: SimpleCommand, env: PathEnv, depth: number): BlockHit | null {
  const u = unwrap(part.words, part.dialect);
  const chains: CwdChains = u.cwdUnknown ? [[null]] : part.cwd;
  const hits: BlockHit[] = [];
  const prefix: string[] = [];
  for (const w of u.wrappers) {
    if (ELEVATORS.has(w.name)) hits.push(ask(`${w.shown} runs a command as another user`));
    prefix.push(w.shown);
  }
  if (u.command) {
    if (ELEVATORS.has(u.command.name)) hits.push(ask(`${u.command.shown} runs commands as another user`));
    const hit = checkInvocation(u.command, part, u, chains, env, prefix);
    if (hit) hits.push(hit);
  }
  hits.push(...checkPart(part, u, chains, env));
  if (u.script && depth < MAX_SCRIPT_DEPTH) {
    const inner = splitShellCommand(u.script.text, u.script.dialect);
    if ('parts' in inner) {
      for (const p of inner.parts) {
        const hit = check({ ...p, cwd: combineChains(chains, p.cwd) }, env, depth + 1);
        if (hit) hits.push(hit);
      }
    }
  }
  return hits.find((h) => h.decision === 'deny') ?? hits[0] ?? null;
}

/** PowerShell parameters that only name what follows; they say nothing about how destructive a call is. */
const NAMING_PARAMS = /^[-\u2013\u2014\u2015](path|literalpath|lp|pspath|filter|include|exclude)(:|$)/i;

/** The command as a reason names it: wrappers, name and flags, e.g. `sudo rm -rf`. */
function display(prefix: string[], inv: Invocation, options: ShellWord[]): string {
  const flags = options.filter((w) => !NAMING_PARAMS.test(w.text)).slice(0, 4);
  return [...prefix, inv.shown, ...flags.map((w) => w.text)].join(' ');
}

function checkInvocation(inv: Invocation, part: SimpleCommand, u: Unwrapped, chains: CwdChains, env: PathEnv, prefix: string[]): BlockHit | null {
  const { name } = inv;
  const args = inv.words.slice(1);
  const parsed = parseArgs(args, part.dialect);
  const shown = display(prefix, inv, parsed.options);
  const targets = part.dialect === 'powershell' ? [...parsed.operands, ...parsed.values] : parsed.operands;

  // A deleter with no operands fed by a pipe (`Get-ChildItem | Remove-Item`) deletes what the pipe names.
  if (DELETERS.has(name)) return deletion(shown, targets, parsed.flags, u.unknownArgs || (part.before === '|' && targets.length === 0), chains, env);
  if (DISK_TOOLS.has(name) || name.startsWith('mkfs.') || name.startsWith('newfs_') || (name === 'diskutil' && /^(erase|zero|random|secureerase|partitiondisk|reformat)/i.test(parsed.operands[0]?.text ?? ''))) {
    for (const t of targets) {
      const danger = classifyPath(t, chains, env).danger;
      if (danger) return deny(`${shown} ${t.text} erases ${danger}`);
    }
    return ask(`${shown} erases or repartitions disks`);
  }
  if (name === 'dd') {
    for (const w of args) {
      if (!w.text.startsWith('of=')) continue;
      const target = { ...w, text: w.text.slice(3), vars: w.vars.filter((v) => v.start >= 3).map((v) => ({ ...v, start: v.start - 3, end: v.end - 3 })) };
      const c = classifyPath(target, chains, env);
      if (c.status === 'sink') continue;
      if (DEVICE.test(target.text) || c.resolved.some((r) => DEVICE.test(r))) return deny(`dd of=${target.text} writes straight to a device`);
      if (c.danger) return deny(`dd of=${target.text} overwrites ${c.danger}`);
    }
    return null;
  }
  if (name === 'reg' && parsed.operands[0]?.text.toLowerCase() === 'delete') return ask(`${[...prefix, inv.shown].join(' ')} delete removes registry keys`);
  if (name === 'remove-itemproperty' || (name === 'rp' && part.dialect === 'powershell')) return ask(`${shown} removes registry values`);
  if (POWER.has(name) || (name === 'systemctl' && /^(poweroff|reboot|halt|kexec|suspend|hibernate|hybrid-sleep|rescue|emergency)$/.test(parsed.operands[0]?.text ?? '')) || ((name === 'init' || name === 'telinit') && /^[06]$/.test(parsed.operands[0]?.text ?? ''))) {
    return ask(`${shown} shuts down or restarts the machine`);
  }
  if (name === 'git') return gitHit(inv);
  if (PERMISSIONS.has(name) && (parsed.flags.has('-R') || parsed.flags.has('--recursive'))) return recursiveChange(shown, parsed.operands, chains, env, u.unknownArgs);
  if ((name === 'icacls' && parsed.flags.has('/t')) || (name === 'takeown' && parsed.flags.has('/r'))) return recursiveChange(shown, parsed.operands, chains, env, u.unknownArgs);
  if (name === 'find' && part.dialect === 'posix') return findHit(inv, part, chains, env, prefix);
  if (name === 'kill' && args.length >= 2 && args.at(-1)?.text === '-1') return ask(`${[...prefix, inv.shown].join(' ')} … -1 signals every process you own`);
  if (name === 'killall5' || ((name === 'killall' || name === 'pkill') && args.some((w) => /^(-u|-U|--user|--uid|--euid)(=|$)/.test(w.text) || /^-[A-Za-z]*[uU]$/.test(w.text)))) {
    return ask(`${shown} signals every process of a user, this run's and the daemon's included`);
  }
  return deferredHit(inv, parsed.operands, parsed.flags, part.dialect, shown);
}

/** Commands that schedule work to run later, outside the run, where nothing judges it when it runs. */
function deferredHit(inv: Invocation, operands: ShellWord[], flags: ReadonlySet<string>, dialect: SimpleCommand['dialect'], shown: string): BlockHit | null {
  const later = (what: string): BlockHit => ask(`${shown} ${what}, later and outside the run, where nothing judges it`);
  const first = operands[0]?.text.toLowerCase() ?? '';
  switch (inv.name) {
    case 'crontab':
      // Only listing is harmless: a file, `-`, -e and -r all change what cron runs.
      return flags.has('-l') && !flags.has('-r') && !flags.has('-e') && operands.length === 0 ? null : later('changes what cron runs');
    case 'at':
      return flags.has('-l') || flags.has('-r') || flags.has('-d') ? null : later('schedules commands to run');
    case 'batch':
      return later('schedules commands to run');
    case 'systemd-run':
      return later('starts a command as a service');
    case 'launchctl':
      return /^(load|bootstrap|submit|enable|kickstart|start)$/.test(first) ? later('starts a launch agent') : null;
    case 'schtasks':
      return flags.has('/create') || flags.has('/change') || flags.has('/run') ? later('schedules a task') : null;
    case 'register-scheduledtask':
    case 'set-scheduledtask':
    case 'start-scheduledtask':
      return dialect === 'powershell' ? later('schedules a task') : null;
    case 'tmux':
      return /^(new-session|new|new-window|neww|split-window|splitw|respawn-pane|respawnp|respawn-window|respawnw|run-shell|run|send-keys|send|if-shell|if|set-hook|pipe-pane|pipep|display-popup|popup)$/.test(first) ? later('runs a command in a terminal session') : null;
    case 'screen':
      return [...flags].some((f) => f === '-d' || f === '-m' || f === '-X') ? later('runs a command in a detached terminal session') : null;
    default:
      return null;
  }
}

function deletion(shown: string, targets: ShellWord[], flags: ReadonlySet<string>, unknownArgs: boolean, chains: CwdChains, env: PathEnv): BlockHit {
  let outside: ShellWord | null = null;
  let unknown: ShellWord | null = null;
  for (const t of targets) {
    const c = classifyPath(t, chains, env);
    if (c.danger) return deny(`${shown} targets ${c.danger}`);
    if (c.status === 'outside') outside ??= t;
    if (c.status === 'unknown') unknown ??= t;
  }
  if (outside) return ask(`${shown} deletes ${outside.text}, outside the workdir`);
  if (unknown) return ask(`${shown} deletes ${unknown.text}, which cannot be resolved before it runs`);
  if (unknownArgs) return ask(`${shown} deletes files chosen at run time`);
  const recursive = flags.has('-r') || flags.has('-R') || flags.has('--recursive') || flags.has('/s') || hasParam(flags, 'recurse');
  const force = flags.has('-f') || flags.has('--force') || flags.has('/q') || flags.has('/f') || hasParam(flags, 'force');
  if (recursive || force) return ask(`${shown} deletes ${recursive ? 'recursively' : 'by force'}`);
  return ask(`${shown} deletes files`);
}

function recursiveChange(shown: string, operands: ShellWord[], chains: CwdChains, env: PathEnv, unknownArgs: boolean): BlockHit | null {
  const classes = operands.map((t) => ({ t, c: classifyPath(t, chains, env) }));
  const dangerous = classes.find(({ c }) => c.danger);
  if (dangerous) return deny(`${shown} targets ${dangerous.c.danger as string}`);
  const outside = classes.find(({ c }) => c.status === 'outside' || c.status === 'unknown');
  if (outside) return ask(`${shown} changes ${outside.t.text} recursively, outside the workdir`);
  return unknownArgs ? ask(`${shown} changes files chosen at run time`) : null;
}

const GIT_VALUE_OPTIONS = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--config-env', '--super-prefix']);

function gitHit(inv: Invocation): BlockHit | null {
  const args = inv.words.slice(1);
  let k = 0;
  while (k < args.length && (args[k] as ShellWord).text.startsWith('-')) k += GIT_VALUE_OPTIONS.has((args[k] as ShellWord).text) ? 2 : 1;
  const sub = args[k]?.text;
  const rest = args.slice(k + 1);
  const parsed = parseArgs(rest, 'posix');
  const f = parsed.flags;
  const shown = `${inv.shown} ${sub ?? ''} ${parsed.options.map((w) => w.text).join(' ')}`.trim();
  const risky = runsConfiguredProgram(args.slice(0, k)) ?? (sub === 'config' ? runsConfiguredProgram(rest, true) : null);
  if (risky) return ask(`${shown} sets ${risky}, which makes git run a program of the command's choosing`);
  if (sub === 'reset' && f.has('--hard')) return ask(`${shown} discards uncommitted changes`);
  const discards = gitDiscards(sub, parsed.operands, f, rest.some((w) => w.text === '--'));
  if (discards) return ask(`${shown} ${discards}`);
  if (sub === 'clean' && (f.has('-f') || f.has('--force')) && !f.has('-n') && !f.has('--dry-run')) return ask(`${shown} deletes untracked files`);
  if (sub === 'push') {
    const forced = [...f].some((x) => x === '-f' || x === '--force' || x.startsWith('--force-with-lease') || x === '--force-if-includes' || x === '--mirror');
    if (forced || parsed.operands.some((w) => w.text.startsWith('+'))) return ask(`${shown} can overwrite the remote's history`);
    if (f.has('-d') || f.has('--delete') || parsed.operands.some((w) => w.text.startsWith(':'))) return ask(`${shown} deletes remote branches`);
  }
  return null;
}

/** Settings that name a program git runs: hooks, fsmonitor, pagers, editors, filters, aliases starting with `!`. */
const PROGRAM_SETTINGS = /^(core\.(fsmonitor|hookspath|pager|sshcommand|editor|askpass|gitproxy)|sequence\.editor|diff\.external|(diff|merge|filter)\..+\.(textconv|command|driver|clean|smudge|process)|alias\..+|credential\.helper|(gpg|gpg\..+)\.program|uploadpack\.packobjectshook|pager\..+|protocol\..+\.allow)$/i;

/** The setting a `-c key=value` (or, for `git config`, `key value`) sets that makes git run a program, or null. */
function runsConfiguredProgram(words: ShellWord[], configCommand = false): string | null {
  for (let k = 0; k < words.length; k++) {
    const t = (words[k] as ShellWord).text;
    if (!configCommand && (t === '-c' || t === '--config-env')) {
      const key = (words[k + 1]?.text ?? '').split('=')[0] ?? '';
      if (PROGRAM_SETTINGS.test(key)) return key;
    }
    if (configCommand && !t.startsWith('-')) {
      const key = t === 'set' ? (words[k + 1]?.text ?? '') : t;
      // `git config KEY` alone reads it; with a value after it, it sets.
      return PROGRAM_SETTINGS.test(key) && words.length > k + 1 + (t === 'set' ? 1 : 0) ? key : null;
    }
  }
  return null;
}

/** Why a checkout, restore, switch or stash throws work away (the siblings of `reset --hard`), or null. */
function gitDiscards(sub: string | undefined, operands: ShellWord[], f: ReadonlySet<string>, pathspec: boolean): string | null {
  const pathLike = (w: ShellWord): boolean => w.dynamic || w.glob || /^(\.|\.\.|:.*)$|^\.{1,2}\/|\.[A-Za-z][A-Za-z0-9]{0,7}$/.test(w.text);
  switch (sub) {
    case 'checkout':
      if (f.has('-f') || f.has('--force')) return 'discards uncommitted changes as it switches';
      if (f.has('-b') || f.has('-B') || f.has('--orphan')) return null;
      // `git checkout main` switches branch and keeps changes; a path (after `--`, `.`, a file) is overwritten from the index.
      if ((pathspec && operands.length > 0) || operands.length > 1 || operands.some(pathLike) || f.has('--ours') || f.has('--theirs') || f.has('-p') || f.has('--patch')) return 'discards uncommitted changes to the paths it names';
      return null;
    case 'restore': {
      const staged = f.has('--staged') || f.has('-S');
      const worktree = f.has('--worktree') || f.has('-W');
      return !staged || worktree ? 'discards uncommitted changes' : null;
    }
    case 'switch':
      return f.has('--discard-changes') || f.has('-f') || f.has('--force') ? 'discards uncommitted changes as it switches' : null;
    case 'stash':
      return /^(drop|clear)$/.test(operands[0]?.text ?? '') ? 'discards stashed changes' : null;
    default:
      return null;
  }
}

const FIND_ACTIONS = new Set(['-exec', '-execdir', '-ok', '-okdir']);

function findHit(inv: Invocation, part: SimpleCommand, chains: CwdChains, env: PathEnv, prefix: string[]): BlockHit | null {
  const args = inv.words.slice(1);
  let k = 0;
  while (k < args.length && /^-([HLP]|O\d*|D)$/.test((args[k] as ShellWord).text)) k += (args[k] as ShellWord).text === '-D' ? 2 : 1;
  const starts: ShellWord[] = [];
  while (k < args.length && !/^([-(!),]|\\\()/.test((args[k] as ShellWord).text)) starts.push(args[k++] as ShellWord);
  let deletes = false;
  let execHit: BlockHit | null = null;
  for (; k < args.length; k++) {
    const t = (args[k] as ShellWord).text;
    if (t === '-delete') deletes = true;
    if (!FIND_ACTIONS.has(t)) continue;
    const end = args.findIndex((w, j) => j > k && (w.text === ';' || w.text === '+'));
    const words = args.slice(k + 1, end < 0 ? args.length : end);
    const inner = unwrap(words, 'posix');
    if (inner.command && DELETERS.has(inner.command.name)) deletes = true;
    else if (inner.command) {
      inner.unknownArgs = true;
      execHit ??= checkInvocation(inner.command, { ...part, words }, inner, chains, env, [...prefix, inv.shown, '…', t]);
    }
    if (inner.notes.length > 0 || inner.script) execHit ??= ask(`${inv.shown} ${t} runs a script for each file`);
    k = end < 0 ? args.length : end;
  }
  if (!deletes) return execHit;
  const shown = [...prefix, inv.shown].join(' ');
  for (const s of starts.length > 0 ? starts : []) {
    const c = classifyPath(s, chains, env);
    if (c.danger) return deny(`${shown} ${s.text} … deletes files in ${c.danger}`);
    if (c.status !== 'inside') return ask(`${shown} deletes files under ${s.text}, outside the workdir`);
  }
  return ask(`${shown} … deletes the files it finds`);
}

/** Interpreters reading their program from a pipe: `curl … | sh`. */
function readsCodeFromInput(inv: Invocation, dialect: SimpleCommand['dialect']): boolean {
  if (!INTERPRETERS.has(inv.name)) return false;
  const parsed = parseArgs(inv.words.slice(1), inv.name === 'cmd' ? 'cmd' : dialect === 'powershell' ? 'powershell' : 'posix');
  if (inv.name === 'cmd') return ![...parsed.flags].some((f) => f === '/c' || f === '/k');
  if (parsed.flags.has('-c') || parsed.flags.has('-e') || parsed.flags.has('--command') || hasParam(parsed.flags, 'command') || hasParam(parsed.flags, 'encodedcommand', 2)) {
    return parsed.operands.some((w) => w.text === '-');
  }
  return parsed.operands.length === 0 || parsed.operands[0]?.text === '-' || parsed.flags.has('-s');
}

function checkPart(part: SimpleCommand, u: Unwrapped, chains: CwdChains, env: PathEnv): BlockHit[] {
  const hits: BlockHit[] = [];
  const head = part.words[0]?.text;
  const piped = part.before === '|' || part.after === '|' || part.after === '&';
  if (part.inFunction !== null && head === part.inFunction && piped) {
    hits.push(deny(`fork bomb: the function '${part.inFunction}' keeps starting copies of itself`));
  }
  if (part.dialect === 'cmd' && head === '%0' && (part.before === '|' || part.after === '|')) hits.push(deny('fork bomb: %0|%0 starts copies of the batch file'));
  if (part.before === '|' && u.command && readsCodeFromInput(u.command, part.dialect)) {
    const source = part.upstream.find((argv) => argv.some((a, i) => i < 3 && DOWNLOADERS.has(commandName(a))));
    hits.push(
      source
        ? ask(`${source.join(' ')} | ${u.command.shown} runs downloaded code`)
        : ask(`piping into ${u.command.shown} runs code that cannot be judged`),
    );
  }
  for (const t of writeTargets(part, u)) {
    const c = classifyPath(t, chains, env);
    if (c.status === 'sink') continue;
    if (DEVICE.test(t.text) || c.resolved.some((r) => DEVICE.test(r))) hits.push(deny(`writing to ${t.text} writes straight to a device`));
  }
  return hits;
}
