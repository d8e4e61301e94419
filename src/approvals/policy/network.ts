import { parseArgs, type Unwrapped } from './commands.js';
import type { ShellWord, SimpleCommand } from './types.js';

/**
 * Shell commands that reach the network. Each is judged as a `network` call too, against the same
 * rules as an agent's own fetch tool (the built-in policy asks every one: "network access is always
 * asked"), so `curl`, `nc`, `ssh`, `git push` or `npm install` in a shell command are no way around
 * that rule. A rule's `command` pattern sees the URL when the command names one, else the command.
 */

export interface NetworkUse {
  /** What reaches out, for reasons: `curl reaches https://x`, `git push fetches from or sends to another machine`. */
  what: string;
  /** The URLs or hosts it names, for rules' `command` patterns; empty when it names none. */
  targets: string[];
}

/** Programs whose whole job is talking to other machines. */
const CLIENTS = new Set([
  'curl', 'wget', 'wget2', 'aria2c', 'http', 'https', 'httpie', 'xh', 'nc', 'ncat', 'netcat', 'socat', 'telnet', 'ssh', 'scp', 'sftp', 'ftp', 'tftp', 'lftp',
  'mosh', 'dig', 'nslookup', 'whois', 'ping', 'ping6', 'traceroute', 'tracepath', 'mtr', 'nmap', 'invoke-webrequest', 'iwr', 'invoke-restmethod', 'irm',
  'start-bitstransfer', 'test-netconnection', 'bitsadmin',
]);
/** Package runners that download a package they do not find, then run it. */
const PACKAGE_RUNNERS = new Set(['npx', 'bunx', 'pnpx', 'uvx']);
/** Subcommands that fetch or send: git's, and package managers' installs (they also run install scripts). */
const SUBCOMMANDS: Record<string, ReadonlySet<string>> = {
  git: new Set(['clone', 'fetch', 'pull', 'push', 'ls-remote', 'submodule', 'send-email', 'request-pull']),
  npm: new Set(['install', 'i', 'add', 'ci', 'install-test', 'it', 'update', 'up', 'upgrade', 'exec', 'x', 'create', 'init', 'publish', 'dlx']),
  pnpm: new Set(['install', 'i', 'add', 'update', 'up', 'dlx', 'create', 'publish']),
  yarn: new Set(['install', 'add', 'upgrade', 'up', 'dlx', 'create', 'publish']),
  bun: new Set(['install', 'i', 'add', 'update', 'x', 'create', 'publish']),
  pip: new Set(['install', 'download']),
  pipx: new Set(['install', 'run']),
  uv: new Set(['add', 'sync', 'pip', 'tool', 'run']),
  gem: new Set(['install', 'update']),
  cargo: new Set(['install', 'add', 'publish']),
  go: new Set(['get', 'install']),
  composer: new Set(['install', 'require', 'update']),
  brew: new Set(['install', 'upgrade', 'tap']),
  'apt-get': new Set(['install', 'update', 'upgrade', 'download']),
  apt: new Set(['install', 'update', 'upgrade']),
};
const URL = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
/** An rsync or scp operand on another machine: `host:path`, `user@host:path` (not `./a:b` or `C:\x`). */
const REMOTE_PATH = /^(?![.~/\\])([^\s/:@]+@)?[^\s/:@]{2,}:/;

/** How `part` reaches the network, or null when it does not. */
export function networkUse(part: SimpleCommand, u: Unwrapped): NetworkUse | null {
  const inv = u.command;
  if (!inv) return null;
  const name = inv.name;
  const args = inv.words.slice(1);
  const parsed = parseArgs(args, part.dialect);
  const operands = parsed.operands.filter((w) => !w.code);
  const urls = [...operands, ...parsed.values].filter((w) => URL.test(w.text)).map((w) => w.text);

  const reaches = (targets: string[]): NetworkUse => ({ what: targets.length > 0 ? `${inv.shown} reaches ${targets.join(', ')}` : `${inv.shown} reaches the network`, targets });
  if (name === 'rsync') {
    const remote = operands.filter((w) => REMOTE_PATH.test(w.text) || URL.test(w.text));
    return remote.length > 0 ? reaches(remote.map((w) => w.text)) : null;
  }
  if (name === 'host' && part.dialect === 'posix') return reaches(operands.slice(0, 1).map((w) => w.text));
  if (name === 'certutil' && args.some((w) => /^[-/]urlcache$/i.test(w.text))) return reaches(urls);
  if (CLIENTS.has(name)) return reaches(urls.length > 0 ? urls : hostOf(name, operands));
  if (PACKAGE_RUNNERS.has(name)) {
    // `npx --no` and `--offline` run only what is installed.
    if (args.some((w) => /^(--no|--no-install|--offline)$/.test(w.text))) return null;
    return { what: `${inv.shown} downloads a package it does not find installed, then runs it`, targets: urls };
  }

  const subs = SUBCOMMANDS[name === 'pip3' ? 'pip' : name];
  const sub = subs ? firstOperand(args) : undefined;
  const fetches = (what: string): NetworkUse => ({ what: `${what} fetches from or sends to another machine`, targets: urls });
  if (subs && sub !== undefined && subs.has(sub.text)) return fetches(`${inv.shown} ${sub.text}`);
  // `yarn` alone installs; `python -m pip install` is pip.
  if (name === 'yarn' && operands.length === 0) return fetches(inv.shown);
  if (/^(python|pypy)/.test(name)) {
    const m = args.findIndex((w) => w.text === '-m');
    if (m >= 0 && /^pip\d*$/.test(args[m + 1]?.text ?? '') && SUBCOMMANDS.pip?.has(args[m + 2]?.text ?? '')) return fetches(`${inv.shown} -m pip ${args[m + 2]?.text ?? ''}`);
  }
  return null;
}

/** The first word that is not an option: a subcommand (git's own options before it skipped). */
function firstOperand(args: ShellWord[]): ShellWord | undefined {
  let k = 0;
  while (k < args.length && (args[k] as ShellWord).text.startsWith('-')) k += /^(-C|-c|--git-dir|--work-tree|--prefix|--cwd|--dir)$/.test((args[k] as ShellWord).text) ? 2 : 1;
  return args[k];
}

/** For clients named by host (`ssh host`, `nc host 80`): the host, so a rule can name it. */
function hostOf(name: string, operands: ShellWord[]): string[] {
  const first = operands[0];
  if (!first || first.dynamic) return [];
  if (name === 'scp') return operands.filter((w) => REMOTE_PATH.test(w.text)).map((w) => w.text);
  return [first.text];
}
