import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { Daemon, type DaemonOptions } from '../../src/daemon/index.js';
import { LineFramer } from '../../src/protocol/framing.js';
import { tempDir } from './shell.js';
import { CLI } from './cli.js';

export type Transport = 'tcp' | 'socket';
export const TRANSPORTS: Transport[] = ['tcp', 'socket'];

/** An in-process daemon in a private temporary home, on an OS-chosen port. */
export async function startTestDaemon(options: DaemonOptions = {}): Promise<{ daemon: Daemon; home: string; stop: () => Promise<void> }> {
  const { dir, cleanup } = tempDir('sb-home-');
  const daemon = await Daemon.start({ home: dir, port: 0, paneDefaults: { killGraceMs: 1_000 }, ...options });
  return {
    daemon,
    home: dir,
    stop: async () => {
      await daemon.close();
      cleanup();
    },
  };
}

/** A daemon as its own process (the built CLI), for what only a real process shows. */
export interface DaemonProcess {
  readonly child: ChildProcess;
  /** Ends it (SIGTERM) unless it has ended, and waits until it has. */
  stop(): Promise<void>;
}

/** Starts `switchboard daemon` in `home` (an OS-chosen port, no dashboard) and resolves once it listens. */
export async function startDaemonProcess(home: string, env: NodeJS.ProcessEnv): Promise<DaemonProcess> {
  const child = spawn(process.execPath, [CLI, '--home', home, 'daemon', '--port', '0', '--no-dashboard', '--log-level', 'warn'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (/listening on /.test(out)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the daemon exited (${code}): ${out}`)));
  });
  return { child, stop };
}

/** What useTestDaemon gives a test file, valid inside its tests. */
export interface TestDaemonContext {
  readonly daemon: Daemon;
  /** The daemon's private home (runtime file, socket). */
  readonly home: string;
  /** A scratch directory for panes to work in. */
  readonly work: string;
}

/** Starts a test daemon and a scratch directory before the file's tests, and removes both after. */
export function useTestDaemon(options: DaemonOptions = {}): TestDaemonContext {
  let started: Awaited<ReturnType<typeof startTestDaemon>> | undefined;
  let scratch: { dir: string; cleanup: () => void } | undefined;
  beforeAll(async () => {
    started = await startTestDaemon(options);
    scratch = tempDir();
  });
  afterAll(async () => {
    await started?.stop();
    scratch?.cleanup();
  });
  const need = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useTestDaemon: only available inside tests');
    return value;
  };
  return {
    get daemon() {
      return need(started).daemon;
    },
    get home() {
      return need(started).home;
    },
    get work() {
      return need(scratch).dir;
    },
  };
}

/** A client that speaks raw bytes, for feeding the server what a well-behaved client never would. */
export class RawClient {
  private readonly framer = new LineFramer(64 * 1024 * 1024);
  private readonly inbox: unknown[] = [];
  private waiter: { match: (m: unknown) => boolean; resolve: (m: unknown) => void } | undefined;
  readonly closed: Promise<void>;
  private isClosed = false;

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      for (const event of this.framer.push(chunk)) {
        if (event.kind !== 'line') continue;
        const message: unknown = JSON.parse(event.line.toString('utf8'));
        if (this.waiter?.match(message)) {
          const { resolve } = this.waiter;
          this.waiter = undefined;
          resolve(message);
        } else {
          this.inbox.push(message);
        }
      }
    });
    this.closed = new Promise((resolve) => {
      socket.on('close', () => {
        this.isClosed = true;
        resolve();
      });
    });
    socket.on('error', () => undefined);
  }

  static connect(daemon: Daemon, transport: Transport): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = transport === 'socket' ? net.connect(daemon.socketPath as string) : net.connect(daemon.tcp?.port ?? 0, '127.0.0.1');
      socket.once('connect', () => resolve(new RawClient(socket)));
      socket.once('error', reject);
    });
  }

  get isOpen(): boolean {
    return !this.isClosed;
  }

  send(data: string | Buffer): void {
    this.socket.write(data);
  }

  /** The first message (queued or still to come) that `match` accepts. */
  waitFor(match: (m: unknown) => boolean, timeoutMs = 10_000): Promise<unknown> {
    const index = this.inbox.findIndex(match);
    if (index !== -1) return Promise.resolve(this.inbox.splice(index, 1)[0]);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        reject(new Error('no matching message from the server in time'));
      }, timeoutMs);
      this.waiter = {
        match,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
      };
    });
  }

  /** The next message from the server, whatever it is. */
  next(timeoutMs = 10_000): Promise<unknown> {
    return this.waitFor(() => true, timeoutMs);
  }

  /** Sends one request and returns the response with its id; notifications stay in the inbox. */
  call(token: string, method: string, params: Record<string, unknown> = {}, id: number | string = Math.floor(Math.random() * 1e9)): Promise<Record<string, unknown>> {
    this.send(`${JSON.stringify({ jsonrpc: '2.0', id, method, params: { token, ...params } })}\n`);
    return this.waitFor((m) => (m as { id?: unknown }).id === id) as Promise<Record<string, unknown>>;
  }

  /** Notifications received so far (removed from the inbox). */
  takeNotifications(method?: string): Record<string, unknown>[] {
    const out: Record<string, unknown>[] = [];
    for (let i = 0; i < this.inbox.length; ) {
      const m = this.inbox[i] as Record<string, unknown>;
      if (typeof m.method === 'string' && (method === undefined || m.method === method)) {
        out.push(m);
        this.inbox.splice(i, 1);
      } else i++;
    }
    return out;
  }

  close(): void {
    this.socket.destroy();
  }
}

/** The error object of a response, or a failure. */
export function errorOf(response: unknown): { code: number; message: string; data: { code: string } } {
  const r = response as { error?: { code: number; message: string; data: { code: string } } };
  if (!r.error) throw new Error(`expected an error, got ${JSON.stringify(response)}`);
  return r.error;
}

/** The result of a response, or a failure. */
export function resultOf<T = Record<string, unknown>>(response: unknown): T {
  const r = response as { result?: T; error?: unknown };
  if (r.error !== undefined || r.result === undefined) throw new Error(`expected a result, got ${JSON.stringify(response)}`);
  return r.result;
}
