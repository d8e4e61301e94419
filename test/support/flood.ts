import { spawn, type ChildProcess } from 'node:child_process';

/**
 * A flood of connections from a process of its own (each process may hold only so many
 * descriptors): `idle` opens `count` connections and keeps them, printing how many are still open
 * each time one closes; `reset` connects and resets at once (RST), `count` times. It ends by itself
 * (stdin closing, or every connection gone).
 */
const SOURCE = String.raw`
const net = require('node:net');
const [mode, host, port, count] = [process.argv[1], process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
let started = 0, pending = 0, open = 0, opened = 0, failed = 0, dirty = true;
const report = () => { dirty = false; process.stdout.write('open=' + open + ' opened=' + opened + ' failed=' + failed + ' started=' + started + '\n'); };
setInterval(() => { if (dirty) report(); }, 50);
function settled() { pending--; dirty = true; next(); }
function next() {
  while (started < count && pending < 200) {
    started++; pending++;
    const s = net.connect(port, host);
    let connected = false;
    s.on('error', () => { if (!connected) { failed++; settled(); } });
    s.once('connect', () => {
      connected = true; opened++;
      if (mode === 'reset') { s.resetAndDestroy(); settled(); return; }
      open++;
      s.once('close', () => { open--; dirty = true; });
      settled();
    });
  }
}
next();
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
`;

export interface Flood {
  child: ChildProcess;
  /** The last report: connections still open, opened in all, failed to open. */
  readonly state: { open: number; opened: number; failed: number; started: number };
  /** Resolves once every connection has been attempted. */
  done: Promise<void>;
  stop(): void;
}

export function flood(mode: 'idle' | 'reset', port: number, count: number): Flood {
  const child = spawn(process.execPath, ['-e', SOURCE, mode, '127.0.0.1', String(port), String(count)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const state = { open: 0, opened: 0, failed: 0, started: 0 };
  let markDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (markDone = resolve));
  let buffered = '';
  child.stdout.on('data', (d: Buffer) => {
    buffered += d.toString('utf8');
    let nl: number;
    while ((nl = buffered.indexOf('\n')) !== -1) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      const m = /open=(\d+) opened=(\d+) failed=(\d+) started=(\d+)/.exec(line);
      if (!m) continue;
      Object.assign(state, { open: Number(m[1]), opened: Number(m[2]), failed: Number(m[3]), started: Number(m[4]) });
      if (state.opened + state.failed >= count) markDone();
    }
  });
  child.once('exit', () => markDone());
  return {
    child,
    state,
    done,
    stop: () => {
      child.stdin.end();
      child.kill('SIGKILL');
    },
  };
}
