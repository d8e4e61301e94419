/**
 * A real nats-server with JetStream for the cluster tests (issue 26): Debian's 2.9.10 at
 * /usr/sbin/nats-server (or $SWITCHBOARD_NATS_SERVER), started in a fresh temporary folder on a
 * random loopback port, ready when its log says so (no sleeps), and stopped by PID. Optional NKey
 * users with permissions of their own, and TLS from a test CA made with openssl.
 *
 * Nothing is left behind: stop() ends the process (SIGINT, then SIGKILL after STOP_GRACE_MS) and
 * removes the folder, and a test process that exits or is sent SIGTERM (vitest's end of a worker)
 * without calling it still kills every server it started and removes its folder
 * (test-process-end.ts; a SIGKILL of the test process itself is the one case it cannot cover).
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createUser } from '@nats-io/nkeys';
import { atTestProcessEnd } from './test-process-end.js';

/** Where the server is; Debian's package installs it here. */
const NATS_SERVER = process.env.SWITCHBOARD_NATS_SERVER ?? '/usr/sbin/nats-server';
/** A generous bound for a server to say it is ready (measured: about 35 ms idle). */
const READY_TIMEOUT_MS = 30_000;
/** How long a SIGINT may take before the server is killed outright. */
const STOP_GRACE_MS = 10_000;
/**
 * How long the server gives a client for the TLS handshake and for its CONNECT (seconds): the
 * server's own 0.5 s and 2 s are for idle machines, and a client in a loaded test process may take
 * longer. No test waits for either to run out: a client the server refuses, it refuses at once.
 */
const HANDSHAKE_TIMEOUT_S = 10;
/** How much of the server's log is kept for an error message. */
const LOG_TAIL_CHARS = 16_384;

/** A permission block of nats-server's `authorization { users = [...] }`. */
interface NatsPermissions {
  publish?: { allow?: readonly string[]; deny?: readonly string[] };
  subscribe?: { allow?: readonly string[]; deny?: readonly string[] };
  allow_responses?: boolean;
}

/** A user the server accepts by NKey; without permissions it may do everything. */
interface NatsUserSpec {
  name: string;
  permissions?: NatsPermissions;
}

interface NatsTestUser {
  readonly name: string;
  /** The user's public key ("U…"), as the server's configuration names it. */
  readonly publicKey: string;
  /** A file holding the seed ("SU…"), mode 0600: what `--nats-nkey` reads. */
  readonly seedFile: string;
}

/** The test PKI, when the server speaks TLS. */
interface NatsTestTls {
  readonly caFile: string;
  /** A client certificate the CA signed, for mutual TLS. */
  readonly clientCertFile: string;
  readonly clientKeyFile: string;
}

export interface StartNatsOptions {
  users?: readonly NatsUserSpec[];
  /** 'server': the server has a certificate; 'mutual': it also asks clients for theirs. */
  tls?: 'server' | 'mutual';
}

export interface NatsTestServer {
  /** `nats://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** The server's temporary folder: configuration, store, keys. Removed by stop(). */
  readonly dir: string;
  /** The PID of the running server process (changes with restart()). */
  readonly pid: number;
  /** A user by the name it was given, or an error naming the known ones. */
  user(name: string): NatsTestUser;
  readonly tls: NatsTestTls | undefined;
  /** Stops the server and removes its folder; safe to call twice. */
  stop(): Promise<void>;
  /** Stops the server (SIGINT) and starts it again on the same port with the same store. */
  restart(): Promise<void>;
}

/** Every server process alive in this test process, killed by PID if it ends without stop(). */
const live = new Map<number, string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  atTestProcessEnd(() => {
    for (const [pid, dir] of live) {
      killQuietly(pid, 'SIGKILL');
      // Retries: a server killed a moment ago may still be writing to its store.
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    }
  });
}

function killQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone already
  }
}

/** Starts a server; see the module comment. */
export async function startNatsServer(options: StartNatsOptions = {}): Promise<NatsTestServer> {
  if (!existsSync(NATS_SERVER)) throw new Error(`nats-server is not installed at ${NATS_SERVER} (apt-get install nats-server)`);
  installExitHook();
  const dir = mkdtempSync(path.join(tmpdir(), 'sb-nats-'));
  try {
    const users = makeUsers(dir, options.users ?? []);
    const tls = options.tls === undefined ? undefined : makePki(path.join(dir, 'tls'));
    const configFor = (port: number): string => serverConfig({ dir, port, users, tls, verifyClients: options.tls === 'mutual' });
    const configFile = path.join(dir, 'server.conf');
    writeFileSync(configFile, configFor(-1));
    let running = await spawnReady(configFile, dir);
    const port = running.port;
    // A restart must come back on the same port: the clients under test reconnect there.
    writeFileSync(configFile, configFor(port));
    let stopped = false;
    return {
      url: `nats://127.0.0.1:${port}`,
      port,
      dir,
      get pid() {
        return running.pid;
      },
      user(name) {
        const found = users.find((u) => u.name === name);
        if (!found) throw new Error(`no NATS test user '${name}' (users: ${users.map((u) => u.name).join(', ') || 'none'})`);
        return found;
      },
      tls,
      async stop() {
        if (stopped) return;
        stopped = true;
        await stopProcess(running);
        rmSync(dir, { recursive: true, force: true });
      },
      async restart() {
        if (stopped) throw new Error('the NATS test server was stopped');
        await stopProcess(running);
        running = await spawnReady(configFile, dir);
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

interface RunningServer {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  readonly exited: Promise<void>;
}

/** Spawns the server and resolves once its log says it listens and is ready. */
async function spawnReady(configFile: string, dir: string): Promise<RunningServer> {
  const child = spawn(NATS_SERVER, ['-c', configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`cannot start ${NATS_SERVER}`);
  live.set(pid, dir);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => live.delete(pid));
  let log = '';
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let listening: number | undefined;
      const timer = setTimeout(() => fail(`nats-server was not ready within ${READY_TIMEOUT_MS} ms`), READY_TIMEOUT_MS);
      const fail = (why: string): void => {
        clearTimeout(timer);
        reject(new Error(`${why}; its log:\n${log}`));
      };
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk: string) => {
        log = (log + chunk).slice(-LOG_TAIL_CHARS);
        const announced = /Listening for client connections on 127\.0\.0\.1:(\d+)/.exec(log);
        if (announced) listening ??= Number(announced[1]);
        if (listening !== undefined && log.includes('Server is ready')) {
          clearTimeout(timer);
          resolve(listening);
        }
      });
      child.once('exit', (code, signal) => fail(`nats-server exited while starting (code ${code}, signal ${signal})`));
    });
    return { child, pid, port, exited };
  } catch (err) {
    await stopProcess({ child, pid, port: 0, exited });
    throw err;
  }
}

/** SIGINT (a clean shutdown, exit 0 on 2.9.10), then SIGKILL by PID if it takes too long. */
async function stopProcess(server: RunningServer): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  killQuietly(server.pid, 'SIGINT');
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), STOP_GRACE_MS)));
  const end = await Promise.race([server.exited.then(() => 'exited' as const), grace]);
  clearTimeout(timer);
  if (end === 'late') {
    killQuietly(server.pid, 'SIGKILL');
    await server.exited;
  }
}

function makeUsers(dir: string, specs: readonly NatsUserSpec[]): (NatsTestUser & { permissions: NatsPermissions | undefined })[] {
  if (specs.length === 0) return [];
  const folder = path.join(dir, 'users');
  mkdirSync(folder, { mode: 0o700 });
  return specs.map((spec) => {
    const keys = createUser();
    const seedFile = path.join(folder, `${spec.name}.nk`);
    writeFileSync(seedFile, `${new TextDecoder().decode(keys.getSeed())}\n`, { mode: 0o600 });
    return { name: spec.name, publicKey: keys.getPublicKey(), seedFile, permissions: spec.permissions };
  });
}

/** A CA, a server certificate for 127.0.0.1 and a client certificate, EC P-256, valid one day. */
function makePki(folder: string): NatsTestTls {
  mkdirSync(folder, { mode: 0o700 });
  const file = (name: string): string => path.join(folder, name);
  const openssl = (...args: string[]): void => {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  };
  const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl('req', '-x509', ...newKey, '-days', '1', '-subj', '/CN=switchboard-test-ca', '-keyout', file('ca.key'), '-out', file('ca.pem'));
  const leaves: [string, string][] = [
    ['server', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n'],
    ['client', 'extendedKeyUsage=clientAuth\n'],
  ];
  for (const [name, extensions] of leaves) {
    writeFileSync(file(`${name}.ext`), extensions);
    openssl('req', ...newKey, '-subj', `/CN=switchboard-test-${name}`, '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`));
    openssl('x509', '-req', '-in', file(`${name}.csr`), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-days', '1', '-extfile', file(`${name}.ext`), '-out', file(`${name}.pem`));
    chmodSync(file(`${name}.key`), 0o600);
  }
  return { caFile: file('ca.pem'), clientCertFile: file('client.pem'), clientKeyFile: file('client.key') };
}

interface ConfigInput {
  dir: string;
  port: number;
  users: readonly (NatsTestUser & { permissions: NatsPermissions | undefined })[];
  tls: NatsTestTls | undefined;
  verifyClients: boolean;
}

/** The server's configuration file: JSON values are valid in nats-server's format. */
function serverConfig({ dir, port, users, tls, verifyClients }: ConfigInput): string {
  const q = (value: unknown): string => JSON.stringify(value);
  const lines = [`host: "127.0.0.1"`, `port: ${port}`, `server_name: "switchboard-test"`, `jetstream { store_dir: ${q(path.join(dir, 'js'))} }`];
  if (tls) {
    const pki = path.dirname(tls.caFile);
    lines.push(`tls { cert_file: ${q(path.join(pki, 'server.pem'))}, key_file: ${q(path.join(pki, 'server.key'))}, ca_file: ${q(tls.caFile)}, verify: ${verifyClients}, timeout: ${HANDSHAKE_TIMEOUT_S} }`);
  }
  if (users.length > 0) {
    const entries = users.map((u) => (u.permissions ? `{ nkey: ${q(u.publicKey)}, permissions: ${q(u.permissions)} }` : `{ nkey: ${q(u.publicKey)} }`));
    lines.push(`authorization { timeout: ${HANDSHAKE_TIMEOUT_S}, users = [\n  ${entries.join('\n  ')}\n] }`);
  }
  return `${lines.join('\n')}\n`;
}
