/**
 * Defect 1 of issue 11: every pane held every earlier pane's terminal (node-pty leaves the PTY
 * master inheritable), so a program in one pane could type into another. Each pane's master is
 * close-on-exec now: later panes and every other child of the daemon start without it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTestDaemon } from '../support/daemon.js';
import { BASH_ARGV, BASH_ENV, expectScreen } from '../support/shell.js';
import { untilProgram } from '../support/processes.js';

const t = useTestDaemon();

/** The PTY masters (/dev/ptmx, /dev/pts/ptmx) a process holds. */
function ptyMasters(pid: number | 'self'): number {
  let count = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (/ptmx$/.test(readlinkSync(`/proc/${pid}/fd/${fd}`))) count++;
    } catch {
      // closed meanwhile
    }
  }
  return count;
}

describe.runIf(process.platform === 'linux')('PTY descriptors', () => {
  it('gives no pane a descriptor of another pane: a program in pane B cannot type into pane A', async () => {
    const { panes } = t.daemon;
    const victim = panes.create({ argv: [...BASH_ARGV], env: BASH_ENV, cwd: t.work });
    await expectScreen(victim, 'PROMPT$');
    const others = Array.from({ length: 30 }, () => panes.create({ argv: ['sleep', '60'], cwd: t.work }));
    const marker = path.join(t.work, 'typed-through-a-leaked-descriptor');
    // What the probe did: write a command into every terminal master it inherited.
    const attack = `n=0; for f in /proc/$$/fd/*; do case "$(readlink "$f")" in *ptmx) printf 'touch ${marker}\\r' >&"\${f##*/}" && n=$((n+1));; esac; done; echo "masters written: $n"; sleep 60`;
    const attacker = panes.create({ argv: ['bash', '-c', attack], cwd: t.work });
    await expectScreen(attacker, /masters written: \d+/);
    expect(attacker.screenLines().join('\n')).toContain('masters written: 0');
    // The 32nd pane's own process: no master at all (it was 31 before the fix).
    expect(ptyMasters(attacker.pid)).toBe(0);
    // Each `sleep` read once it runs: before its exec, the forked child still holds the masters
    // close-on-exec drops at exec.
    for (const other of others) {
      await untilProgram(other.pid, 'sleep');
      expect(ptyMasters(other.pid)).toBe(0);
    }
    // Had anything reached the victim's shell, it would have run before this line.
    victim.sendText('echo sync-$((6*7))', true);
    await expectScreen(victim, 'sync-42');
    expect(existsSync(marker)).toBe(false);
    await Promise.all([victim, attacker, ...others].map((p) => panes.remove(p.id, { graceMs: 500 })));
  });

  it('gives no other child of the daemon a pane terminal either', async () => {
    const pane = t.daemon.panes.create({ argv: ['sleep', '60'], cwd: t.work });
    // This test's process is the daemon's: a child it starts is a child of the daemon.
    const listing = execFileSync('ls', ['-l', '/proc/self/fd'], { encoding: 'utf8' });
    expect(listing).not.toMatch(/ptmx/);
    await t.daemon.panes.remove(pane.id, { graceMs: 500 });
  });

  it('releases a removed pane\u2019s terminal while a later pane lives', async () => {
    const { panes } = t.daemon;
    const before = ptyMasters('self');
    const removed = panes.create({ argv: ['sleep', '60'], cwd: t.work });
    const later = panes.create({ argv: ['sleep', '60'], cwd: t.work });
    expect(ptyMasters('self')).toBe(before + 2);
    await panes.remove(removed.id, { graceMs: 500 });
    expect(ptyMasters('self')).toBe(before + 1);
    // Read once `sleep` runs: until its exec the forked child still holds the masters that
    // close-on-exec drops (CI once looked in between).
    await untilProgram(later.pid, 'sleep');
    expect(ptyMasters(later.pid)).toBe(0);
    await panes.remove(later.id, { graceMs: 500 });
    expect(ptyMasters('self')).toBe(before);
  });
});
