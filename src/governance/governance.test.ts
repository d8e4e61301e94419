import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadGovernancePolicy, parseGovernancePolicy, DEFAULT_LIMITS } from './policy-file.js';
import { Sandbox } from './sandbox.js';
import { Governor } from './governor.js';
import { CallerGovernance } from './caller-governance.js';
import { AdmissionQueue } from './admission.js';
import { isSwitchboardError } from '../core/errors.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'sb-gov-'));
  dirs.push(d);
  return d;
}

function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (isSwitchboardError(err, 'INVALID_PARAMS')) return (err.details?.problems as string[] | undefined) ?? [err.message];
    throw err;
  }
  throw new Error('expected INVALID_PARAMS');
}

describe('the governance policy file', () => {
  it('names every problem with its field path', () => {
    expect(problems(() => parseGovernancePolicy({ limits: { wall_clock_ms: -1 }, backends: { claude: { limits: { concurency: 2 } } }, sandbox: { roots: [] } }))).toEqual(
      expect.arrayContaining([expect.stringMatching(/^limits\.wall_clock_ms: /), expect.stringMatching(/^backends\.claude\.limits: unknown key 'concurency'/), expect.stringMatching(/^sandbox\.roots: /)]),
    );
    expect(problems(() => parseGovernancePolicy({ backends: { codex: { approvals: { rules: [{ decision: 'deny', command: '(a+)+(' }] } } } }))).toEqual([expect.stringMatching(/^backends\.codex\.approvals\.rules\[0\]\.command: /)]);
    expect(problems(() => parseGovernancePolicy({ approvals: { rules: [{ decision: 'maybe' }] } }))).toEqual([expect.stringMatching(/^approvals\.rules\[0\]\.decision: /)]);
  });

  it('applies per-backend overrides over the globals over the defaults', () => {
    const home = '/home/someone';
    const policy = parseGovernancePolicy(
      { sandbox: { roots: ['~/code'] }, limits: { concurrency: 3, no_output_ms: 1_000 }, backends: { claude: { limits: { concurrency: 1, wall_clock_ms: 5_000 }, sandbox: { roots: ['/srv'] } } } },
      { home },
    );
    expect(policy.concurrency).toBe(3);
    expect(policy.forBackend('claude')).toMatchObject({ roots: ['/srv'], concurrency: 1, limits: { ...DEFAULT_LIMITS, no_output_ms: 1_000, wall_clock_ms: 5_000 }, source: { sandbox: 'backends.claude.sandbox', limits: 'backends.claude.limits' } });
    expect(policy.forBackend('codex')).toMatchObject({ roots: ['/home/someone/code'], concurrency: null, limits: { ...DEFAULT_LIMITS, no_output_ms: 1_000 }, source: { sandbox: 'sandbox' } });
  });

  it('reads policy.yaml from the Switchboard home, and names the file in errors', () => {
    const home = tmp();
    expect(loadGovernancePolicy({ env: { SWITCHBOARD_HOME: home } }).origin).toBe('default');
    writeFileSync(path.join(home, 'policy.yaml'), 'limits:\n  concurrency: 2\nledger:\n  raw_output: true\n');
    const policy = loadGovernancePolicy({ env: { SWITCHBOARD_HOME: home } });
    expect(policy).toMatchObject({ concurrency: 2, rawOutput: true, origin: path.join(home, 'policy.yaml') });
    writeFileSync(path.join(home, 'policy.yaml'), 'limits:\n  concurrency: two\n');
    expect(() => loadGovernancePolicy({ env: { SWITCHBOARD_HOME: home } })).toThrow(/policy\.yaml: invalid governance policy: limits\.concurrency: /);
  });
});

describe('the directory sandbox', () => {
  it('refuses a folder outside the roots, through symlinks', () => {
    const root = tmp();
    const outside = tmp();
    mkdirSync(path.join(root, 'project'));
    symlinkSync(outside, path.join(root, 'escape'));
    const box = new Sandbox([root]);
    expect(box.checkFolder(path.join(root, 'project')).decision).toBe('allow');
    expect(box.checkFolder(outside).decision).toBe('deny');
    expect(box.checkFolder(path.join(root, 'escape'))).toMatchObject({ decision: 'deny', reason: expect.stringContaining('really') });
    expect(box.checkFolder(path.join(root, 'project', '..', '..')).decision).toBe('deny');
  });

  it('denies file edits and shell commands that reach outside', () => {
    const root = tmp();
    const outside = tmp();
    const cwd = path.join(root, 'project');
    mkdirSync(cwd);
    symlinkSync(outside, path.join(cwd, 'link'));
    const box = new Sandbox([root], '/home/nobody');
    const edit = (p: string): string => box.checkToolCall({ tool: 'file_write', path: p, toolName: 'Write' }, cwd).decision;
    const sh = (command: string): string => box.checkToolCall({ tool: 'shell', command, shell: 'posix' }, cwd).decision;
    expect(edit('notes.txt')).toBe('allow');
    expect(edit(path.join(cwd, 'new', 'deep.txt'))).toBe('allow');
    expect(edit(path.join(outside, 'x.txt'))).toBe('deny');
    expect(edit('../../x.txt')).toBe('deny');
    expect(edit('link/x.txt')).toBe('deny');
    expect(box.checkToolCall({ tool: 'file_edit' }, cwd)).toMatchObject({ decision: 'deny', rule: 'sandbox.unknown_path' });
    expect(sh('echo hi > out.txt && cat out.txt')).toBe('allow');
    expect(sh(`echo hi > ${outside}/out.txt`)).toBe('deny');
    expect(sh('cd .. && cd .. && rm -f x')).toBe('deny');
    expect(sh('cat link/secret')).toBe('deny');
    expect(sh(`bash -c 'cp a.txt ${outside}/'`)).toBe('deny');
    expect(sh('rm -rf "$TARGET"')).toBe('deny');
    expect(sh('ls > /dev/null')).toBe('allow');
  });

  it('refuses code it cannot read: a script run by an interpreter or its path, or written and run by the same line', () => {
    const root = tmp();
    const box = new Sandbox([root], '/home/nobody');
    const sh = (command: string): { decision: string; rule: string; reason: string } => box.checkToolCall({ tool: 'shell', command, shell: 'posix' }, root);
    expect(sh("printf 'rm -rf ~\\n' > x.sh && bash x.sh")).toMatchObject({ decision: 'deny', rule: 'sandbox.unknown_path', reason: expect.stringContaining('x.sh (written by this same command line)') });
    expect(sh('chmod +x x && ./x')).toMatchObject({ decision: 'deny', rule: 'sandbox.unknown_path' });
    expect(sh("bash -c 'echo a > m.py; python3 -m m'")).toMatchObject({ decision: 'deny', rule: 'sandbox.unknown_path' });
    expect(sh('source env.sh')).toMatchObject({ decision: 'deny' });
    expect(sh("echo 'bash x.sh' > notes.txt && cat x.sh")).toMatchObject({ decision: 'allow' });
  });
});

describe('the governor', () => {
  it('names the rule of every decision', () => {
    const root = tmp();
    const policy = parseGovernancePolicy({ sandbox: { roots: [root] }, approvals: { rules: [{ decision: 'deny', tool: 'shell', command: '^git push' }, { decision: 'allow', tool: 'shell' }], default: 'ask' }, backends: { aider: { enabled: false } } });
    const g = new Governor(policy, '/home/nobody');
    expect(g.admit('claude', root)).toMatchObject({ decision: 'allow', rule: 'sandbox.roots' });
    expect(g.admit('claude', tmpdir())).toMatchObject({ decision: 'deny', rule: 'sandbox.roots' });
    expect(g.admit('aider', root)).toMatchObject({ decision: 'deny', rule: 'backends.aider.enabled' });
    expect(g.judgeToolCall('claude', root, { tool: 'shell', command: 'git push origin main', shell: 'posix' })).toMatchObject({ decision: 'deny', rule: 'approvals.rules[0]' });
    expect(g.judgeToolCall('claude', root, { tool: 'shell', command: 'ls', shell: 'posix' })).toMatchObject({ decision: 'allow', rule: 'approvals.rules[1]' });
    // The built-in rules follow the file's own: network is asked by the first of them.
    expect(g.judgeToolCall('claude', root, { tool: 'network', url: 'https://example.com' })).toMatchObject({ decision: 'ask', rule: 'approvals(default policy).rules[0]' });
    expect(g.judgeToolCall('claude', root, { tool: 'shell', command: 'rm -rf ~', shell: 'posix' })).toMatchObject({ decision: 'deny', rule: 'sandbox.roots' });
    expect(g.judgeToolCall('claude', root, { tool: 'file_write', path: '/etc/passwd' })).toMatchObject({ decision: 'deny', rule: 'sandbox.roots' });
    // A rule that allows every shell command does not let a written script run, nor the network past its own rules.
    expect(g.judgeToolCall('claude', root, { tool: 'shell', command: 'echo x > x.sh && sh x.sh', shell: 'posix' })).toMatchObject({ decision: 'deny', rule: 'sandbox.unknown_path' });
    expect(g.judgeToolCall('claude', root, { tool: 'shell', command: 'curl https://example.com', shell: 'posix' })).toMatchObject({ decision: 'ask', rule: 'approvals(default policy).rules[0]' });
  });

  it('adds a file\u2019s approval rules to the built-in ones, unless it says replace: true', () => {
    const root = tmp();
    const write = { tool: 'file_write', path: path.join(root, 'note.txt') } as const;
    const rm = { tool: 'shell', command: 'rm note.txt', shell: 'posix' } as const;
    // The README's example: one deny rule. Writing inside the folder stays allowed by the built-in rule.
    const added = new Governor(parseGovernancePolicy({ sandbox: { roots: [root] }, approvals: { rules: [{ tool: 'shell', command: '^rm ', decision: 'deny' }] } }), '/home/nobody');
    expect(added.judgeToolCall('claude', root, rm)).toMatchObject({ decision: 'deny', rule: 'approvals.rules[0]' });
    expect(added.judgeToolCall('claude', root, write)).toMatchObject({ decision: 'allow', rule: 'approvals(default policy).rules[2]' });
    const replaced = new Governor(parseGovernancePolicy({ sandbox: { roots: [root] }, approvals: { replace: true, rules: [{ tool: 'shell', command: '^rm ', decision: 'deny' }] } }), '/home/nobody');
    expect(replaced.judgeToolCall('claude', root, rm)).toMatchObject({ decision: 'deny', rule: 'approvals.rules[0]' });
    expect(replaced.judgeToolCall('claude', root, write)).toMatchObject({ decision: 'ask', rule: 'approvals.default' });
    // The same per backend, and a bad key is still named.
    const perBackend = new Governor(parseGovernancePolicy({ sandbox: { roots: [root] }, backends: { codex: { approvals: { rules: [{ tool: 'file_write', decision: 'deny' }] } } } }), '/home/nobody');
    expect(perBackend.judgeToolCall('codex', root, write)).toMatchObject({ decision: 'deny', rule: 'backends.codex.approvals.rules[0]' });
    expect(perBackend.judgeToolCall('codex', root, { tool: 'shell', command: 'ls', shell: 'posix' })).toMatchObject({ decision: 'allow', rule: 'approvals(default policy).rules[2]' });
    expect(() => parseGovernancePolicy({ approvals: { replace: 'yes' } })).toThrow(/approvals\.replace/);
  });
});

describe('admission', () => {
  it('runs at most the limits at once; the rest wait in line, first in first out', () => {
    const q = new AdmissionQueue(3, (b) => (b === 'claude' ? 1 : null));
    const started: string[] = [];
    const leases = new Map<string, { dispose(): void }>();
    for (const [id, backend] of [['c1', 'claude'], ['c2', 'claude'], ['x1', 'codex'], ['x2', 'codex'], ['x3', 'codex'], ['c3', 'claude']] as const) leases.set(id, q.request(id, backend, () => started.push(id)));
    // c2 waits for claude's one place; x1 and x2 go past it; x3 waits for a global place.
    expect(started).toEqual(['c1', 'x1', 'x2']);
    expect(q.position('c2')).toBe(0);
    leases.get('x1')?.dispose();
    expect(started).toEqual(['c1', 'x1', 'x2', 'x3']);
    leases.get('c1')?.dispose();
    expect(started).toEqual(['c1', 'x1', 'x2', 'x3', 'c2']);
    // A waiting run withdrawn never starts.
    leases.get('c3')?.dispose();
    leases.get('c2')?.dispose();
    expect(started).not.toContain('c3');
    expect(q.stats()).toMatchObject({ running: 2, waiting: 0 });
  });
});

describe("a caller's own governance (run_agent)", () => {
  it('admits by the face\'s rule, lets the CLI decide its calls, never ends the run for a denial, and still refuses a folder swapped while queued', () => {
    const root = tmp();
    const work = path.join(root, 'work');
    const elsewhere = path.join(root, 'elsewhere');
    mkdirSync(work);
    mkdirSync(elsewhere);
    const g = new CallerGovernance({ face: 'run_agent', reason: 'the caller governs' });
    expect(g.admission()).toEqual({ decision: 'allow', rule: 'run_agent.caller', reason: 'the caller governs' });
    expect(g.admitAtStart('claude', work, realpathSync(work))).toMatchObject({ decision: 'allow', rule: 'run_agent.caller' });
    const step = g.ruleStep();
    expect(step({ tool: 'shell', command: 'rm -rf /' }, { workdir: work, home: root })).toMatchObject({ decision: 'allow', ruleName: 'run_agent.cli' });
    expect(g.judgeToolCall()).toMatchObject({ decision: 'allow', rule: 'run_agent.cli' });
    expect(g.onDeny()).toBe('continue');
    // The folder admitted is the folder it starts in, whoever governs.
    const link = path.join(root, 'link');
    symlinkSync(work, link);
    const admitted = realpathSync(link);
    rmSync(link);
    symlinkSync(elsewhere, link);
    expect(g.admitAtStart('claude', link, admitted)).toMatchObject({ decision: 'deny', rule: 'sandbox.real_path' });
  });
});
