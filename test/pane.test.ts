import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import { PaneRegistry, type Pane } from '../src/pane/index.js';
import { RenderScheduler, type Schedulable } from '../src/pane/render-scheduler.js';
import { collectProcessTree, findProcessesByEnv, isProcessRunning } from '../src/platform/index.js';
import { BASH_ARGV, BASH_ENV, expectScreen, openFdCount, sleep, tempDir } from './support/shell.js';
import { until } from './support/processes.js';

let registry: PaneRegistry;
let cleanup: () => void;
let dir: string;

beforeEach(() => {
  registry = new PaneRegistry({ defaults: { killGraceMs: 1_000 } });
  ({ dir, cleanup } = tempDir());
});

afterEach(async () => {
  await registry.close({ graceMs: 500 });
  cleanup();
});

const bash = (extra: { cwd?: string; env?: Record<string, string>; cols?: number; rows?: number; title?: string } = {}): Pane =>
  registry.create({ argv: BASH_ARGV, ...extra, env: { ...BASH_ENV, ...extra.env } });

describe('panes with real shells', () => {
  it('runs a shell with the given cwd, env, title and size', async () => {
    const pane = bash({ cwd: dir, env: { GREETING: 'hi-there' }, title: 'worker', cols: 91, rows: 17 });
    expect(pane.title).toBe('worker');
    expect(pane.alive).toBe(true);
    expect(pane.pid).toBeGreaterThan(0);
    await expectScreen(pane, 'PROMPT$');
    pane.sendText('pwd; echo "$GREETING"; stty size; echo "$TERM $SWITCHBOARD_PANE_ID"', true);
    await expectScreen(pane, `xterm-256color ${pane.id}`);
    const text = pane.readText(100).lines.join('\n');
    expect(text).toContain(dir);
    expect(text).toContain('hi-there');
    expect(text).toContain('17 91');
  });

  it('runs the default shell when no command is given, and a command string through it', async () => {
    const shellPane = registry.create({ cwd: dir });
    // $SHELL, else the login shell from the user database (CI runs without $SHELL).
    expect(path.basename(shellPane.file)).toBe(path.basename(process.env.SHELL ?? userInfo().shell ?? 'sh'));
    const cmdPane = registry.create({ command: 'echo one-$((40+2)); exit 7', cwd: dir });
    expect(await cmdPane.waitForExit()).toEqual({ exitCode: 7, signal: null });
    expect(cmdPane.readText(10).lines).toContain('one-42');
  });

  it("gives the program $PWD for its own cwd, not the daemon's", async () => {
    const pane = registry.create({ argv: ['sh', '-c', 'echo "pwd=$PWD"'], cwd: dir });
    await pane.waitForExit();
    expect(pane.readText(5).lines).toContain(`pwd=${dir}`);
  });

  it('reports the signal that ended a process', async () => {
    const pane = registry.create({ argv: ['bash', '-c', 'kill -TERM $$'] });
    expect(await pane.waitForExit()).toEqual({ exitCode: null, signal: 'SIGTERM' });
    expect(pane.alive).toBe(false);
  });

  it('keeps an exited pane listed with its output until removed', async () => {
    const pane = registry.create({ argv: ['bash', '-c', 'echo last words'] });
    await pane.waitForExit();
    expect(registry.list()).toContain(pane);
    expect(pane.readText(5).lines).toContain('last words');
    expect(() => pane.sendText('x')).toThrow(/has exited/);
    await registry.remove(pane.id);
    expect(registry.find(pane.id)).toBeUndefined();
  });

  it('fails cleanly for a missing program or cwd', () => {
    expect(() => registry.create({ argv: ['no-such-program-xyz'] })).toThrow(/command not found: no-such-program-xyz/);
    expect(() => registry.create({ cwd: path.join(dir, 'missing') })).toThrow(/cwd does not exist/);
    writeFileSync(path.join(dir, 'file'), '');
    expect(() => registry.create({ cwd: path.join(dir, 'file') })).toThrow(/not a directory/);
    expect(() => registry.create({ cols: 0 })).toThrow(/cols must be/);
    expect(() => registry.create({ env: { 'A=B': 'x' } })).toThrow(/invalid environment variable name/);
  });

  it('resizes the terminal the program sees', async () => {
    const pane = bash({ cols: 80, rows: 24 });
    await expectScreen(pane, 'PROMPT$');
    pane.resize(100, 40);
    pane.sendText('stty size', true);
    await expectScreen(pane, '40 100');
    expect(pane.cols).toBe(100);
    expect(pane.rows).toBe(40);
  });

  it('kills the whole process group, every descendant, and processes that daemonized', async () => {
    // sleep 1000: a background job; setsid sleep 1001 after a double fork: a daemon that left the
    // session and was re-parented to init; sleep 1002: the foreground job.
    const pane = registry.create({ argv: ['bash', '-c', 'sleep 1000 & (setsid sleep 1001 &) ; sleep 1002 & wait'] });
    let members: number[] = [];
    let escaped: number[] = [];
    // Until the subshell that forked the daemon is gone and all three sleeps run.
    await until(() => {
      members = [...new Set([...collectProcessTree(pane.pid), ...findProcessesByEnv('SWITCHBOARD_PANE_ID', pane.id)])];
      escaped = findProcessesByEnv('SWITCHBOARD_PANE_ID', pane.id).filter((pid) => !collectProcessTree(pane.pid).includes(pid));
      return members.length === 4 && escaped.length === 1;
    }, 'bash, its two jobs and the daemonized sleep');
    expect(members.length).toBe(4);
    expect(escaped.length).toBe(1);
    await registry.kill(pane.id);
    for (const pid of members) expect(isProcessRunning(pid)).toBe(false);
    expect(pane.alive).toBe(false);
  });

  it('ends what an exited pane left running when it is removed', async () => {
    const pane = registry.create({ argv: ['bash', '-c', '(setsid sleep 1003 &); sleep 0.3; echo started'] });
    await pane.waitForExit();
    let left: number[] = [];
    await until(() => (left = findProcessesByEnv('SWITCHBOARD_PANE_ID', pane.id)).length > 0, 'the daemonized sleep');
    expect(left.length).toBe(1);
    await registry.remove(pane.id);
    for (const pid of left) expect(isProcessRunning(pid)).toBe(false);
  });

  it('sends HUP and TERM first and escalates to KILL when both are ignored', async () => {
    const pane = registry.create({ argv: ['bash', '-c', 'trap "echo got-hup" HUP; trap "echo got-term" TERM; echo ready; while true; do sleep 0.05; done'] });
    await expectScreen(pane, 'ready');
    // Room for bash to run both traps on a busy machine before the KILL.
    const exit = await pane.kill({ graceMs: 2_000 });
    expect(exit.signal).toBe('SIGKILL');
    const lines = pane.readText(10).lines;
    expect(lines).toContain('got-hup');
    expect(lines).toContain('got-term');
  });

  it('takes no input once it is being closed, nor once released (no write reaches a closed descriptor)', async () => {
    const pane = registry.create({ argv: ['bash', '-c', 'trap "" HUP; trap "echo got-term" TERM; echo ready; while true; do sleep 0.05; done'] });
    await expectScreen(pane, 'ready');
    const exit = pane.kill({ graceMs: 2_000 });
    // The program is still there (it ignores TERM for the grace), but the pane is on its way out.
    expect(pane.alive).toBe(true);
    expect(() => pane.sendText('late', true)).toThrow(expect.objectContaining({ code: 'PANE_EXITED', message: expect.stringContaining('is being closed') }));
    await exit;
    const released = registry.create({ argv: ['sleep', '60'] });
    registry.get(released.id).dispose();
    expect(() => released.sendKeys(['Enter'])).toThrow(expect.objectContaining({ code: 'PANE_EXITED' }));
    await released.kill({ graceMs: 500 });
  });

  it('sends only the signal asked for', async () => {
    const pane = registry.create({ argv: ['bash', '-c', 'trap "echo got-int; exit 5" INT; echo ready; while true; do sleep 0.05; done'] });
    await expectScreen(pane, 'ready');
    expect(await pane.kill({ graceMs: 2_000, signal: 'SIGINT' })).toEqual({ exitCode: 5, signal: null });
    expect(pane.readText(10).lines).toContain('got-int');
  });

  /**
   * `cat -v` behind a terminal with echo off (the screen shows only what cat printed, each line
   * once) that asked for bracketed paste, ready once READY shows: the mode was parsed before it.
   */
  const pasteEcho = async (): Promise<Pane> => {
    const pane = registry.create({ argv: ['sh', '-c', 'stty -echo; printf "\\033[?2004hREADY\\n"; exec cat -v'] });
    await expectScreen(pane, /^READY$/m);
    return pane;
  };
  /** Sends `line` after what was typed and waits until cat printed it: everything before it is on screen. */
  const printedUpTo = async (pane: Pane, line: string): Promise<string[]> => {
    pane.sendText(line, true);
    await expectScreen(pane, new RegExp(`^${line}$`, 'm'));
    const lines = pane.snapshot().lines;
    return lines.slice(0, lines.indexOf(line));
  };

  it('brackets a paste only when the program enabled bracketed paste', async () => {
    const pane = await pasteEcho();
    expect(pane.bracketedPaste).toBe(true);
    expect(pane.paste('line one\nline two')).toBe(true);
    pane.sendText('', true);
    expect(pane.paste('plain', 'never')).toBe(false);
    pane.sendText('', true);
    expect((await printedUpTo(pane, 'END')).filter((l) => l !== '')).toEqual(['READY', '^[[200~line one', 'line two^[[201~', 'plain']);
  });

  it('strips paste end markers from pasted text', async () => {
    const pane = await pasteEcho();
    pane.paste('safe\x1b[201~rm -rf ~');
    pane.sendText('', true);
    // Removing one marker can join its neighbours into a new one: that must not escape either.
    pane.paste('\x1b[20\x1b[201~1~; echo PWNED');
    pane.sendText('', true);
    expect((await printedUpTo(pane, 'END')).filter((l) => l !== '')).toEqual(['READY', '^[[200~saferm -rf ~^[[201~', '^[[200~; echo PWNED^[[201~']);
  });

  it('sends named keys in the encoding the program expects', async () => {
    const pane = registry.create({ argv: ['cat', '-v'] });
    await sleep(100);
    pane.sendKeys(['Up', 'Tab', 'F5', 'C-a', 'Enter']);
    // cat -v shows ESC as ^[ and Ctrl-A as ^A; the tab is expanded by the terminal.
    await expectScreen(pane, /^\^\[\[A +\^\[\[15~\^A$/m);
    pane.sendKeys(['Home']);
    pane.sendKeys(['Enter']);
    await expectScreen(pane, /^\^\[\[H$/m);
    pane.sendKeys(['C-c']);
    await pane.waitForExit();
  });

  it('keeps answering while another pane floods output, with bounded buffers', async () => {
    const flood = registry.create({ argv: ['bash', '-c', 'yes "flooding flooding flooding flooding"'] });
    const quiet = bash();
    await expectScreen(quiet, 'PROMPT$');
    while (flood.outputBytes < 2_000_000) await sleep(20);
    let maxPending = 0;
    for (let i = 0; i < 20; i++) {
      quiet.sendText(`echo round-${i}`, true);
      await expectScreen(quiet, `round-${i}`);
      maxPending = Math.max(maxPending, flood.pendingOutputBytes);
    }
    // Reading pauses above 4 MiB of unparsed output; one read more can land on top.
    expect(maxPending).toBeLessThan(5 * 1024 * 1024);
    expect(flood.historyBytes).toBeLessThan(4 * 1024 * 1024);
    await registry.kill(flood.id);
  });

  describe("a program's last output at its exit", () => {
    const BURST = "head -c 136000 /dev/zero | tr '\\0' x; printf END";

    it('is kept when a program writes a burst and exits at once', async () => {
      // Before the master was read out at its release, the stream ended with the last KB unread in
      // about four of five such panes (Linux 6.18).
      const panes = [1, 2, 3].map(() => registry.create({ argv: ['bash', '-c', BURST] }));
      for (const pane of panes) {
        expect(await pane.waitForExit()).toEqual({ exitCode: 0, signal: null });
        expect(pane.outputBytes).toBe(136_003);
      }
    });

    /** Parses nothing until released, so a pane that has paused reading stays paused. */
    class HeldScheduler extends RenderScheduler {
      private readonly held = new Set<Schedulable>();
      private holding = true;
      override schedule(item: Schedulable): void {
        if (this.holding) this.held.add(item);
        else super.schedule(item);
      }
      release(): void {
        this.holding = false;
        for (const item of this.held) super.schedule(item);
        this.held.clear();
      }
    }

    async function withHeldParsing(run: (registry: PaneRegistry) => Promise<void>): Promise<void> {
      const scheduler = new HeldScheduler();
      const held = new PaneRegistry({ scheduler, defaults: { killGraceMs: 1_000 } });
      try {
        await run(held);
      } finally {
        scheduler.release();
        await held.close({ graceMs: 500 });
      }
    }

    it('is kept when reading was paused (unparsed output over the pane\'s share) as the program exited', async () => {
      await withHeldParsing(async (held) => {
        // A little over the smallest share (128 KiB): reading pauses with the last few KB still in
        // the terminal, and node-pty closes it 200 ms after the exit whether read or not.
        const pane = held.create({ argv: ['bash', '-c', BURST] });
        pane.setPendingLimit(128 * 1024);
        expect(await pane.waitForExit()).toEqual({ exitCode: 0, signal: null });
        expect(pane.outputBytes).toBe(136_003);
        expect(pane.readRawText().text.endsWith('xxxEND')).toBe(true);
      });
    });

    it('is read without waiting on a process that escaped the pane and keeps writing', async () => {
      await withHeldParsing(async (held) => {
        // The writer ignores the hangup its session leader's exit sends, so it still writes then.
        const pane = held.create({ argv: ['bash', '-c', "(trap '' HUP; exec yes still-writing) & until [ -e go ]; do sleep 0.02; done; exit 3"], cwd: dir });
        pane.setPendingLimit(128 * 1024);
        await until(() => pane.pendingOutputBytes > 128 * 1024, 'reading paused under the flood');
        writeFileSync(path.join(dir, 'go'), '');
        // The terminal is read only as far as it is not being refilled: the exit still comes.
        expect(await pane.waitForExit()).toEqual({ exitCode: 3, signal: null });
        expect(pane.outputBytes).toBeGreaterThan(128 * 1024);
        await held.remove(pane.id);
      });
    });
  });

  it('releases file descriptors when panes end', async () => {
    // Warm up any lazily opened descriptors first.
    const warm = bash();
    await expectScreen(warm, 'PROMPT$');
    await registry.remove(warm.id);
    await sleep(100);
    const before = openFdCount();
    const panes = Array.from({ length: 8 }, () => bash());
    await Promise.all(panes.map((p) => expectScreen(p, 'PROMPT$')));
    expect(openFdCount()).toBeGreaterThan(before);
    await Promise.all(panes.map((p) => registry.remove(p.id)));
    await until(() => openFdCount() <= before, 'the panes\' descriptors to be closed');
    expect(openFdCount()).toBeLessThanOrEqual(before);
  });
});
