import { chmodSync, closeSync, constants, existsSync, fstatSync, linkSync, lstatSync, mkdirSync, openSync, readdirSync, readSync, renameSync, rmSync, writeFileSync, type Stats } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

const isWindows = process.platform === 'win32';

/** Files Switchboard itself keeps in its directories. */
const OWN_FILES = /^(daemon\.json|daemon\.log|switchboard\.sock|sb\.sock|\..+\.tmp|agents\.(json|ya?ml)|ledger\.db(-wal|-shm|-journal)?|policy\.ya?ml)$/;

/**
 * Makes sure `dir` exists as a directory only its owner can enter (0700). Refuses a symlink or a
 * directory owned by someone else, since the token and socket inside it must stay private. An
 * existing directory that others can enter is tightened only if it holds nothing but Switchboard's
 * own files; otherwise (say SWITCHBOARD_HOME points at $HOME) it is refused rather than changed.
 */
export function ensurePrivateDir(dir: string): void {
  const existed = existsSync(dir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (isWindows) return;
  const stat = lstatSync(dir);
  if (!stat.isDirectory()) throw new Error(`${dir} is not a directory`);
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) throw new Error(`${dir} belongs to another user (uid ${stat.uid})`);
  if ((stat.mode & 0o077) === 0) return;
  if (existed) {
    const foreign = readdirSync(dir).filter((name) => !OWN_FILES.test(name));
    if (foreign.length > 0) {
      const mode = (stat.mode & 0o777).toString(8);
      throw new Error(`refusing to use ${dir}: other users can enter it (mode ${mode}) and it holds files that are not Switchboard's; use a private directory`);
    }
  }
  chmodSync(dir, 0o700);
}

/**
 * Makes `file` with `data`, mode 0600, only if there is no file of that name: written whole under
 * a temporary name, then linked into place, so no reader ever sees it half written and an
 * existing file is never replaced. False when one was there already. The folder is not made or
 * changed: it is the caller's to trust.
 */
export function createPrivateFileExclusive(file: string, data: string): boolean {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  writeFileSync(tmp, data, { mode: 0o600, flag: 'wx' });
  try {
    if (!isWindows) chmodSync(tmp, 0o600);
    linkSync(tmp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** Writes `data` to `file` with mode 0600, atomically (write to a temporary name, then rename). */
export function writePrivateFileAtomic(file: string, data: string): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    writeFileSync(tmp, data, { mode: 0o600, flag: 'wx' });
    if (!isWindows) chmodSync(tmp, 0o600);
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** Sets a filesystem socket to 0600 so only its owner can connect. */
export function restrictSocket(socketPath: string): void {
  if (!isWindows) chmodSync(socketPath, 0o600);
}

/**
 * Why `file` (and the folder holding it) cannot be trusted to say something only its owner may say
 * (where the daemon is, and its token), or undefined when it can: it must be a regular file, not a
 * symbolic link, owned by this user and writable by nobody else, in a folder owned by this user
 * that nobody else can write to. The checks the daemon makes of its own folder, made by a reader.
 * Windows has no such modes: nothing to check there.
 */
function untrustedFileProblem(file: string): string | undefined {
  if (isWindows) return undefined;
  const uid = process.getuid?.();
  const describe = (what: string, stat: Stats): string | undefined => {
    if (uid !== undefined && stat.uid !== uid) return `${what} belongs to another user (uid ${stat.uid})`;
    if ((stat.mode & 0o022) !== 0) return `${what} can be written by other users (mode ${(stat.mode & 0o777).toString(8).padStart(3, '0')})`;
    return undefined;
  };
  let stat: Stats;
  try {
    stat = lstatSync(file);
  } catch {
    return undefined; // no file: nothing to trust or distrust
  }
  if (stat.isSymbolicLink()) return `${file} is a symbolic link`;
  if (!stat.isFile()) return `${file} is not a regular file`;
  const dir = path.dirname(file);
  let dirStat: Stats;
  try {
    dirStat = lstatSync(dir);
  } catch {
    return undefined;
  }
  return describe(file, stat) ?? describe(dir, dirStat);
}

/** What a reader found of a file only its owner may write: the trust rule every reader follows. */
export type PrivateFileRead =
  | { kind: 'missing' }
  | { kind: 'refused'; problem: string }
  /** `exposed`: why others can read it (the file is used, but what it holds is no longer secret). */
  | { kind: 'read'; text: string; exposed?: string };

const modeOf = (stat: Stats): string => (stat.mode & 0o777).toString(8).padStart(3, '0');

/**
 * Reads `file` under the trust rule for a file that says where the daemon is and holds its owner's
 * token (the runtime file): refused when it is a symbolic link, not a regular file, not this
 * user's, writable by others, larger than `maxBytes`, or in a folder that is not this user's or
 * that others can write (untrustedFileProblem); read, but `exposed`, when others can read it.
 * The checks are made on the descriptor that is read (opened without following a link), so the
 * file cannot be swapped between check and read. Windows has no such modes: read as it is.
 */
export function readPrivateFile(file: string, maxBytes: number): PrivateFileRead {
  const problem = untrustedFileProblem(file);
  if (problem !== undefined) return { kind: 'refused', problem };
  let fd: number;
  try {
    fd = openSync(file, isWindows ? 'r' : constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
    if (code === 'ELOOP') return { kind: 'refused', problem: `${file} is a symbolic link` };
    return { kind: 'refused', problem: `${file} cannot be read (${code ?? String(err)})` };
  }
  try {
    const stat = fstatSync(fd);
    const uid = process.getuid?.();
    if (!stat.isFile()) return { kind: 'refused', problem: `${file} is not a regular file` };
    if (!isWindows && uid !== undefined && stat.uid !== uid) return { kind: 'refused', problem: `${file} belongs to another user (uid ${stat.uid})` };
    if (!isWindows && (stat.mode & 0o022) !== 0) return { kind: 'refused', problem: `${file} can be written by other users (mode ${modeOf(stat)})` };
    if (stat.size > maxBytes) return { kind: 'refused', problem: `${file} is larger than ${maxBytes} bytes` };
    const buffer = Buffer.alloc(stat.size);
    let length = 0;
    while (length < buffer.length) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    const text = buffer.subarray(0, length).toString('utf8');
    const exposed = !isWindows && (stat.mode & 0o044) !== 0 ? `${file} can be read by other users (mode ${modeOf(stat)})` : undefined;
    return exposed === undefined ? { kind: 'read', text } : { kind: 'read', text, exposed };
  } finally {
    closeSync(fd);
  }
}
