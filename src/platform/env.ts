import { release } from 'node:os';

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
