/**
 * The `tmux` launcher (the Node one; a C one speeds up the same protocol where a compiler exists):
 * sends its argv, environment, directory and, when asked, its stdin to the daemon as one
 * `tmux_command` call over the local socket, prints the reply and exits with tmux's code.
 *
 * Inside a pane it calls the pane's daemon with the pane's own token, from the pane's variables,
 * and never reads the runtime file (whose token is the owner's); a pane whose token is missing is
 * refused. Outside every pane it finds the daemon the hard way, because tools like CCB run it with
 * SWITCHBOARD_* stripped and HOME rewritten: the runtime file of $SWITCHBOARD_HOME, else of
 * ~/.switchboard under the user's real home from the user database, read under the trust rule of
 * every reader (client/endpoint.ts). When no daemon runs and the command would start a tmux server,
 * it starts one, as tmux starts its server. Only such a command sends the whole environment
 * (client-env.ts). Imports stay light: this runs on every poll.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import net from 'node:net';
import { userInfo } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { paneEndpoint, readTrustedRuntimeFile, usableEnv } from '../../client/endpoint.js';
import { isSwitchboardError } from '../../core/errors.js';
import { parseGlobalFlags, tmuxSocketPath } from '../../tmux/client-args.js';
import type { CommandParseError } from '../../tmux/grammar.js';
import { tmuxClientEnv } from './client-env.js';

/** Where the launcher reads and writes. */
export interface LauncherIo {
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** Standard input, opened only when a command reads it. */
  stdin: () => NodeJS.ReadableStream;
  /** Standard input is a terminal. */
  stdinIsTTY: boolean;
  /** The Switchboard home (default: $SWITCHBOARD_HOME, else ~/.switchboard under the real home). */
  home?: string;
}

/** How the launcher reaches the daemon: its pane's variables, or the runtime file's. */
interface Runtime {
  socket?: string;
  host?: string;
  port?: number;
  token: string;
  /** The daemon's process, when the runtime file said it. */
  pid?: number;
}

/** The daemon answered with an error (a refusal, say): it runs, so it is not started again. */
class ReplyError extends Error {}

interface Reply {
  stdout: string;
  stderr: string;
  exit_code: number;
  attach?: string;
  need_stdin?: boolean;
}

/**
 * The commands the launcher must know of before it calls, by name and alias (the command table's;
 * a test holds them to it): those that start a server (they send the whole environment) and
 * load-buffer (it may read stdin).
 */
export const LAUNCHER_COMMANDS: readonly (readonly [name: string, alias: string])[] = [
  ['attach-session', 'attach'],
  ['new-session', 'new'],
  ['start-server', 'start'],
  ['load-buffer', 'loadb'],
];

/**
 * False when no word of the line can name one of LAUNCHER_COMMANDS (its alias, or a prefix of its
 * name, as tmux finds commands): then the command table, two more modules to load on every poll,
 * is not needed before the call. It errs towards true, which only costs the loading.
 */
export function mayNeedCommandTable(words: readonly string[]): boolean {
  if (words.length === 0) return true;
  return words.some((w) => {
    const word = w.endsWith(';') ? w.slice(0, -1) : w;
    return word !== '' && LAUNCHER_COMMANDS.some(([name, alias]) => name.startsWith(word) || alias === word);
  });
}

/** What the launcher needs to know of a line's commands before it calls. */
interface LineCommands {
  /** The line may start a tmux server (so it sends the whole environment). */
  starts: boolean;
  /** A load-buffer reads stdin: it goes with the first call, saving a round trip. */
  stdinNeeded: boolean;
  /** Why the line does not parse (it starts nothing; the daemon answers tmux's error for it). */
  parseError?: CommandParseError;
}

/** Reads the line's commands with the command table, as tmux decides whether it starts a server. */
async function lineCommands(rest: readonly string[], noStart: boolean): Promise<LineCommands> {
  const { CommandParseError, parseArgv } = await import('../../tmux/grammar.js');
  try {
    const commands = parseArgv([...rest]);
    return {
      starts: !noStart && (rest.length === 0 || commands.some((c) => c.spec.startsServer)),
      stdinNeeded: commands.some((c) => c.spec.name === 'load-buffer' && c.args[0] === '-'),
    };
  } catch (err) {
    if (!(err instanceof CommandParseError)) throw err;
    return { starts: !noStart && rest.length === 0, stdinNeeded: false, parseError: err };
  }
}

/** How long a started daemon gets to answer. */
const DAEMON_START_TIMEOUT_MS = 15_000;
const POLL_MS = 25;

/** The Switchboard home the launcher uses: $SWITCHBOARD_HOME, else the real home's ~/.switchboard (not $HOME). */
export function launcherHome(env: NodeJS.ProcessEnv): string {
  const fromEnv = env.SWITCHBOARD_HOME;
  if (fromEnv !== undefined && fromEnv.trim() !== '') return path.resolve(fromEnv);
  let home: string;
  try {
    home = userInfo().homedir;
  } catch {
    home = env.HOME ?? env.USERPROFILE ?? '.';
  }
  return path.join(home, '.switchboard');
}

/** Where a warning goes: the launcher's stderr. */
type Warn = (message: string) => void;

/**
 * The daemon to call: inside a pane, the pane's own (never the runtime file); else the trusted
 * runtime file's, or undefined when there is none. Throws CONNECTION_FAILED saying why it refuses.
 */
function findDaemon(home: string, env: NodeJS.ProcessEnv, warn: Warn): { runtime: Runtime | undefined; inPane: boolean } {
  const pane = paneEndpoint(usableEnv(env));
  if (pane) return { runtime: { socket: pane.socketPath, host: pane.host, port: pane.port, token: pane.token }, inPane: true };
  const info = readTrustedRuntimeFile(home, warn);
  return { runtime: info && { socket: info.socket, host: info.host, port: info.port, token: info.token, pid: info.pid }, inPane: false };
}

/** One request, one reply, over a fresh connection. */
function call(runtime: Runtime, params: Record<string, unknown>): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const socket = runtime.socket ? net.connect(runtime.socket) : net.connect(runtime.port ?? 0, runtime.host ?? '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.once('error', reject);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (!chunk.includes(10)) return;
      socket.destroy();
      const line = Buffer.concat(chunks).toString('utf8').split('\n')[0] ?? '';
      try {
        const message = JSON.parse(line) as { result?: Reply; error?: { message: string } };
        if (message.error) reject(new ReplyError(message.error.message));
        else if (message.result) resolve(message.result);
        else reject(new Error('the daemon sent no result'));
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
    socket.once('connect', () => {
      socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tmux_command', params: { ...params, token: runtime.token } })}\n`);
    });
  });
}

function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer | string) => chunks.push(typeof c === 'string' ? Buffer.from(c) : c));
    stream.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.once('error', reject);
  });
}

/** The CLI script that starts daemons and attaches terminals (next to this file in dist). */
function cliScript(): string {
  const here = fileURLToPath(import.meta.url);
  return path.join(path.dirname(here), '..', `main${path.extname(here)}`);
}

/** Starts a daemon for `home` in the background, as `switchboard up` does, and waits until it answers. */
async function startDaemon(home: string, env: NodeJS.ProcessEnv): Promise<Runtime | undefined> {
  const { DAEMON_NODE_FLAGS, daemonEnv } = await import('../../daemon/daemon-flags.js');
  const { ensurePrivateDir } = await import('../../platform/files.js');
  ensurePrivateDir(home);
  const log = openSync(path.join(home, 'daemon.log'), 'a', 0o600);
  const flags = [...DAEMON_NODE_FLAGS.filter((f) => !process.execArgv.includes(f)), ...process.execArgv];
  const child = spawn(process.execPath, [...flags, cliScript(), '--home', home, 'daemon'], { detached: true, stdio: ['ignore', log, log], env: daemonEnv(env), windowsHide: true });
  closeSync(log);
  child.unref();
  const deadline = Date.now() + DAEMON_START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const runtime = readTrustedRuntimeFile(home, () => undefined);
    if (runtime && runtime.pid === child.pid) {
      const answered = await call(runtime, { argv: ['-V'] }).then(() => true, () => false);
      if (answered) return runtime;
    }
    if (child.exitCode !== null) return undefined;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  return undefined;
}

/** Runs `switchboard attach PANE` on this terminal (attach-session). */
function attach(home: string, paneId: string, env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...process.execArgv, cliScript(), '--home', home, 'attach', paneId], { stdio: 'inherit', env });
    child.once('exit', (code) => resolve(code ?? 1));
    child.once('error', () => resolve(1));
  });
}

/** What one tmux command line printed, its exit code, and the pane to attach to. */
export interface TmuxCallResult {
  stdout: string;
  stderr: string;
  exitCode: number;
  attach?: string;
  home: string;
}

/** True when a daemon answers for the launcher's home. */
export async function daemonAnswers(io: Pick<LauncherIo, 'env' | 'home'>): Promise<boolean> {
  let runtime: Runtime | undefined;
  try {
    runtime = findDaemon(io.home ?? launcherHome(io.env), io.env, () => undefined).runtime;
  } catch {
    return false;
  }
  if (!runtime) return false;
  return call(runtime, { argv: ['-V'] }).then(() => true, () => false);
}

/** Runs one tmux command line through the daemon (starting it when the command needs a server). */
export async function tmuxCall(argv: string[], io: Omit<LauncherIo, 'stdout' | 'stderr'> & { warn?: Warn }): Promise<TmuxCallResult> {
  const home = io.home ?? launcherHome(io.env);
  const flags = parseGlobalFlags(argv);
  if ('error' in flags) return { stdout: '', stderr: flags.error, exitCode: 1, home };
  if (flags.version) return { stdout: 'tmux 3.3a\n', stderr: '', exitCode: 0, home };
  let warning = '';
  let found: ReturnType<typeof findDaemon>;
  try {
    found = findDaemon(home, io.env, io.warn ?? ((message) => (warning += `switchboard: warning: ${message}\n`)));
  } catch (err) {
    if (!isSwitchboardError(err)) throw err;
    return { stdout: '', stderr: `switchboard: ${err.message}\n`, exitCode: 1, home };
  }
  let { runtime } = found;
  // Whether the line may start a tmux server, as tmux decides. A line none of whose words can name
  // such a command (or load-buffer) starts nothing, whether or not it parses: read exactly only
  // when no daemon answers.
  let known: LineCommands | undefined = runtime && !mayNeedCommandTable(flags.rest) ? undefined : await lineCommands(flags.rest, flags.noStart);
  const { starts, stdinNeeded } = known ?? { starts: false, stdinNeeded: false };
  const params: Record<string, unknown> = { argv, env: tmuxClientEnv(io.env, starts), cwd: io.cwd, tty: io.stdinIsTTY };
  if (stdinNeeded) params.stdin = await readAll(io.stdin());
  const refused = (err: unknown): TmuxCallResult | undefined => (err instanceof ReplyError ? { stdout: '', stderr: `${warning}switchboard: ${err.message}\n`, exitCode: 1, home } : undefined);
  let reply: Reply | undefined;
  if (runtime) {
    try {
      reply = await call(runtime, params);
    } catch (err) {
      const answer = refused(err);
      if (answer) return answer;
    }
  }
  if (!reply) {
    if (found.inPane) {
      const where = runtime?.socket ?? `${runtime?.host ?? '127.0.0.1'}:${runtime?.port ?? 0}`;
      return { stdout: '', stderr: `${warning}switchboard: the daemon of this pane does not answer at ${where}; a pane's programs never start another\n`, exitCode: 1, home };
    }
    // No daemon: start one only for a command that would start a tmux server, as tmux does.
    known ??= await lineCommands(flags.rest, flags.noStart);
    if (known.parseError) return { stdout: '', stderr: `${warning}${known.parseError.message}\n`, exitCode: 1, home };
    if (!known.starts) {
      const shown = tmuxSocketPath(flags, io.env, process.getuid?.() ?? 0);
      const left = existsSync(path.resolve(io.cwd, shown));
      return { stdout: '', stderr: `${warning}${left ? `no server running on ${shown}\n` : `error connecting to ${shown} (No such file or directory)\n`}`, exitCode: 1, home };
    }
    try {
      runtime = await startDaemon(home, io.env);
    } catch (err) {
      return { stdout: '', stderr: `${warning}server exited unexpectedly (the Switchboard daemon could not start: ${err instanceof Error ? err.message : String(err)})\n`, exitCode: 1, home };
    }
    if (!runtime) return { stdout: '', stderr: `${warning}server exited unexpectedly (the Switchboard daemon did not start; see ${path.join(home, 'daemon.log')})\n`, exitCode: 1, home };
    try {
      reply = await call(runtime, params);
    } catch (err) {
      const answer = refused(err);
      if (answer) return answer;
      throw err;
    }
  }
  if (reply.need_stdin && runtime) {
    try {
      reply = await call(runtime, { ...params, stdin: await readAll(io.stdin()) });
    } catch (err) {
      const answer = refused(err);
      if (answer) return answer;
      throw err;
    }
  }
  return { stdout: reply.stdout, stderr: `${warning}${reply.stderr}`, exitCode: reply.exit_code, ...(reply.attach !== undefined ? { attach: reply.attach } : {}), home };
}

/** Runs one tmux command line, prints what tmux would, and resolves with its exit code. */
export async function runTmuxLauncher(argv: string[], io: LauncherIo): Promise<number> {
  const result = await tmuxCall(argv, io);
  io.stdout.write(result.stdout);
  io.stderr.write(result.stderr);
  if (result.attach !== undefined && result.exitCode === 0) return attach(result.home, result.attach, io.env);
  return result.exitCode;
}
