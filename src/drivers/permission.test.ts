import { describe, expect, it } from 'vitest';
import { AUTO_APPROVE_POLICY, ASK_POLICY } from '../approvals/index.js';
import { decidePermission, subjectForTool } from './permission.js';

const WORK = '/home/dev/work';
const HOME = '/home/dev';

/** The policy's answer, with no one to ask: what a bridge run gets. */
async function verdict(toolName: string, input: Record<string, unknown>, policy = AUTO_APPROVE_POLICY): Promise<'allow' | 'deny'> {
  return (await decidePermission({ toolName, subject: subjectForTool(toolName, input), input }, { policy, workdir: WORK, home: HOME })).decision;
}

describe('the policy subject of a structured mode\u2019s tool call', () => {
  it('a search is a read of the folder it searches: the workdir when it names none', () => {
    expect(subjectForTool('Grep', { pattern: 'line', output_mode: 'content' })).toEqual({ tool: 'file_read', toolName: 'Grep', path: '.' });
    expect(subjectForTool('Grep', { pattern: 'line', path: '/etc', glob: '*.conf' })).toEqual({ tool: 'file_read', toolName: 'Grep', path: '/etc' });
    expect(subjectForTool('LS', { path: 'src' })).toEqual({ tool: 'file_read', toolName: 'LS', path: 'src' });
    expect(subjectForTool('LS', {})).toEqual({ tool: 'file_read', toolName: 'LS', path: '.' });
  });

  it('a Glob reads what its pattern reaches from its folder; an absolute or home pattern reaches where it says', () => {
    expect(subjectForTool('Glob', { pattern: '**/*.ts' })).toEqual({ tool: 'file_read', toolName: 'Glob', path: '**/*.ts' });
    expect(subjectForTool('Glob', { pattern: '*.ts', path: 'src' })).toEqual({ tool: 'file_read', toolName: 'Glob', path: 'src/*.ts' });
    expect(subjectForTool('Glob', { pattern: '*.ts', path: '/srv/app/' })).toEqual({ tool: 'file_read', toolName: 'Glob', path: '/srv/app/*.ts' });
    expect(subjectForTool('Glob', { pattern: '/etc/*.conf', path: 'src' })).toEqual({ tool: 'file_read', toolName: 'Glob', path: '/etc/*.conf' });
    expect(subjectForTool('Glob', { pattern: '~/.ssh/*' })).toEqual({ tool: 'file_read', toolName: 'Glob', path: '~/.ssh/*' });
    expect(subjectForTool('Glob', { pattern: '../**/*' })).toEqual({ tool: 'file_read', toolName: 'Glob', path: '../**/*' });
    // No pattern: the folder itself.
    expect(subjectForTool('Glob', {})).toEqual({ tool: 'file_read', toolName: 'Glob', path: '.' });
  });

  it('the agent\u2019s own machinery (subagents, to-do lists, loading tools, skills, plan mode) is an internal call', () => {
    for (const name of ['Agent', 'Task', 'ListAgents', 'SendMessage', 'TodoWrite', 'TodoRead', 'TaskCreate', 'TaskGet', 'TaskUpdate', 'TaskList', 'TaskOutput', 'BashOutput', 'TaskStop', 'KillShell', 'ToolSearch', 'Skill', 'EnterPlanMode', 'ExitPlanMode', 'ReportFindings']) {
      expect(subjectForTool(name, { prompt: 'x', description: 'y' }), name).toEqual({ tool: 'internal', toolName: name });
    }
  });

  it('ToolSearch finds tools, not web pages; the web tools stay network calls', () => {
    expect(subjectForTool('ToolSearch', { query: 'select:WebFetch' }).tool).toBe('internal');
    expect(subjectForTool('WebSearch', { query: 'x' })).toEqual({ tool: 'network', toolName: 'WebSearch' });
    expect(subjectForTool('WebFetch', { url: 'https://example.com', prompt: 'x' })).toEqual({ tool: 'network', toolName: 'WebFetch', url: 'https://example.com' });
  });

  it('a tool it does not know, and one that asks a person or acts later, stays other', () => {
    for (const name of ['Frobnicate', 'AskUserQuestion', 'Workflow', 'ScheduleWakeup', 'CronCreate', 'EnterWorktree', 'ExitWorktree', 'Monitor', 'RemoteTrigger']) {
      expect(subjectForTool(name, {}).tool, name).toBe('other');
    }
  });
});

describe('the built-in policy on the calls Claude Code now asks about', () => {
  it('allows reads and searches inside the workdir and the agent\u2019s own machinery', async () => {
    expect(await verdict('Read', { file_path: `${WORK}/file.txt` })).toBe('allow');
    expect(await verdict('Grep', { pattern: 'line' })).toBe('allow');
    expect(await verdict('Glob', { pattern: '**/*.txt' })).toBe('allow');
    expect(await verdict('Glob', { pattern: '*.txt', path: `${WORK}/src` })).toBe('allow');
    for (const name of ['Agent', 'TodoWrite', 'ToolSearch', 'Skill', 'ListAgents', 'ExitPlanMode']) expect(await verdict(name, {}), name).toBe('allow');
  });

  it('does not allow what reaches outside the workdir, nor a tool it does not know (no one to ask: denied)', async () => {
    expect(await verdict('Read', { file_path: '/etc/passwd' })).toBe('deny');
    expect(await verdict('Grep', { pattern: 'root', path: '/etc' })).toBe('deny');
    expect(await verdict('Glob', { pattern: '/etc/*.conf' })).toBe('deny');
    expect(await verdict('Glob', { pattern: '~/.ssh/*' })).toBe('deny');
    expect(await verdict('Glob', { pattern: '../**/*' })).toBe('deny');
    expect(await verdict('Frobnicate', {})).toBe('deny');
    expect(await verdict('AskUserQuestion', { questions: [] })).toBe('deny');
  });

  it('the policy that asks for everything asks for internal calls too', async () => {
    expect(await verdict('ToolSearch', { query: 'select:Glob' }, ASK_POLICY)).toBe('deny');
  });
});
