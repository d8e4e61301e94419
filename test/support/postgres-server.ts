/**
 * A real PostgreSQL server for a test file (Debian's PostgreSQL, the newest version installed, by
 * scripts/install-debian-packages.ts): `initdb` into a fresh temporary folder, `postgres` on a free
 * loopback port with its socket in that folder, ready once a real connection works; `stop` ends it
 * by its pid (SIGINT, PostgreSQL's fast shutdown; SIGKILL if it hangs) and waits for it to exit,
 * then removes the folder, so nothing is left: no process, socket or file. A start that fails
 * stops what it started the same way.
 *
 * PostgreSQL refuses to run as root. Tests here may run as root, so as root both programs run in a
 * user namespace of their own (`unshare --user --map-user`), where this process's uid is the
 * `postgres` user's (or 1): not root to PostgreSQL, yet the owner of the folders the test run made
 * (the run's temporary folder is 0700, so another real user such as `postgres` could not even reach
 * it), and every file it writes is the test's own to remove. No setuid program, no change to any
 * folder's owner or mode.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { until } from './processes.js';

/** Where Debian puts each PostgreSQL major version's programs. */
const POSTGRES_LIB = '/usr/lib/postgresql';
const SUPERUSER = 'switchboard';
/** Times a start is tried again when the free port found was taken before the server bound it. */
const PORT_ATTEMPTS = 5;
/** How long a fast shutdown may take before the server is killed: a bound for a hung server, not a wait. */
const STOP_MS = 30_000;

export interface PostgresServer {
  readonly port: number;
  /** The postmaster's pid: what `stop` signals. */
  readonly pid: number;
  /** The folder holding the data, the socket, the password file and the server's log. */
  readonly dir: string;
  /** The superuser's password (scram-sha-256 over TCP): a test can check it never shows. */
  readonly password: string;
  /** The URL of database `name` on this server, with the superuser's password. */
  url(name: string): string;
  /** A new, empty database (its URL). */
  createDatabase(): Promise<string>;
  /** Stops the server (SIGINT, then waits for its exit) and removes its folder. */
  stop(): Promise<void>;
}

/** The newest installed version's programs folder. */
function postgresBin(): string {
  const versions = existsSync(POSTGRES_LIB) ? readdirSync(POSTGRES_LIB).filter((v) => existsSync(path.join(POSTGRES_LIB, v, 'bin', 'postgres'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (newest === undefined) throw new Error(`PostgreSQL is not installed (nothing in ${POSTGRES_LIB}): run scripts/install-debian-packages.ts`);
  return path.join(POSTGRES_LIB, newest, 'bin');
}

/** How to run a PostgreSQL program: as is, or, as root, in a user namespace where this process is not root. */
function asNonRoot(program: string, args: string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [program, args];
  return ['unshare', ['--user', `--map-user=${postgresUid()}`, `--map-group=${postgresUid()}`, '--', program, ...args]];
}

/** The `postgres` system user's uid, when there is one (only a name inside the namespace), else 1. */
function postgresUid(): number {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  const uid = Number(line?.split(':')[2]);
  return Number.isInteger(uid) && uid > 0 ? uid : 1;
}

/** A loopback port nothing listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Starts a server in a new temporary folder (initdb, then postgres), ready for connections. */
export async function startPostgres(): Promise<PostgresServer> {
  const bin = postgresBin();
  const dir = mkdtempSync(path.join(tmpdir(), 'sb-pg-'));
  let started: { child: ChildProcess; exited: Promise<number | null> } | undefined;
  try {
    const password = randomBytes(12).toString('hex');
    writeFileSync(path.join(dir, 'pwfile'), `${password}\n`, { mode: 0o600 });
    const data = path.join(dir, 'data');
    const [initdb, initArgs] = asNonRoot(path.join(bin, 'initdb'), ['-D', data, '-U', SUPERUSER, `--pwfile=${path.join(dir, 'pwfile')}`, '--auth-host=scram-sha-256', '--auth-local=trust', '-E', 'UTF8', '--no-locale', '--no-sync']);
    const made = spawnSync(initdb, initArgs, { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`initdb failed (${made.status}): ${made.stderr}`);
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const child = launch(bin, dir, data, port);
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      let gone: number | null | undefined;
      void exited.then((code) => {
        gone = code;
      });
      started = { child, exited };
      const url = (name: string): string => `postgres://${SUPERUSER}:${password}@127.0.0.1:${port}/${name}`;
      await until(async () => gone !== undefined || (await accepts(url('postgres'))), 'PostgreSQL to accept connections', 60_000);
      if (gone !== undefined) {
        const log = readFileSync(path.join(dir, 'server.log'), 'utf8');
        // Someone took the port between freePort and the bind: another port.
        if (attempt < PORT_ATTEMPTS && /could not bind|Address already in use/.test(log)) continue;
        throw new Error(`postgres exited (${gone}) before accepting connections: ${log}`);
      }
      return server(dir, port, password, url, child, exited);
    }
  } catch (err) {
    // A server that started but never answered is stopped by its pid before its folder goes.
    if (started) await stopServer(started.child, started.exited);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Stops the server `child` is (its postmaster: `unshare` execs it, keeping the pid): SIGINT, the
 * fast shutdown that ends its backends and waits for them; SIGKILL only if it has not exited
 * STOP_MS later (its backends then see the postmaster gone and exit on their own).
 */
async function stopServer(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  process.kill(child.pid, 'SIGINT');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), STOP_MS);
  });
  const outcome = await Promise.race([exited, late]);
  clearTimeout(timer);
  if (outcome === 'late') {
    process.kill(child.pid, 'SIGKILL');
    await exited;
  }
}

function launch(bin: string, dir: string, data: string, port: number): ChildProcess {
  const log = openSync(path.join(dir, 'server.log'), 'a');
  // fsync off: a test's database need not survive a power cut, and the run goes faster.
  const [program, args] = asNonRoot(path.join(bin, 'postgres'), ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=60']);
  try {
    return spawn(program, args, { stdio: ['ignore', log, log] });
  } finally {
    closeSync(log);
  }
}

/** True once a real connection to `url` works. */
async function accepts(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function server(dir: string, port: number, password: string, url: (name: string) => string, child: ChildProcess, exited: Promise<number | null>): PostgresServer {
  let databases = 0;
  let stopping: Promise<void> | undefined;
  return {
    port,
    pid: child.pid ?? -1,
    dir,
    password,
    url,
    async createDatabase() {
      const name = `ledger_${++databases}`;
      const admin = new pg.Client({ connectionString: url('postgres') });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${name}`);
      } finally {
        await admin.end();
      }
      return url(name);
    },
    stop() {
      stopping ??= (async () => {
        await stopServer(child, exited);
        rmSync(dir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}
