/**
 * What a tmux command runs with: the server (namespace) it acts on, the host that runs panes, the
 * calling client's environment and directory, target resolution relative to the client, format
 * scopes, and its output. Commands write stdout and stderr lines here; tmux prints them in order.
 */
import { expandFormat, type ExpandOptions } from '../format.js';
import { FormatScopes } from '../format-scope.js';
import { flagValue, type ParsedCommand } from '../grammar.js';
import type { PaneHost } from '../host.js';
import type { TmuxServer } from '../model.js';
import { EMPTY_TARGET, TargetError, TargetResolver, type ResolveOptions, type TargetState, type TargetType } from '../target.js';

/** The client that sent the command line. */
export interface ClientInfo {
  env: Record<string, string>;
  cwd: string;
  /** Its standard input is a terminal (attach and new-session without -d need one). */
  tty: boolean;
  /** Its standard input, read for `load-buffer -`. */
  stdin: string | undefined;
  /** The scopes of the token panes this client starts get; undefined for the owner (the owner's token). */
  paneScopes?: readonly string[];
}

/** Raised by a command to stop with tmux's message (printed to stderr, exit code 1). */
export class CommandError extends Error {
  override readonly name = 'CommandError';
}

/** Everything one queue of commands shares. */
export class CommandContext {
  readonly scopes: FormatScopes;
  resolver: TargetResolver;
  readonly stdout: string[] = [];
  readonly stderr: string[] = [];
  /** The Switchboard pane to attach the client to when the commands are done. */
  attachPane: string | undefined;
  /** The server was killed by one of the commands. */
  killed = false;
  /** Whether the command that just ran wants its after- hooks run (select-pane that changed nothing does not). */
  afterHook = true;

  /** Before each command: its after- hooks run unless it says otherwise. */
  expectAfterHook(): void {
    this.afterHook = true;
  }
  /** Runs more commands in this context (source-file, if-shell); set by the service. */
  runCommands: (text: string) => Promise<boolean> = () => Promise.resolve(true);
  /** Waits for `promise` without holding up other command lines of the server (wait-for, run-shell). */
  suspend: <T>(promise: Promise<T>) => Promise<T> = (promise) => promise;

  constructor(
    readonly server: TmuxServer,
    readonly host: PaneHost,
    readonly client: ClientInfo,
    private currentState: TargetState,
  ) {
    this.scopes = new FormatScopes(server);
    this.resolver = new TargetResolver(server, currentState);
  }

  /** What a missing target means: the client's pane, or what the last command made. */
  get current(): TargetState {
    return this.currentState;
  }

  /** Later commands of the line act on what an earlier one made (new-session, new-window, split-window). */
  setCurrent(state: TargetState): void {
    this.currentState = state;
    this.resolver = new TargetResolver(this.server, state);
  }

  /** Prints a line to stdout (a newline is added). */
  print(text: string): void {
    this.stdout.push(`${text}\n`);
  }

  /** Prints text to stdout as it is. */
  write(text: string): void {
    this.stdout.push(text);
  }

  /** Resolves the command's -t (or another flag) as a target of `type`; throws CommandError with tmux's message. */
  target(command: ParsedCommand, type: TargetType, options: ResolveOptions & { flag?: string } = {}): TargetState {
    try {
      return this.resolver.resolve(flagValue(command, options.flag ?? 't'), type, options);
    } catch (err) {
      if (err instanceof TargetError) throw new CommandError(err.message);
      throw err;
    }
  }

  /** Like target(), but a target that names nothing gives an empty state instead of an error (display-message). */
  targetOrNothing(command: ParsedCommand, type: TargetType): TargetState {
    const text = flagValue(command, 't');
    try {
      return this.resolver.resolve(text, type);
    } catch {
      // tmux keeps what it found before the part that failed: a session found keeps its current window.
      const sessionText = text?.includes(':') ? text.slice(0, text.indexOf(':')) : undefined;
      const session = sessionText ? this.resolver.findSession(sessionText.replace(/^=/, ''), sessionText.startsWith('=')) : undefined;
      return session ? this.resolver.sessionCurrent(session) : { ...EMPTY_TARGET };
    }
  }

  /** Expands a format for a target, with extra variables. */
  expand(template: string, target: TargetState, extra: Record<string, string> = {}, options: ExpandOptions = {}): string {
    return expandFormat(template, this.scopes.forTarget(target, extra), options);
  }
}
