import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { homedir, tmpdir, userInfo } from 'node:os';
import path from 'node:path';

const isWindows = process.platform === 'win32';

/** Unix socket paths longer than this fail to bind on some systems (macOS allows 104 bytes). */
const MAX_SOCKET_PATH = 100;

/** The directory holding the daemon's runtime file and socket: $SWITCHBOARD_HOME or ~/.switchboard. */
export function switchboardHome(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.SWITCHBOARD_HOME;
  if (fromEnv && fromEnv.trim() !== '') return path.resolve(fromEnv);
  return path.join(homedir(), '.switchboard');
}

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

/**
 * Where the daemon's local socket lives: a Unix socket in `home`, or a named pipe on Windows.
 * Undefined when `home` is too deep for a socket path: the socket then goes in a fresh private
 * folder (privateSocketDir), and clients learn where from the runtime file.
 */
export function localSocketPath(home: string): string | undefined {
  if (isWindows) {
    return `\\\\.\\pipe\\switchboard-${safeUserName()}-${shortHash(home)}`;
  }
  const inHome = path.join(home, 'switchboard.sock');
  return Buffer.byteLength(inHome) <= MAX_SOCKET_PATH ? inHome : undefined;
}

/**
 * A new folder for a socket under the temp dir, with a name no one can guess (mkdtemp: created
 * atomically, mode 0700), so another user can neither squat it before the daemon starts nor
 * reach into it. The daemon removes it when it stops.
 */
export function privateSocketDir(): string {
  return mkdtempSync(path.join(tmpdir(), `switchboard-${process.getuid?.() ?? 0}-`));
}

/** True when the local transport is a filesystem socket that has to be created and removed. */
export function isFilesystemSocket(socketPath: string): boolean {
  return !socketPath.startsWith('\\\\.\\pipe\\');
}

function safeUserName(): string {
  try {
    return userInfo().username.replace(/[^A-Za-z0-9_.-]/g, '_');
  } catch {
    return 'user';
  }
}

/** The folder under a Switchboard home that holds the agents' temporary folders. */
const AGENT_TEMP_FOLDER = 'tmp';

/**
 * Longest root that leaves room for what CLIs put in a temporary folder: Claude Code binds its
 * sockets at `<folder>/cc-socks/<pid>.sock`, about 40 bytes more, and macOS refuses a Unix socket
 * path over 104 bytes.
 */
const MAX_ROOT_BYTES = 60;

/**
 * Where the private temporary folders of agents started for `home` live (default: the user's
 * Switchboard home): `<home>/tmp`, or, for a home too deep for the sockets CLIs make there, a
 * private folder of the home's own in the system's temporary folder.
 */
export function agentTempRoot(home: string = switchboardHome()): string {
  const inHome = path.join(home, AGENT_TEMP_FOLDER);
  if (Buffer.byteLength(inHome) <= MAX_ROOT_BYTES) return inHome;
  const id = createHash('sha256').update(path.resolve(home)).digest('hex').slice(0, 12);
  return path.join(tmpdir(), `switchboard-${process.getuid?.() ?? 0}-${id}`);
}
