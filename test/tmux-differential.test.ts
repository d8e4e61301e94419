/**
 * The tmux front end against real tmux 3.3 (Debian's, on a private -S socket), command shape by
 * command shape as CCB uses them (shared/reference/tmux-compat.md) and their error cases: the same
 * command lines, the same environment, and the same stdout, stderr and exit code once socket
 * paths, dates and pids are normalized.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type SwitchboardClient } from '../src/client/index.js';
import { isProcessRunning } from '../src/platform/index.js';
import { useTestDaemon } from './support/daemon.js';
import { TmuxPair, realTmuxVersion } from './support/tmux-pair.js';
import { until } from './support/processes.js';

const version = realTmuxVersion();
const t = useTestDaemon();
let client: SwitchboardClient;
let env: Record<string, string>;

beforeAll(async () => {
  client = await connect({ home: t.home, env: {} });
  env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: t.work, SHELL: '/bin/sh', LANG: 'C.UTF-8', TMUX_TMPDIR: t.work, PS1: '$ ' };
});
afterAll(() => client.close());

/** A fresh pair of servers for one test, stopped after it. */
async function withPair(name: string, body: (pair: TmuxPair) => Promise<void>): Promise<void> {
  const pair = new TmuxPair(client, t.work, env, name);
  try {
    await body(pair);
  } finally {
    const made = (await client.list()).panes.filter((p) => p.tmux !== undefined);
    await pair.stop();
    // kill-server removes every pane it made, and their programs are gone.
    expect((await client.list()).panes.filter((p) => p.tmux !== undefined)).toEqual([]);
    for (const pane of made) if (pane.pid !== undefined) expect(isProcessRunning(pane.pid)).toBe(false);
  }
}

const CCB_POLL = ['#{pane_id}', '#{pane_dead}', '#{pane_title}', '[pid:#{pane_pid}]', '#{pane_in_mode}', '#{pane_width}', '#{pane_height}', '#{window_zoomed_flag}', '#{session_name}', '#{window_id}', '#{window_name}', '#{@ccb_agent}', '#{@ccb_project_id}', '#{@ccb_role}', '#{@ccb_slot}', '#{@ccb_managed_by}', '#{@ccb_namespace_epoch}', '#{@ccb_session_id}', '#{@ccb_window}'].join('\t');
const LIST_FORMAT = '#{pane_id} #{pane_index} #{pane_active} #{pane_left} #{pane_top} #{pane_width}x#{pane_height} #{window_width} #{window_layout} #{history_size} [#{?pane_active,#{pane_id},}]';
const SH = (script: string): string => `sh -c '${script}'`;


/**
 * capture-pane where real tmux never read a dead pane's status. Real tmux then leaves the pane as the
 * program left it; ours knows the status and does what tmux does once it knows: a line feed at the
 * bottom row (the screen scrolls up by one, its top row into the history) and "Pane is dead" on that
 * row. So ours must be real tmux's rows plus that line (less the top row when only the screen is
 * captured), with `extraHistory` first: rows an earlier such death scrolled into ours' history only.
 * Returns real tmux's rows.
 */
async function sameCaptureAfterUnreadDeath(pair: TmuxPair, argv: string[], unread: { status?: number; extraHistory?: string[] }): Promise<string[]> {
  const ours = pair.normalize(await pair.ours(argv), 'ours');
  const real = pair.normalize(await pair.real(argv), 'real');
  const rows = real.stdout.split('\n').slice(0, -1);
  const withHistory = argv.includes('-S');
  let expected = rows;
  if (unread.status !== undefined) expected = [...(withHistory ? rows : rows.slice(1)), `Pane is dead (status ${unread.status}, DATE)`];
  if (withHistory) expected = [...(unread.extraHistory ?? []), ...expected];
  expect(ours, `real tmux: ${JSON.stringify(real.stdout)}`).toEqual({ ...real, stdout: `${expected.join('\n')}\n` });
  return rows;
}

describe.skipIf(version === undefined)(`the tmux front end answers as ${version ?? 'tmux'} does`, () => {
  it('without a server: has-session, list-panes -a and display fail with tmux error messages; start-server alone ends at once', async () => {
    await withPair('noserver', async (pair) => {
      await pair.same(['has-session', '-t', 'ccb-x']);
      await pair.same(['list-panes', '-a', '-F', '#{pane_id}']);
      await pair.same(['display-message', '-p', '#{pane_id}']);
      await pair.same(['start-server']);
      // A server with no session exits; real tmux's takes a moment, so wait for it to be gone.
      await pair.until(['has-session', '-t', 'ccb-x'], () => true);
      await until(async () => (await pair.real(['has-session', '-t', 'ccb-x'])).stderr.includes('no server running'), 'the real tmux server to be gone');
      await pair.same(['has-session', '-t', 'ccb-x']);
      await pair.same(['kill-server']);
    });
  });

  it('new-session -d -x -y -s -n -c CMD, has-session (exact, prefix, missing), the CCB poll format, user options at each scope', async () => {
    await withPair('session', async (pair) => {
      await pair.same(['new-session', '-d', '-x', '160', '-y', '48', '-s', 'ccb-proj-1234abcd', '-n', 'main', '-c', pair.dir, 'sleep 1000']);
      await pair.same(['has-session', '-t', 'ccb-proj-1234abcd']);
      await pair.same(['has-session', '-t', 'ccb-proj']);
      await pair.same(['has-session', '-t', '=ccb-proj']);
      await pair.same(['has-session', '-t', 'nosuch']);
      await pair.same(['new-session', '-d', '-s', 'ccb-proj-1234abcd', 'sleep 1000']);
      await pair.same(['set-option', '-p', '-t', '%0', '@ccb_agent', 'codex']);
      await pair.same(['set-option', '-t', 'ccb-proj-1234abcd', '@ccb_project_id', 'proj 1']);
      await pair.same(['set-option', '-g', '@ccb_managed_by', 'ccb']);
      await pair.same(['set-window-option', '-t', 'ccb-proj-1234abcd:main', '@ccb_window', 'main']);
      await pair.same(['display-message', '-p', '-t', '%0', CCB_POLL]);
      await pair.same(['display-message', '-p', '-t', 'ccb-proj-1234abcd:main', '#{session_name}:#{window_index}.#{pane_index} #{pane_start_command} #{pane_current_path}']);
      await pair.same(['display-message', '-p', '-t', '%9', CCB_POLL]);
      await pair.same(['show-option', '-qv', '-t', 'ccb-proj-1234abcd', '@ccb_project_id']);
      await pair.same(['show-option', '-qv', '-t', 'ccb-proj-1234abcd', '@ccb_missing']);
      await pair.same(['show-option', '-v', '-t', 'ccb-proj-1234abcd', '@ccb_missing']);
      await pair.same(['show-option', '-gqv', 'default-shell']);
      await pair.same(['show-options', '-t', 'ccb-proj-1234abcd']);
      await pair.same(['show-options', '-w', '-t', 'ccb-proj-1234abcd:main']);
      await pair.same(['show-options', '-p', '-t', '%0']);
      await pair.same(['set-option', '-u', '-p', '-t', '%0', '@ccb_agent']);
      await pair.same(['display-message', '-p', '-t', '%0', '[#{@ccb_agent}] #{?@ccb_agent,set,unset} #{?pane_active,#{pane_id},} #{==:#{window_name},main}']);
      await pair.same(['list-sessions', '-F', '#{session_name} #{session_windows} #{session_attached} #{session_id}']);
      await pair.same(['list-sessions']);
    });
  });

  it('split-window -v|-h -l N -t %N [-c DIR] -P -F, list-panes [-a] [-t S[:W]] -F, list-windows -t S -F, kill-pane', async () => {
    await withPair('split', async (pair) => {
      await pair.same(['new-session', '-d', '-x', '160', '-y', '48', '-s', 'ccb', '-n', 'main', 'sleep 1000']);
      await pair.same(['split-window', '-v', '-l', '12', '-t', '%0', '-P', '-F', '#{pane_id}', 'sleep 1000']);
      await pair.same(['split-window', '-h', '-l', '40', '-t', '%0', '-c', pair.dir, '-P', '-F', '#{pane_id} #{pane_index} #{pane_width}x#{pane_height}', 'sleep 1000']);
      await pair.same(['split-window', '-h', '-t', '%1', '-d', '-P', 'sleep 1000']);
      await pair.same(['split-window', '-v', '-l', '30%', '-t', '%2', '-P', '-F', '#{pane_id} #{pane_height}', 'sleep 1000']);
      await pair.same(['split-window', '-v', '-l', 'abc', '-t', '%2', 'sleep 1000']);
      await pair.same(['split-window', '-t', '%99', 'sleep 1000']);
      await pair.same(['list-panes', '-t', 'ccb', '-F', LIST_FORMAT]);
      await pair.same(['list-panes', '-t', 'ccb:main', '-F', LIST_FORMAT]);
      await pair.same(['list-panes', '-a', '-F', LIST_FORMAT]);
      await pair.same(['list-panes', '-t', 'nosuch', '-F', '#{pane_id}']);
      await pair.same(['list-panes', '-t', 'ccb:7', '-F', '#{pane_id}']);
      await pair.same(['list-panes']);
      await pair.same(['list-panes', '-a']);
      await pair.same(['list-windows', '-t', 'ccb', '-F', '#{window_id}\t#{window_name}\t#{window_active}']);
      await pair.same(['list-windows', '-t', 'ccb']);
      await pair.same(['kill-pane', '-t', '%1']);
      await pair.same(['list-panes', '-t', 'ccb', '-F', LIST_FORMAT]);
      await pair.same(['kill-pane', '-t', '%1']);
      await pair.same(['resize-pane', '-t', '%0', '-x', '50']);
      await pair.same(['list-panes', '-t', 'ccb', '-F', LIST_FORMAT]);
      await pair.same(['kill-pane', '-a', '-t', '%0']);
      await pair.same(['list-panes', '-t', 'ccb', '-F', LIST_FORMAT]);
    });
  });

  it('new-window -d -t S -n NAME -c DIR CMD, select-window -t S:W, rename, kill-window', async () => {
    await withPair('window', async (pair) => {
      await pair.same(['new-session', '-d', '-s', 'ccb', '-n', 'main', 'sleep 1000']);
      await pair.same(['new-window', '-d', '-t', 'ccb', '-n', 'ccb', '-c', pair.dir, 'sleep 1000']);
      await pair.same(['new-window', '-d', '-t', 'ccb', '-n', '__ccb_ctl', '-P', '-F', '#{window_index} #{pane_id}', 'sleep 1000']);
      await pair.same(['new-window', '-t', 'ccb:0', 'sleep 1000']);
      await pair.same(['list-windows', '-t', 'ccb', '-F', '#{window_id}\t#{window_name}\t#{window_active}']);
      await pair.same(['select-window', '-t', 'ccb:ccb']);
      await pair.same(['select-window', '-t', 'ccb:nosuch']);
      await pair.same(['list-windows', '-t', 'ccb', '-F', '#{window_id}\t#{window_name}\t#{window_active}\t#{window_flags}']);
      await pair.same(['rename-window', '-t', 'ccb:ccb', 'renamed']);
      await pair.same(['list-windows', '-a']);
      await pair.same(['kill-window', '-t', 'ccb:renamed']);
      await pair.same(['list-windows', '-t', 'ccb', '-F', '#{window_index} #{window_name} #{window_active}']);
    });
  });

  it('respawn-pane -k -t %N -c DIR CMD, and without -k on a live pane; remain-on-exit keeps dead panes with their status', async () => {
    await withPair('respawn', async (pair) => {
      await pair.same(['new-session', '-d', '-x', '80', '-y', '10', '-s', 'ccb', '-n', 'main', 'sleep 1000']);
      await pair.same(['respawn-pane', '-t', '%0', 'sleep 1000']);
      await pair.same(['respawn-pane', '-k', '-t', '%0', '-c', pair.dir, SH('echo started; exec sleep 1000')]);
      await pair.until(['capture-pane', '-p', '-t', '%0'], (out) => out.includes('started'));
      await pair.same(['capture-pane', '-p', '-t', '%0']);
      await pair.same(['display-message', '-p', '-t', '%0', '#{pane_dead} #{pane_start_command}']);
      await pair.same(['set-option', '-t', 'ccb', 'remain-on-exit', 'on']);
      await pair.same(['show-options', '-w', '-t', 'ccb']);
      await pair.same(['split-window', '-t', '%0', '-P', '-F', '#{pane_id}', SH('echo bye; exit 3')]);
      // Real tmux marks a pane dead when its terminal closes and reads the status when it reaps the
      // child; on a loaded machine it can leave the status unread for good ("1/"). Ours must know it;
      // where real tmux knows it too, the answers must be equal, status and all.
      const deadQuery = ['display-message', '-p', '-t', '%1', '#{pane_dead}/#{pane_dead_status}'];
      const dead = await pair.until(deadQuery, (out) => out.startsWith('1/'));
      expect(dead.ours.stdout.trim()).toBe('1/3');
      const realKnowsStatus = await pair.untilReal(deadQuery, (out) => out.trim() === '1/3', 10_000);
      if (realKnowsStatus) {
        await pair.same(['display-message', '-p', '-t', '%1', '#{pane_dead} #{pane_dead_status} #{pane_dead_signal}']);
        await pair.same(['list-panes', '-t', 'ccb', '-F', '#{pane_id} #{pane_dead} #{pane_dead_status} #{pane_height}']);
      } else {
        await pair.same(['display-message', '-p', '-t', '%1', '#{pane_dead} #{pane_dead_signal}']);
        await pair.same(['list-panes', '-t', 'ccb', '-F', '#{pane_id} #{pane_dead} #{pane_height}']);
        expect((await pair.ours(['list-panes', '-t', 'ccb', '-F', '#{pane_id} #{pane_dead_status}'])).stdout).toContain('%1 3');
      }
      // What the unread first death scrolled into ours' history alone: real tmux's top screen row.
      let extraHistory: string[] = [];
      if (realKnowsStatus) await pair.same(['capture-pane', '-p', '-t', '%1']);
      else extraHistory = (await sameCaptureAfterUnreadDeath(pair, ['capture-pane', '-p', '-t', '%1'], { status: 3 })).slice(0, 1);
      await pair.same(['respawn-pane', '-t', '%1', SH('echo again; exit 0')]);
      // Under load real tmux can leave a respawned pane's status unread for good ("1/"): both must be
      // dead again, and ours must know the status.
      const againQuery = ['display-message', '-p', '-t', '%1', '#{pane_dead}/#{pane_dead_status}'];
      const again = await pair.until(againQuery, (out) => out.startsWith('1/'));
      expect(again.ours.stdout.trim()).toBe('1/0');
      if (await pair.untilReal(againQuery, (out) => out.trim() === '1/0', 10_000)) {
        if (realKnowsStatus) await pair.same(['capture-pane', '-p', '-t', '%1', '-S', '-']);
        else await sameCaptureAfterUnreadDeath(pair, ['capture-pane', '-p', '-t', '%1', '-S', '-'], { extraHistory });
        await pair.same(['list-panes', '-t', 'ccb', '-F', '#{pane_id} #{pane_dead} #{pane_dead_status} #{?pane_dead, (dead),}']);
      } else {
        await sameCaptureAfterUnreadDeath(pair, ['capture-pane', '-p', '-t', '%1', '-S', '-'], { status: 0, extraHistory });
        await pair.same(['list-panes', '-t', 'ccb', '-F', '#{pane_id} #{pane_dead} #{?pane_dead, (dead),}']);
      }
      await pair.same(['kill-pane', '-t', '%1']);
      await pair.same(['list-panes', '-t', 'ccb', '-F', '#{pane_id} #{pane_height}']);
    });
  });

  it('capture-pane -p with -S -120 (history), -E, -e (colours), -J (wrapped lines), on a shell', async () => {
    await withPair('capture', async (pair) => {
      await pair.same(['new-session', '-d', '-x', '40', '-y', '8', '-s', 'cap', '-n', 'main', 'env PS1="$ " sh']);
      await pair.until(['capture-pane', '-p', '-t', '%0'], (out) => out.startsWith('$'));
      await pair.same(['send-keys', '-t', '%0', 'i=0; while [ $i -lt 30 ]; do echo line-$i; i=$((i+1)); done', 'Enter']);
      // The output and the prompt sh draws after it, on both sides, before the screens are compared.
      await pair.until(['capture-pane', '-p', '-t', '%0'], (out) => /line-29\n\$/.test(out));
      await pair.same(['capture-pane', '-p', '-t', '%0']);
      await pair.same(['capture-pane', '-p', '-t', '%0', '-S', '-120']);
      await pair.same(['capture-pane', '-p', '-t', '%0', '-S', '-5', '-E', '2']);
      await pair.same(['capture-pane', '-p', '-t', '%0', '-S', '-']);
      await pair.same(['display-message', '-p', '-t', '%0', '#{history_size} #{cursor_x},#{cursor_y}']);
      await pair.same(['send-keys', '-t', '%0', 'clear; printf "\\033[31mred\\033[0m \\033[1;44mbold-on-blue\\033[0m \\033[38;5;208morange\\033[m\\n"', 'Enter']);
      await pair.until(['capture-pane', '-p', '-t', '%0'], (out) => out.includes('orange\n$'));
      await pair.same(['capture-pane', '-p', '-e', '-t', '%0']);
      await pair.same(['send-keys', '-t', '%0', 'clear; printf "%060d\\n" 7', 'Enter']);
      await pair.until(['capture-pane', '-p', '-t', '%0'], (out) => /0007\n\$/.test(out));
      await pair.same(['capture-pane', '-p', '-t', '%0']);
      await pair.same(['capture-pane', '-p', '-J', '-t', '%0']);
      await pair.same(['clear-history', '-t', '%0']);
      await pair.same(['display-message', '-p', '-t', '%0', '#{history_size}']);
      await pair.same(['capture-pane', '-p', '-t', '%99']);
    });
  });

  it('send-keys (named keys, -l, -X cancel), copy-mode, load-buffer -b BUF -, paste-buffer -p, delete-buffer', async () => {
    await withPair('keys', async (pair) => {
      await pair.same(['new-session', '-d', '-x', '60', '-y', '8', '-s', 'k', '-n', 'main', 'env PS1="$ " sh']);
      await pair.until(['capture-pane', '-p', '-t', '%0'], (out) => out.startsWith('$'));
      await pair.same(['send-keys', '-t', '%0', '-X', 'cancel']);
      await pair.same(['display-message', '-p', '-t', '%0', '#{pane_in_mode}']);
      await pair.same(['copy-mode', '-t', '%0']);
      await pair.same(['display-message', '-p', '-t', '%0', '#{pane_in_mode}']);
      await pair.same(['send-keys', '-t', '%0', '-X', 'cancel']);
      await pair.same(['display-message', '-p', '-t', '%0', '#{pane_in_mode}']);
      await pair.same(['send-keys', '-t', '%0', '-l', 'echo literal Enter']);
      await pair.same(['send-keys', '-t', '%0', 'Space', 'C-a', 'e', 'c', 'h', 'o', 'Space', 'k', 'e', 'y', 's', 'Space', 'Enter']);
      await pair.until(['capture-pane', '-p', '-t', '%0'], (out) => out.includes('literal Enter echo keys\n$'));
      await pair.same(['capture-pane', '-p', '-t', '%0']);
      await pair.same(['load-buffer', '-b', 'ccb-buf', '-'], { stdin: 'echo from-buffer\necho second-line' });
      await pair.same(['list-buffers']);
      await pair.same(['show-buffer', '-b', 'ccb-buf']);
      await pair.same(['paste-buffer', '-p', '-t', '%0', '-b', 'ccb-buf']);
      // The paste runs its first line; the second waits, echoed, for an Enter. Sending that Enter
      // before the first line's output is on screen would race the shell (the echo of the Enter
      // lands before or after "from-buffer" and the prompt), so wait for the prompt on both sides.
      await pair.until(['capture-pane', '-p', '-t', '%0'], (out) => out.includes('from-buffer\n$'));
      await pair.same(['capture-pane', '-p', '-t', '%0']);
      await pair.same(['send-keys', '-t', '%0', 'Enter']);
      await pair.until(['capture-pane', '-p', '-t', '%0'], (out) => out.includes('second-line\n$'));
      await pair.same(['capture-pane', '-p', '-t', '%0']);
      await pair.same(['delete-buffer', '-b', 'ccb-buf']);
      await pair.same(['delete-buffer', '-b', 'ccb-buf']);
      await pair.same(['paste-buffer', '-b', 'ccb-buf', '-t', '%0']);
      await pair.same(['show-buffer', '-b', 'nope']);
      await pair.same(['send-keys', '-t', '%99', 'x']);
    });
  });

  it('pipe-pane -o -t %N "tee -a FILE" appends the pane output to a file, and -o toggles it off', async () => {
    await withPair('pipe', async (pair) => {
      await pair.same(['new-session', '-d', '-x', '60', '-y', '8', '-s', 'p', '-n', 'main', 'env PS1="$ " sh']);
      await pair.until(['capture-pane', '-p', '-t', '%0'], (out) => out.startsWith('$'));
      const realLog = path.join(pair.dir, 'pipe-real.log');
      const oursLog = path.join(pair.dir, 'pipe-ours.log');
      await pair.real(['pipe-pane', '-o', '-t', '%0', `tee -a ${realLog}`]);
      await pair.ours(['pipe-pane', '-o', '-t', '%0', `tee -a ${oursLog}`]);
      await pair.same(['display-message', '-p', '-t', '%0', '#{pane_pipe}']);
      await pair.same(['send-keys', '-t', '%0', 'echo piped-output', 'Enter']);
      await pair.until(['capture-pane', '-p', '-t', '%0'], (out) => out.includes('piped-output\n$'));
      const logged = (file: string): string => {
        try {
          return readFileSync(file, 'utf8');
        } catch {
          return '';
        }
      };
      // The command's output and the prompt after it, not only the typed line (which holds the same
      // words): each pipe writes on its own time, so wait until both have all of it.
      const whole = 'echo piped-output\r\npiped-output\r\n$ ';
      await until(() => logged(realLog).includes(whole) && logged(oursLog).includes(whole), 'both pipes to log the output and the prompt').catch(() => undefined);
      expect(logged(oursLog)).toContain(whole);
      expect(logged(oursLog)).toBe(logged(realLog));
      await pair.real(['pipe-pane', '-o', '-t', '%0', `tee -a ${realLog}`]);
      await pair.ours(['pipe-pane', '-o', '-t', '%0', `tee -a ${oursLog}`]);
      await pair.same(['display-message', '-p', '-t', '%0', '#{pane_pipe}']);
    });
  });

  it('options and environment at every scope: set-option [-g|-t S|-p -t %N] [-u] [-a] [-o], show-options -qv, set-window-option, set-environment -g', async () => {
    await withPair('options', async (pair) => {
      await pair.same(['new-session', '-d', '-s', 'o', '-n', 'main', 'sleep 1000']);
      for (const [name, value] of [['history-limit', '5000'], ['mouse', 'on'], ['escape-time', '0'], ['focus-events', 'on'], ['set-clipboard', 'on'], ['destroy-unattached', 'off'], ['status-style', 'bg=blue'], ['pane-border-style', 'fg=red'], ['update-environment', 'CCB_A CCB_B']] as const) {
        await pair.same(['set-option', '-g', name, value]);
      }
      await pair.same(['set-option', '-g', 'allow-passthrough', 'on']);
      await pair.same(['show-options', '-g', 'history-limit']);
      await pair.same(['show-options', '-s']);
      await pair.same(['show-options', '-g']);
      await pair.same(['show-options', '-gw']);
      await pair.same(['set-option', '-g', 'mouse', 'maybe']);
      await pair.same(['set-option', '-g', 'history-limit', 'abc']);
      await pair.same(['set-option', '-g', 'status-keys', 'foo']);
      await pair.same(['set-option', '-g', 'nonexist', '1']);
      await pair.same(['set-option', '-g', '@u']);
      await pair.same(['set-option', '-t', 'nosuch', '@x', '1']);
      await pair.same(['set-option', '-p', '-t', '%99', '@x', '1']);
      await pair.same(['set-option', '-o', '-g', '@once', '1']);
      await pair.same(['set-option', '-o', '-g', '@once', '2']);
      await pair.same(['set-option', '-a', '-g', '@once', '3']);
      await pair.same(['show-option', '-gv', '@once']);
      await pair.same(['set-option', '-t', 'o', 'escape-time', '5']);
      await pair.same(['show-options', '-s', 'escape-time']);
      await pair.same(['set-option', '-w', '-t', 'o', 'remain-on-exit', 'failed']);
      await pair.same(['show-options', '-A', '-w', '-t', 'o', 'remain-on-exit']);
      await pair.same(['set-window-option', '-g', 'mode-keys', 'vi']);
      await pair.same(['set-window-option', '-t', 'o:main', 'automatic-rename', 'off']);
      await pair.same(['set-window-option', '-g', '-u', 'mode-keys']);
      await pair.same(['show-window-options', '-t', 'o:main']);
      await pair.same(['show-options', '-A', '-t', 'o', 'history-limit']);
      await pair.same(['set-option', '-g', '@s', 'with space']);
      await pair.same(['set-option', '-g', '@q', `it's "quoted"`]);
      await pair.same(['show-options', '-g', '@s']);
      await pair.same(['show-options', '-g', '@q']);
      await pair.same(['set-environment', '-g', 'CCB_RUN', 'yes']);
      await pair.same(['show-environment', '-g', 'CCB_RUN']);
      await pair.same(['set-environment', '-t', 'o', 'CCB_S', '1']);
      await pair.same(['show-environment', '-t', 'o', 'CCB_S']);
      await pair.same(['show-environment', 'CCB_NOPE']);
    });
  });

  it('hooks and key bindings are stored: set-hook [-g|-t S], show-hooks, bind-key [-r] [-T TABLE], list-keys', async () => {
    await withPair('hooks', async (pair) => {
      await pair.same(['new-session', '-d', '-s', 'h', '-n', 'main', 'sleep 1000']);
      await pair.same(['set-hook', '-g', 'after-new-window', 'display -p x']);
      await pair.same(['set-hook', '-t', 'h', 'session-closed', 'run-shell true']);
      await pair.same(['show-hooks', '-g']);
      await pair.same(['show-hooks', '-t', 'h']);
      await pair.same(['set-hook', '-g', 'pane-died', 'display -p died']);
      await pair.same(['show-hooks', '-gw']);
      await pair.same(['bind-key', '-r', '-T', 'prefix', 'Z', 'display', '-p', 'z']);
      await pair.same(['list-keys', '-T', 'prefix', 'Z']);
      await pair.same(['bind-key', '-T', 'prefix', 'NoSuchKey', 'display', '-p', 'z']);
    });
  });

  it("CCB 8's lines: mouse bindings, hooks with $ kept as given and fired on their targets, after-select-pane, pane-border-status", async () => {
    await withPair('ccb8', async (pair) => {
      await pair.same(['new-session', '-d', '-x', '160', '-y', '48', '-s', 'S', '-n', 'main', 'sleep 1000']);
      // The mouse bindings CCB 8 makes at every start (it retries a refused one for about 3 s).
      await pair.same(['bind-key', '-T', 'root', 'MouseDown1Pane', 'select-pane -t = ; send-keys -M']);
      await pair.same(['bind-key', '-T', 'root', 'MouseDrag1Border', 'resize-pane', '-M']);
      await pair.same(['bind-key', '-T', 'copy-mode-vi', 'MouseDragEnd1Pane', 'send-keys', '-X', 'copy-pipe-and-cancel', "sh -lc 'cat > /dev/null'"]);
      await pair.same(['bind-key', '-T', 'root', 'WheelUpPane', 'if-shell -F -t = "#{mouse_any_flag}" "send-keys -M" "copy-mode -e"']);
      await pair.same(['bind-key', '-T', 'root', 'mousedown3status', 'display', '-p', 'x']);
      await pair.same(['bind-key', '-T', 'root', 'MouseDown9Pane', 'display', '-p', 'x']);
      for (const [table, key] of [['root', 'MouseDown1Pane'], ['root', 'MouseDrag1Border'], ['copy-mode-vi', 'MouseDragEnd1Pane'], ['root', 'WheelUpPane'], ['root', 'MouseDown3Status']]) {
        await pair.same(['list-keys', '-T', table as string, key as string]);
      }
      // Hooks keep `$` as given (single-quoted for the shell), print it escaped, and take `$NAME`
      // outside single quotes from the server's environment when set, never the client's.
      await pair.same(['set-hook', '-g', 'after-rename-session', `run-shell 'x=local; echo $x "$y" done'`]);
      await pair.same(['set-hook', '-t', 'S', 'after-resize-pane', `run-shell -b 'current_session="#{session_name}"; [ "$current_session" = S ] || exit 0; echo "#{pane_id}"'`]);
      await pair.same(['set-hook', '-g', 'window-resized', 'run-shell "echo $HOME \\$HOME"']);
      await pair.same(['show-hooks', '-g']);
      await pair.same(['show-hooks', '-t', 'S']);
      await pair.same(['show-hooks', '-gw']);
      const fired = { real: path.join(pair.dir, 'ccb8-real.txt'), ours: path.join(pair.dir, 'ccb8-ours.txt') };
      const hook = (file: string, name: string): string => `run-shell 'x=local; echo ${name} #{pane_id} x=$x FOO=$FOO >> ${file}'`;
      const watched = ['after-set-option', 'after-select-pane', 'after-split-window', 'after-resize-pane', 'after-kill-pane', 'after-rename-window', 'after-respawn-pane', 'window-pane-changed', 'window-layout-changed'];
      for (const name of watched) {
        await pair.real(['set-hook', '-t', 'S', name, hook(fired.real, name)]);
        await pair.ours(['set-hook', '-t', 'S', name, hook(fired.ours, name)]);
      }
      // The client that triggers a hook has its own FOO; the hook's shell does not see it.
      const trigger = new TmuxPair(client, pair.dir, { ...env, FOO: 'from-the-client' }, 'ccb8');
      await trigger.same(['set-option', '-t', 'S', '@ccb_guard', '1']);
      await pair.same(['set-window-option', '-t', 'S', 'pane-border-status', 'top']);
      await pair.same(['split-window', '-v', '-l', '24', '-t', '%0', 'sleep 1000']);
      await pair.same(['split-window', '-h', '-l', '80', '-t', '%0', 'sleep 1000']);
      const geometry = ['list-panes', '-t', 'S', '-F', '#{pane_id} #{pane_width}x#{pane_height} top=#{pane_top} left=#{pane_left} bottom=#{pane_bottom} #{window_layout}'];
      await pair.same(geometry);
      // select-pane -T only sets the title: tmux 3.3a runs no after-select-pane for it.
      await pair.same(['select-pane', '-t', '%1', '-T', 'agent', ';', 'set-option', '-p', '-t', '%1', '@ccb_role', 'w']);
      await pair.same(['select-pane', '-t', '%0']);
      // The pane already active: tmux runs no after-select-pane.
      await pair.same(['select-pane', '-t', '%0']);
      await pair.same(['select-pane', '-t', '%2', '-P', 'bg=red']);
      await pair.same(['resize-pane', '-t', '%1', '-y', '10']);
      await pair.same(geometry);
      await pair.same(['respawn-pane', '-k', '-t', '%2', 'sleep 1000']);
      await pair.same(['new-window', '-d', '-t', 'S', '-n', 'w2', 'sleep 1000']);
      await pair.same(['rename-window', '-t', 'S:w2', 'w3']);
      await pair.same(['kill-pane', '-t', '%1']);
      await pair.same(['set-window-option', '-t', 'S', 'pane-border-status', 'bottom']);
      await pair.same(geometry);
      await pair.same(['set-window-option', '-t', 'S', 'pane-border-status', 'off']);
      await pair.same(geometry);
      // Hooks run on their own time on both sides: a last one, queued after all the others, says
      // when to compare; until then (or the time is up) the two may still differ.
      await pair.real(['set-hook', '-t', 'S', 'after-display-message', hook(fired.real, 'last')]);
      await pair.ours(['set-hook', '-t', 'S', 'after-display-message', hook(fired.ours, 'last')]);
      await pair.same(['display-message', '-p', '-t', '%0', 'done']);
      const lines = (file: string): string[] => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter((l) => l !== '') : []);
      const sorted = (file: string): string => lines(file).sort().join('\n');
      const done = (file: string): boolean => lines(file).some((l) => l.startsWith('last '));
      await until(() => done(fired.real) && done(fired.ours) && sorted(fired.real) === sorted(fired.ours), 'both servers to run the same hooks').catch(() => undefined);
      expect(sorted(fired.ours)).toBe(sorted(fired.real));
      expect(lines(fired.real)).toContain('after-rename-window %3 x=local FOO=');
      expect(lines(fired.real).some((l) => l.startsWith('after-select-pane %1'))).toBe(false);
    });
  });

  it('a fresh server without SHELL takes the login shell from the user database; panes get the client environment, COLORTERM and all; -S is a socket while the server lives', async () => {
    const noShell = { ...env };
    delete (noShell as Partial<typeof env>).SHELL;
    const bare = new TmuxPair(client, t.work, noShell, 'bare');
    try {
      await bare.same(['new-session', '-d', '-s', 'b', '-n', 'main', 'sleep 1000']);
      await bare.same(['show-options', '-g', 'default-shell']);
      await bare.same(['new-window', '-d', '-t', 'b', '-n', 'env', `sh -c 'echo "[$COLORTERM][$TERM][$TERM_PROGRAM]"; exec sleep 1000'`]);
      await bare.until(['capture-pane', '-p', '-t', 'b:env'], (out) => out.includes(']['));
      await bare.same(['capture-pane', '-p', '-t', 'b:env']);
      await bare.same(['set-environment', '-g', 'COLORTERM', 'truecolor']);
      await bare.same(['new-window', '-d', '-t', 'b', '-n', 'env2', `sh -c 'echo "[$COLORTERM]"; exec sleep 1000'`]);
      await bare.until(['capture-pane', '-p', '-t', 'b:env2'], (out) => out.includes(']'));
      await bare.same(['capture-pane', '-p', '-t', 'b:env2']);
      // The -S path holds a socket while the server runs; a real tmux client told to use ours is
      // turned away at once, not left waiting.
      for (const socket of [bare.realSocket, bare.oursSocket]) expect(statSync(socket).isSocket()).toBe(true);
      // (Asynchronously: the daemon of this test runs in this process.)
      const asked = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        execFile('tmux', ['-S', bare.oursSocket, 'list-sessions'], { env: noShell, timeout: 10_000 }, (err, _stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr }));
      });
      expect(asked).toEqual({ code: 1, stderr: 'server exited unexpectedly\n' });
      await bare.same(['kill-server']);
      // tmux leaves the socket file behind when its server ends; a client is then refused.
      for (const socket of [bare.realSocket, bare.oursSocket]) expect(statSync(socket).isSocket()).toBe(true);
      await bare.same(['has-session', '-t', 'b']);
    } finally {
      await bare.stop();
    }
  });

  it('chains with \\;, select-pane -T, tmux parse errors, client commands without a terminal, kill-server', async () => {
    await withPair('chain', async (pair) => {
      await pair.same(['new-session', '-d', '-s', 'c', '-n', 'main', 'sleep 1000', ';', 'split-window', '-t', 'c', 'sleep 1000', ';', 'display', '-p', '#{pane_id}']);
      await pair.same(['select-pane', '-t', '%0', '-T', 'agent-1', ';', 'set-option', '-p', '-t', '%0', '@ccb_role', 'worker', ';', 'display-message', '-p', '-t', '%0', '#{pane_title} #{@ccb_role}']);
      await pair.same(['display', '-p', 'a', ';', 'has-session', '-t', 'nosuch', ';', 'display', '-p', 'b']);
      await pair.same(['display', '-p', 'a', ';', 'bogus', ';', 'display', '-p', 'b']);
      await pair.same(['display', '-p', 'semi\\;colon']);
      await pair.same(['li']);
      await pair.same(['list-p', '-F', '#{pane_id}']);
      await pair.same(['display-message', '-Z']);
      await pair.same(['has-session', 'extra']);
      await pair.same(['rename-window']);
      await pair.same(['attach-session', '-t', 'c']);
      await pair.same(['list-clients']);
      await pair.same(['refresh-client']);
      await pair.same(['switch-client', '-t', 'c']);
      await pair.same(['kill-server']);
      await pair.same(['has-session', '-t', 'c']);
    });
  });
});
