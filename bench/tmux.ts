import { execFile, execFileSync } from 'node:child_process';

/**
 * A private tmux server for the benchmark, driven the way CCB drives tmux: one `tmux` process per
 * command (send-keys, capture-pane, display-message).
 */
export class TmuxServer {
  readonly socket: string;

  constructor(name: string, private readonly historyLimit = 10_000) {
    this.socket = name;
  }

  /** Runs one tmux command and resolves with its stdout. */
  run(args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile('tmux', ['-L', this.socket, ...args], { maxBuffer: 256 * 1024 * 1024 }, (err, stdout) => {
        if (err) reject(new Error(`tmux ${args.join(' ')}: ${err.message}`));
        else resolve(stdout);
      });
    });
  }

  start(cols = 120, rows = 30): void {
    this.killSync();
    execFileSync('tmux', ['-L', this.socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'bench', '-x', String(cols), '-y', String(rows), 'sleep 100000']);
    execFileSync('tmux', ['-L', this.socket, 'set', '-g', 'history-limit', String(this.historyLimit)]);
    execFileSync('tmux', ['-L', this.socket, 'set', '-g', 'remain-on-exit', 'off']);
  }

  /** A new window running `command` (through the shell); resolves with its pane id (%N). */
  async newPane(command: string, env: Record<string, string> = {}): Promise<string> {
    const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    const out = await this.run(['new-window', '-d', '-P', '-F', '#{pane_id}', ...envArgs, command]);
    return out.trim();
  }

  /** A new window running a program directly (no shell), in `cwd`, with `env` added. */
  async newPaneArgv(argv: string[], options: { cwd: string; env: Record<string, string> }): Promise<string> {
    const envArgs = Object.entries(options.env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    const out = await this.run(['new-window', '-d', '-P', '-F', '#{pane_id}', '-c', options.cwd, ...envArgs, ...argv]);
    return out.trim();
  }

  serverPid(): number {
    return Number(execFileSync('tmux', ['-L', this.socket, 'display', '-p', '#{pid}']).toString().trim());
  }

  killSync(): void {
    try {
      execFileSync('tmux', ['-L', this.socket, 'kill-server'], { stdio: 'ignore' });
    } catch {
      // no server
    }
  }
}

/** tmux's version, or undefined when it is not installed. */
export function tmuxVersion(): string | undefined {
  try {
    return execFileSync('tmux', ['-V']).toString().trim();
  } catch {
    return undefined;
  }
}
