import { describe, expect, it } from 'vitest';
import { MemoryPaneHost } from '../../tmux/memory-host.js';
import { TmuxService } from '../../tmux/service.js';
import { HERDR_SOCKET_LABEL, HerdrFrontEnd, tmuxKeyOf, tmuxPaneOf } from './herdr.js';

// The fields Herdr's socket API schema requires of each object (protocol 21).
const REQUIRED = {
  pane: ['pane_id', 'terminal_id', 'workspace_id', 'tab_id', 'focused', 'agent_status', 'revision'],
  tab: ['tab_id', 'workspace_id', 'number', 'label', 'focused', 'pane_count', 'agent_status'],
  workspace: ['workspace_id', 'number', 'label', 'focused', 'pane_count', 'tab_count', 'active_tab_id', 'agent_status'],
};
const AGENT_STATUS = ['idle', 'working', 'blocked', 'done', 'unknown'];

function expectShape(value: unknown, kind: keyof typeof REQUIRED): void {
  expect(value).toBeTypeOf('object');
  const record = value as Record<string, unknown>;
  for (const key of REQUIRED[kind]) expect(record, `${kind}.${key}`).toHaveProperty(key);
  expect(AGENT_STATUS).toContain(record.agent_status);
}

function setup(): { herdr: HerdrFrontEnd; host: MemoryPaneHost; env: Record<string, string> } {
  const host = new MemoryPaneHost();
  const service = new TmuxService(host, { pid: 1, hostName: 'box', uid: 1000 });
  const env: Record<string, string> = { SHELL: '/bin/sh', HOME: '/home/u', PWD: '/work' };
  const herdr = new HerdrFrontEnd(
    async (argv) => {
      const reply = await service.run({ argv: ['-L', HERDR_SOCKET_LABEL, ...argv], env, cwd: '/work', tty: false });
      return { stdout: reply.stdout, stderr: reply.stderr, exitCode: reply.exit_code };
    },
    env,
    '/home/u/.switchboard',
    () => Promise.resolve(true),
  );
  return { herdr, host, env };
}

async function result(herdr: HerdrFrontEnd, argv: string[]): Promise<Record<string, unknown>> {
  const out = await herdr.run(argv);
  expect(out.stderr, argv.join(' ')).toBe('');
  expect(out.exitCode).toBe(0);
  const parsed = JSON.parse(out.stdout) as { id: unknown; result: Record<string, unknown> };
  expect(parsed.id).toBeTypeOf('string');
  return parsed.result;
}

describe('the herdr front end (CCB 8.x on Windows)', () => {
  it('reports a version CCB accepts and a status that is not an envelope', async () => {
    const { herdr } = setup();
    expect(await herdr.run(['--version'])).toEqual({ stdout: 'herdr 0.9.0\n', stderr: '', exitCode: 0 });
    const status = JSON.parse((await herdr.run(['status', '--json'])).stdout) as { server: { running: boolean; compatible: boolean; capabilities: { live_handoff: boolean } } };
    expect(status.server).toMatchObject({ running: true, compatible: true, capabilities: { live_handoff: false } });
  });

  it('creates workspaces with their first tab and root pane, and lists them', async () => {
    const { herdr, host } = setup();
    const created = await result(herdr, ['workspace', 'create', '--cwd', '/proj', '--label', 'api', '--env', 'ROLE=tests']);
    expect(created.type).toBe('workspace_created');
    expectShape(created.workspace, 'workspace');
    expectShape(created.tab, 'tab');
    expectShape(created.root_pane, 'pane');
    expect(created.workspace).toMatchObject({ workspace_id: 'w1', label: 'api', pane_count: 1, tab_count: 1, active_tab_id: 'w1:t1' });
    expect(created.root_pane).toMatchObject({ pane_id: 'w1:p1', workspace_id: 'w1', tab_id: 'w1:t1', cwd: '/proj', label: 'api' });
    expect(host.panes[0]?.spec.env).toMatchObject({ HERDR_ENV: '1', ROLE: 'tests' });
    const listed = await result(herdr, ['workspace', 'list']);
    expect(listed.type).toBe('workspace_list');
    for (const w of listed.workspaces as unknown[]) expectShape(w, 'workspace');
    expect(await result(herdr, ['workspace', 'get', 'w1'])).toMatchObject({ type: 'workspace_info', workspace: { workspace_id: 'w1' } });
  });

  it('splits, lists, runs, reads, reports agent state, shows process info and closes panes', async () => {
    const { herdr, host } = setup();
    await result(herdr, ['workspace', 'create', '--cwd', '/proj', '--label', 'api']);
    const split = await result(herdr, ['pane', 'split', 'w1:p1', '--direction', 'right', '--cwd', '/proj']);
    expect(split.type).toBe('pane_info');
    expectShape(split.pane, 'pane');
    expect(split.pane).toMatchObject({ pane_id: 'w1:p2', workspace_id: 'w1', tab_id: 'w1:t1' });
    const list = await result(herdr, ['pane', 'list', '--workspace', 'w1']);
    expect(list.type).toBe('pane_list');
    expect((list.panes as { pane_id: string }[]).map((p) => p.pane_id)).toEqual(['w1:p1', 'w1:p2']);
    for (const p of list.panes as unknown[]) expectShape(p, 'pane');

    expect(await result(herdr, ['pane', 'run', 'w1:p2', 'npm test'])).toEqual({ type: 'ok' });
    expect(host.panes[1]?.input).toEqual(['npm test', '\r']);
    host.panes[1]?.output('ran\nok');
    const read = await herdr.run(['pane', 'read', 'w1:p2', '--source', 'recent', '--lines', '5']);
    expect(read.stdout).toBe('ran\nok\n');

    expect(await result(herdr, ['pane', 'report-agent', 'w1:p2', '--source', 'ccb', '--agent', 'codex', '--state', 'working'])).toEqual({ type: 'ok' });
    expect(await result(herdr, ['pane', 'get', 'w1:p2'])).toMatchObject({ type: 'pane_info', pane: { agent: 'codex', agent_status: 'working' } });
    const info = await result(herdr, ['pane', 'process-info', '--pane', 'w1:p2']);
    expect(info).toMatchObject({ type: 'pane_process_info', process_info: { pane_id: 'w1:p2' } });
    expect((info.process_info as { shell_pid: unknown }).shell_pid).toBeTypeOf('number');

    expect(await result(herdr, ['pane', 'close', 'w1:p2'])).toEqual({ type: 'ok' });
    const gone = await herdr.run(['pane', 'get', 'w1:p2']);
    expect(gone.exitCode).toBe(1);
    expect(JSON.parse(gone.stderr)).toMatchObject({ error: { code: 'pane_not_found' } });
  });

  it('finds the calling pane with --current, and maps ids and key names', async () => {
    const { herdr, env } = setup();
    await result(herdr, ['workspace', 'create', '--label', 'w']);
    env.TMUX_PANE = '%0';
    expect(await result(herdr, ['pane', 'current', '--current'])).toMatchObject({ type: 'pane_current', pane: { pane_id: 'w1:p1' } });
    expect(tmuxPaneOf('w3:p7')).toBe('%6');
    expect(['enter', 'esc', 'ctrl+c', 'alt+x', 'shift+tab', 'f1', 'minus', 'C-c'].map(tmuxKeyOf)).toEqual(['Enter', 'Escape', 'C-c', 'M-x', 'BTab', 'F1', '-', 'C-c']);
  });
});
