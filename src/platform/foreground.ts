import { readFileSync, readlinkSync } from 'node:fs';

/** The process in the foreground of a terminal: what `ps` calls its name, and where it runs. */
export interface ForegroundProcess {
  pid: number;
  name: string;
  cwd: string | undefined;
}

const isLinux = process.platform === 'linux';

/**
 * The foreground process of the terminal whose session leader is `pid` (what tmux shows as
 * pane_current_command and pane_current_path), read from /proc on Linux: the leader's stat names
 * the terminal's foreground process group. Elsewhere undefined (callers fall back to the leader's
 * own program), so no process is started to find out.
 */
export function foregroundProcess(pid: number): ForegroundProcess | undefined {
  if (!isLinux) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // The name is in parentheses and may hold spaces or parentheses: fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const tpgid = Number(fields[5]);
    const target = Number.isInteger(tpgid) && tpgid > 0 ? tpgid : pid;
    return { pid: target, name: processName(target) ?? processName(pid) ?? '', cwd: processCwd(target) ?? processCwd(pid) };
  } catch {
    return undefined;
  }
}

function processName(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'latin1').replace(/\n$/, '');
  } catch {
    return undefined;
  }
}

function processCwd(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return undefined;
  }
}
