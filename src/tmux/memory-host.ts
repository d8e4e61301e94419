/**
 * A PaneHost with no processes: each pane is a grid of text rows that a test (or a dry run) feeds
 * with `output()` and ends with `exit()`; what is written to it is recorded. It lets the tmux model
 * (commands, formats, layout, targets) be exercised without PTYs.
 */
import { Emitter } from '../core/emitter.js';
import type { Disposable } from '../core/disposable.js';
import type { CapturedRow } from '../pane/index.js';
import type { HostExit, HostPane, PaneHost, PipeProcess, SpawnSpec } from './host.js';

export class MemoryPane implements HostPane {
  readonly id: string;
  readonly pid: number;
  exit: HostExit | undefined;
  cols: number;
  rows: number;
  bracketedPaste = false;
  applicationCursorKeys = false;
  altScreen = false;
  windowTitle = '';
  readonly ttyName: string;
  label: string;
  removed = false;
  /** Everything written to the program, in order. */
  readonly input: string[] = [];
  private history: string[] = [];
  private screen: string[];
  private cursorY = 0;
  private readonly exitEmitter = new Emitter<HostExit>();
  private readonly outputEmitter = new Emitter<Buffer>();

  constructor(
    readonly spec: SpawnSpec,
    n: number,
  ) {
    this.id = `mem${n}`;
    this.pid = 10_000 + n;
    this.ttyName = `/dev/pts/${n}`;
    this.cols = spec.cols;
    this.rows = spec.rows;
    this.label = spec.label;
    this.screen = Array.from({ length: spec.rows }, () => '');
  }

  get alive(): boolean {
    return this.exit === undefined;
  }

  get historyLength(): number {
    return this.history.length;
  }

  get cursor(): { x: number; y: number; visible: boolean } {
    return { x: (this.screen[this.cursorY] ?? '').length, y: this.cursorY, visible: true };
  }

  /** The program prints `text` (lines separated by \n). */
  output(text: string): void {
    const parts = text.split('\n');
    parts.forEach((part, i) => {
      if (i > 0) this.newline();
      this.screen[this.cursorY] = (this.screen[this.cursorY] ?? '') + part;
    });
    this.outputEmitter.fire(Buffer.from(text));
  }

  private newline(): void {
    if (this.cursorY < this.rows - 1) {
      this.cursorY++;
      return;
    }
    this.history.push(this.screen.shift() ?? '');
    this.screen.push('');
  }

  /** The program ends. */
  end(exitCode: number | null, signal: string | null = null): void {
    if (this.exit) return;
    this.exit = { exitCode, signal };
    this.exitEmitter.fire(this.exit);
  }

  captureRows(from: number, to: number): CapturedRow[] {
    return [...this.history, ...this.screen].slice(Math.max(0, from), to).map((text) => ({ text, wrapped: false }));
  }

  write(data: string): void {
    if (!this.alive) throw new Error('the pane has exited');
    this.input.push(data);
  }

  resize(cols: number, rows: number): void {
    this.cols = cols;
    while (this.screen.length < rows) this.screen.push('');
    while (this.screen.length > rows) this.history.push(this.screen.shift() ?? '');
    this.rows = rows;
    this.cursorY = Math.min(this.cursorY, rows - 1);
  }

  clearHistory(): void {
    this.history = [];
  }

  foreground(): { name: string; cwd: string; pid: number } {
    // A shell running `-c command` has that command's program in the foreground.
    const [program, flag, command] = this.spec.argv;
    const running = flag === '-c' && command !== undefined ? command.trim().split(/\s+/)[0] : program;
    return { name: running?.split('/').pop() ?? '', cwd: this.spec.cwd, pid: this.pid };
  }

  setLabel(label: string): void {
    this.label = label;
  }

  onExit(listener: (exit: HostExit) => void): Disposable {
    return this.exitEmitter.event(listener);
  }

  onOutput(listener: (data: Buffer) => void): Disposable {
    return this.outputEmitter.event(listener);
  }

  kill(): Promise<void> {
    this.end(null, 'SIGHUP');
    return Promise.resolve();
  }

  remove(): Promise<void> {
    this.end(null, 'SIGHUP');
    this.removed = true;
    return Promise.resolve();
  }
}

/** Panes in memory. */
export class MemoryPaneHost implements PaneHost {
  readonly panes: MemoryPane[] = [];
  /** Commands pipe-pane and run-shell were asked to run. */
  readonly shellCommands: string[] = [];

  spawn(spec: SpawnSpec): Promise<HostPane> {
    const pane = new MemoryPane(spec, this.panes.length);
    this.panes.push(pane);
    return Promise.resolve(pane);
  }

  /** The live (not removed) panes. */
  get live(): MemoryPane[] {
    return this.panes.filter((p) => !p.removed);
  }

  shellCommand(shell: string, command: string): string[] {
    return [shell, '-c', command];
  }

  loginShell(shell: string): string[] {
    return [shell, '-l'];
  }

  fallbackShell(): string {
    return '/bin/sh';
  }

  isExecutable(file: string): boolean {
    return file.startsWith('/');
  }

  startPipe(_shell: string, command: string): PipeProcess {
    this.shellCommands.push(command);
    return { write: () => undefined, close: () => undefined, onExit: () => ({ dispose: () => undefined }) };
  }

  runShell(_shell: string, command: string): Promise<{ stdout: string; stderr: string; exitCode: number }> {
    this.shellCommands.push(command);
    return Promise.resolve({ stdout: '', stderr: '', exitCode: command === 'false' ? 1 : 0 });
  }
}
