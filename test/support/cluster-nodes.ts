/**
 * Starting test/support/cluster-node.ts as a child process and following what it says: every line
 * kept, a wait for a line that matches (no sleeps), commands on stdin, and an end by PID. Every
 * child still running when the test process exits or is sent SIGTERM is killed: a child exits by
 * itself when its stdin closes, but not a frozen one (SIGSTOP).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Emitter } from '../../src/core/emitter.js';
import { untilEvent } from '../../src/core/until-event.js';
import { atTestProcessEnd } from './test-process-end.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** A bound for a wait on something that must happen; never a measure of how fast it did. */
const WAIT_MS = 30_000;

type NodeLine = Record<string, unknown>;

export interface NodeProcess {
  readonly pid: number;
  readonly lines: readonly NodeLine[];
  /** The first line (said already, or to come) that `match` takes. */
  waitFor(match: (line: NodeLine) => boolean, what: string): Promise<NodeLine>;
  send(command: string): void;
  signal(signal: NodeJS.Signals): void;
  /** Ends it (SIGKILL by PID, after SIGCONT in case it is frozen) and waits for its exit. */
  kill(): Promise<void>;
  readonly exited: Promise<void>;
}

const children = new Set<ChildProcess>();
atTestProcessEnd(() => {
  for (const child of children) if (child.pid !== undefined) killQuietly(child.pid, 'SIGKILL');
});

function killQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone
  }
}

export interface NodeProcessOptions {
  url: string;
  name: string;
  pool?: string;
  slots?: number;
  pullExpiresMs?: number;
}

/** Starts a node process and resolves once it holds its lease (and pulls, with a pool). */
export async function startNodeProcess(options: NodeProcessOptions): Promise<NodeProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'test', 'support', 'cluster-node.ts'), JSON.stringify(options)], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
  const pid = child.pid;
  if (pid === undefined) throw new Error('cannot start a node process');
  children.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => children.delete(child));
  const lines: NodeLine[] = [];
  const said = new Emitter<NodeLine>();
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-8_192)));
  createInterface({ input: child.stdout }).on('line', (text) => {
    let line: NodeLine;
    try {
      line = JSON.parse(text) as NodeLine;
    } catch {
      line = { text };
    }
    lines.push(line);
    said.fire(line);
  });
  const node: NodeProcess = {
    pid,
    lines,
    exited,
    async waitFor(match, what) {
      const found = lines.find(match);
      if (found) return found;
      let hit: NodeLine | undefined;
      const gone = exited.then(() => 'exited' as const);
      const end = await Promise.race([untilEvent(said.event, (line) => (match(line) ? ((hit = line), true) : false), { timeoutMs: WAIT_MS }), gone]);
      if (hit) return hit;
      throw new Error(`node ${options.name} (pid ${pid}): no ${what} (${end}); it said:\n${lines.map((l) => JSON.stringify(l)).join('\n')}\n${stderr}`);
    },
    send(command) {
      child.stdin.write(`${command}\n`);
    },
    signal(signal) {
      killQuietly(pid, signal);
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      killQuietly(pid, 'SIGCONT');
      killQuietly(pid, 'SIGKILL');
      await exited;
    },
  };
  try {
    await node.waitFor((line) => line.ready === true, 'ready line');
  } catch (err) {
    await node.kill();
    throw err;
  }
  return node;
}
