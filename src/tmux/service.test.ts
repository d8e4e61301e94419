import { describe, expect, it } from 'vitest';
import { MemoryPaneHost } from './memory-host.js';
import { TmuxService, type TmuxReply } from './service.js';

function setup(): { host: MemoryPaneHost; tmux: (...argv: string[]) => Promise<TmuxReply>; service: TmuxService } {
  const host = new MemoryPaneHost();
  const service = new TmuxService(host, { pid: 4242, hostName: 'box', uid: 1000 });
  const env = { SHELL: '/bin/bash', HOME: '/home/u', PATH: '/usr/bin', DISPLAY: ':0' };
  const tmux = (...argv: string[]): Promise<TmuxReply> => service.run({ argv: ['-S', '/tmp/t.sock', ...argv], env, cwd: '/work', tty: false });
  return { host, tmux, service };
}

describe('the tmux service', () => {
  it('answers "no server" until a command starts one, and the server ends with its last session', async () => {
    const { tmux } = setup();
    expect(await tmux('has-session')).toEqual({ stdout: '', stderr: 'error connecting to /tmp/t.sock (No such file or directory)\n', exit_code: 1 });
    expect(await tmux('start-server')).toMatchObject({ exit_code: 0 });
    expect(await tmux('has-session')).toEqual({ stdout: '', stderr: 'no server running on /tmp/t.sock\n', exit_code: 1 });
    await tmux('new-session', '-d', '-s', 's', 'sleep 9');
    expect(await tmux('kill-session', '-t', 's')).toMatchObject({ exit_code: 0 });
    expect((await tmux('ls')).stderr).toBe('no server running on /tmp/t.sock\n');
  });

  it('names sockets from -L, $TMUX_TMPDIR and $TMUX as tmux does', () => {
    const { service } = setup();
    expect(service.socketPath({ socketPath: undefined, label: 'ccb' }, {})).toBe('/tmp/tmux-1000/ccb');
    expect(service.socketPath({ socketPath: undefined, label: undefined }, { TMUX_TMPDIR: '/run/x' })).toBe('/run/x/tmux-1000/default');
    expect(service.socketPath({ socketPath: undefined, label: undefined }, { TMUX: '/tmp/other.sock,12,0' })).toBe('/tmp/other.sock');
  });

  it('starts panes with tmux’s environment and command line, sized to their layout cells', async () => {
    const { tmux, host } = setup();
    await tmux('new-session', '-d', '-x', '100', '-y', '30', '-s', 'ccb', '-n', 'main', '-c', '/proj', '-e', 'X=1');
    expect(await tmux('split-window', '-h', '-t', '%0', '-P', '-F', '#{pane_id} #{pane_width}x#{pane_height}', 'echo hi')).toMatchObject({ stdout: '%1 49x30\n' });
    const [first, second] = host.panes;
    expect(first?.spec.argv).toEqual(['/bin/bash', '-l']);
    expect(second?.spec.argv).toEqual(['/bin/bash', '-c', 'echo hi']);
    expect(first?.spec.cwd).toBe('/proj');
    expect(first?.spec.env).toMatchObject({ TMUX: '/tmp/t.sock,4242,0', TMUX_PANE: '%0', TERM: 'tmux-256color', DISPLAY: ':0', X: '1' });
    expect([first?.cols, first?.rows]).toEqual([50, 30]);
    expect(first?.label).toBe('ccb:main.0');
    expect((await tmux('show-environment', '-t', 'ccb')).stdout).toContain('DISPLAY=:0\n');
  });

  it('keeps dead panes with remain-on-exit, with their status and the dead line', async () => {
    const { tmux, host } = setup();
    await tmux('new-session', '-d', '-x', '40', '-y', '4', '-s', 's', 'sleep 9');
    await tmux('set-option', '-t', 's', 'remain-on-exit', 'on');
    host.panes[0]?.output('bye');
    host.panes[0]?.end(3);
    expect((await tmux('display', '-p', '-t', '%0', '#{pane_dead} #{pane_dead_status} #{history_size}')).stdout).toBe('1 3 1\n');
    expect((await tmux('capture-pane', '-p', '-t', '%0')).stdout).toMatch(/^\n\n\nPane is dead \(status 3, \w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}\)\n$/);
    expect((await tmux('capture-pane', '-p', '-t', '%0', '-S', '-')).stdout.split('\n')[0]).toBe('bye');
    expect(await tmux('respawn-pane', '-t', '%0')).toMatchObject({ exit_code: 0 });
    expect(host.panes[1]?.spec.argv).toEqual(['/bin/bash', '-c', 'sleep 9']);
    expect(await tmux('respawn-pane', '-t', '%0')).toEqual({ stdout: '', stderr: 'respawn pane failed: pane s:0.0 still active\n', exit_code: 1 });
  });

  it('closes a pane whose program exits without remain-on-exit, and its window and session with it', async () => {
    const { tmux, host } = setup();
    await tmux('new-session', '-d', '-s', 's', 'sleep 9');
    // `-t s` would name the window "sleep" (a prefix of its name), as in tmux: `s:` is the session.
    await tmux('new-window', '-d', '-t', 's:', 'sleep 9');
    host.panes[1]?.end(0);
    await new Promise((r) => setImmediate(r));
    expect((await tmux('list-windows', '-t', 's', '-F', '#{window_index}')).stdout).toBe('0\n');
    expect(host.panes[1]?.removed).toBe(true);
  });

  it('resolves targets as tmux does', async () => {
    const { tmux } = setup();
    await tmux('new-session', '-d', '-s', 'alpha', '-n', 'main', 'sleep 9');
    await tmux('new-window', '-d', '-t', 'alpha', '-n', 'work', 'sleep 9');
    await tmux('new-session', '-d', '-s', 'beta', 'sleep 9');
    const show = async (target: string): Promise<string> => {
      const r = await tmux('display', '-p', '-t', target, '#{session_name}:#{window_name}.#{pane_index} #{pane_id}');
      return r.stdout.trim() || r.stderr.trim();
    };
    expect(await show('alpha:work')).toBe('alpha:work.0 %1');
    expect(await show('=alpha:1.0')).toBe('alpha:work.0 %1');
    expect(await show('@1')).toBe('alpha:work.0 %1');
    expect(await show('$1')).toBe('beta:sleep.0 %2');
    expect(await show('%1')).toBe('alpha:work.0 %1');
    expect(await show('al')).toBe('alpha:main.0 %0');
    expect(await show('alpha:wo')).toBe('alpha:work.0 %1');
    expect(await show('alpha:{end}')).toBe('alpha:work.0 %1');
    expect((await tmux('has-session', '-t', 'gamma')).stderr).toBe("can't find session: gamma\n");
    expect((await tmux('list-panes', '-t', 'alpha:nope')).stderr).toBe("can't find window: nope\n");
    expect((await tmux('kill-pane', '-t', '%9')).stderr).toBe("can't find pane: %9\n");
  });

  it('asks for stdin before running a load-buffer -, and pastes buffers bracketed only when the program asked', async () => {
    const { host, service } = setup();
    const run = (argv: string[], stdin?: string): Promise<TmuxReply> => service.run({ argv: ['-S', '/tmp/t.sock', ...argv], env: { SHELL: '/bin/sh' }, cwd: '/', tty: false, ...(stdin !== undefined ? { stdin } : {}) });
    await run(['new-session', '-d', '-s', 's', 'cat']);
    expect(await run(['load-buffer', '-b', 'b', '-'])).toMatchObject({ need_stdin: true, exit_code: 0 });
    await run(['load-buffer', '-b', 'b', '-'], 'one\ntwo');
    await run(['paste-buffer', '-p', '-t', '%0', '-b', 'b']);
    const pane = host.panes[0];
    if (!pane) throw new Error('no pane');
    pane.bracketedPaste = true;
    await run(['paste-buffer', '-p', '-t', '%0', '-b', 'b', ';', 'send-keys', '-t', '%0', 'Enter', ';', 'delete-buffer', '-b', 'b']);
    expect(pane.input).toEqual(['one\rtwo', '\x1b[200~one\rtwo\x1b[201~', '\r']);
    expect((await run(['delete-buffer', '-b', 'b'])).stderr).toBe('unknown buffer: b\n');
  });

  it('shows the title a program sets, and select-pane -T until the program sets another', async () => {
    const { tmux, host } = setup();
    await tmux('new-session', '-d', '-s', 's', 'sleep 9');
    expect((await tmux('display', '-p', '#{pane_title}')).stdout).toBe('box\n');
    const pane = host.panes[0];
    if (!pane) throw new Error('no pane');
    pane.windowTitle = 'vim main.c';
    expect((await tmux('display', '-p', '#{pane_title}')).stdout).toBe('vim main.c\n');
    await tmux('select-pane', '-t', '%0', '-T', 'mine');
    expect((await tmux('display', '-p', '#{pane_title}')).stdout).toBe('mine\n');
    pane.windowTitle = 'vim other.c';
    expect((await tmux('display', '-p', '#{pane_title}')).stdout).toBe('vim other.c\n');
  });

  it('runs after- hooks with the command and keeps key bindings', async () => {
    const { tmux } = setup();
    await tmux('new-session', '-d', '-s', 's', 'sleep 9');
    await tmux('set-hook', '-g', 'after-new-window', 'display -p hooked');
    expect((await tmux('new-window', '-d', 'sleep 9')).stdout).toBe('hooked\n');
    await tmux('bind-key', '-r', '-T', 'prefix', 'Z', 'display', '-p', 'z');
    expect((await tmux('list-keys', '-T', 'prefix')).stdout).toBe('bind-key -r -T prefix Z display-message -p z\n');
  });
});
