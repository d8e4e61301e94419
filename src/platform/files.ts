import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync, type Stats } from 'node:fs';
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
export function untrustedFileProblem(file: string): string | undefined {
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
