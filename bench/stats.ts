import { readFileSync } from 'node:fs';
/** Percentile of an already sorted sample (nearest rank). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

/** Runs `fn` `warmup` times unmeasured, then `n` times; returns sorted durations in ms. */
export async function sample(n: number, warmup: number, fn: (i: number) => Promise<void>): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn(-1 - i);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}

/** A memory field of /proc/PID/status (given in kB), in MiB (Linux). */
async function statusMiB(pid: number, field: 'VmRSS' | 'RssAnon'): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
  if (!match) throw new Error(`no ${field} for ${pid}`);
  return Number(match[1]) / 1024;
}

/** Resident set size of a process in MiB (Linux). */
export function rssMiB(pid: number): Promise<number> {
  return statusMiB(pid, 'VmRSS');
}

/**
 * The private part of a process's resident set (`RssAnon`): its heap and stacks, without the pages
 * of its program and libraries mapped from disk, which every process of the same program shares.
 */
export function privateMiB(pid: number): Promise<number> {
  return statusMiB(pid, 'RssAnon');
}

/** utime + stime of a process in ms (Linux: /proc/PID/stat, clock ticks of 10 ms). */
export function procCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
