import { release } from 'node:os';
import path from 'node:path';

const isWindows = process.platform === 'win32';

/**
 * Sets `key` in an environment object. Windows treats names case-insensitively (PATH and Path are
 * one variable), so there an existing spelling is replaced instead of a second one added.
 */
export function setEnvVar(env: Record<string, string>, key: string, value: string): void {
  if (isWindows) {
    const lower = key.toLowerCase();
    for (const existing of Object.keys(env)) {
      if (existing !== key && existing.toLowerCase() === lower) Reflect.deleteProperty(env, existing);
    }
  }
  env[key] = value;
}

/** Terminal-emulator options that depend on the OS: on Windows, tell xterm that ConPTY redraws on resize. */
export function terminalEmulatorOptions(): { windowsPty?: { backend: 'conpty'; buildNumber: number } } {
  if (!isWindows) return {};
  const build = Number(release().split('.')[2] ?? 0);
  return { windowsPty: { backend: 'conpty', buildNumber: build } };
}

/**
 * True when the variable `name` is matched by `pattern`: an exact name, or a prefix ending in `*`
 * ("ANTHROPIC_*"). Case-insensitive on Windows, where variable names are.
 */
export function envNameMatches(name: string, pattern: string): boolean {
  const [n, p] = isWindows ? [name.toUpperCase(), pattern.toUpperCase()] : [name, pattern];
  return p.endsWith('*') ? n.startsWith(p.slice(0, -1)) : n === p;
}

/**
 * The variables that make `home` a program's home directory: HOME everywhere, and on Windows also
 * USERPROFILE and the AppData folders, where CLIs there keep their configuration.
 */
export function isolatedHomeEnv(home: string): Record<string, string> {
  if (!isWindows) return { HOME: home };
  return { HOME: home, USERPROFILE: home, APPDATA: path.join(home, 'AppData', 'Roaming'), LOCALAPPDATA: path.join(home, 'AppData', 'Local') };
}

/**
 * The variables that make `dir` a program's temporary folder: TMPDIR is what POSIX programs read
 * (Node's os.tmpdir(), Rust's env::temp_dir(), Go's os.TempDir()), TMP and TEMP what Windows
 * programs read; all three are set everywhere, since a program ported from the other side reads
 * the other side's names.
 */
export function tempFolderEnv(dir: string): Record<string, string> {
  return { TMPDIR: dir, TMP: dir, TEMP: dir };
}

/**
 * A child's environment: `base` less every variable an `unset` pattern matches, then each layer in
 * order (a later layer wins). Names compare as the OS compares them.
 */
export function composeEnv(base: NodeJS.ProcessEnv, unset: readonly string[], layers: readonly (Record<string, string> | undefined)[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(base)) {
    if (value !== undefined && !unset.some((pattern) => envNameMatches(key, pattern))) env[key] = value;
  }
  for (const layer of layers) for (const [key, value] of Object.entries(layer ?? {})) setEnvVar(env, key, value);
  return env;
}
