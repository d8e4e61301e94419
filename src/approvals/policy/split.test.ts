import { describe, expect, it } from 'vitest';
import { splitShellCommand } from './split.js';
import type { ShellDialect, SimpleCommand } from './types.js';

function parts(command: string, dialect: ShellDialect = 'posix'): SimpleCommand[] {
  const r = splitShellCommand(command, dialect);
  if ('error' in r) throw new Error(`unexpected split error: ${r.error}`);
  return r.parts;
}

const argvs = (command: string, dialect: ShellDialect = 'posix'): string[][] => parts(command, dialect).map((p) => p.argv);
const errorOf = (command: string, dialect: ShellDialect = 'posix'): string | undefined => {
  const r = splitShellCommand(command, dialect);
  return 'error' in r ? r.error : undefined;
};

describe('splitShellCommand: POSIX', () => {
  it.each([
    ['a; b', [['a'], ['b']]],
    ['a && b || c', [['a'], ['b'], ['c']]],
    ['a | b |& c', [['a'], ['b'], ['c']]],
    ['a & b', [['a'], ['b']]],
    ['a\nb\n\nc', [['a'], ['b'], ['c']]],
    ['(a; b) && { c; }', [['a'], ['b'], ['c']]],
    ['if a; then b; else c; fi', [['a'], ['b'], ['c']]],
    ['while a; do b; done', [['a'], ['b']]],
    ['! a', [['a']]],
  ])('splits %j at its operators', (command, expected) => {
    expect(argvs(command)).toEqual(expected);
  });

  it('keeps separators inside quotes and escapes in one word', () => {
    expect(argvs(`echo "a; rm -rf /" 'b && c' d\\;e`)).toEqual([['echo', 'a; rm -rf /', 'b && c', 'd;e']]);
    expect(argvs(`echo "a \\"quoted\\" \\$HOME" 'it''s'`)).toEqual([['echo', 'a "quoted" $HOME', 'its']]);
    expect(argvs('r""m -rf x')).toEqual([['rm', '-rf', 'x']]);
  });

  it('decodes $\'…\' strings so hidden spaces and names are seen', () => {
    expect(argvs("$'rm\\x20-rf' $'a\\tb'")).toEqual([['rm -rf', 'a\tb']]);
  });

  it('records the operators around each command and the pipeline before it', () => {
    const [a, b, c] = parts('curl -s x | tee f | sh');
    expect([a?.before, a?.after, b?.before, b?.after, c?.before, c?.after]).toEqual([null, '|', '|', '|', '|', null]);
    expect(c?.upstream).toEqual([
      ['curl', '-s', 'x'],
      ['tee', 'f'],
    ]);
  });

  it('splits command substitutions out and marks the holder unsure', () => {
    const ps = parts('echo $(rm -rf /) `date` <(ls) "$(id)"');
    expect(ps.map((p) => p.argv[0])).toEqual(['rm', 'date', 'ls', 'id', 'echo']);
    expect(ps.slice(0, 4).map((p) => p.nested)).toEqual(['$(…)', '`…`', '<(…)', '$(…)']);
    const outer = ps[4] as SimpleCommand;
    expect(outer.unsure).toEqual(expect.arrayContaining(['command substitution $(...) cannot be judged', 'command substitution `...` cannot be judged', 'process substitution <(...) cannot be judged']));
    expect(outer.words.every((w, i) => i === 0 || w.dynamic)).toBe(true);
  });

  it('does not split inside single quotes, even substitutions', () => {
    const [p] = parts("echo '$(rm -rf /)'");
    expect(p?.argv).toEqual(['echo', '$(rm -rf /)']);
    expect(p?.unsure).toEqual([]);
    expect(p?.words[1]?.dynamic).toBe(false);
  });

  it('reads variables and keeps where they are in the word', () => {
    const [p] = parts('ls $HOME/x ${HOME} "$A$B" \'$C\'');
    const [, home, braced, two, literal] = p?.words ?? [];
    expect(home?.vars).toEqual([{ name: 'HOME', start: 0, end: 5 }]);
    expect(braced?.vars[0]?.name).toBe('HOME');
    expect(two?.vars.map((v) => v.name)).toEqual(['A', 'B']);
    expect(literal).toMatchObject({ text: '$C', dynamic: false, vars: [] });
  });

  it('takes redirections out of the words', () => {
    const [p] = parts('cmd a > out.txt 2>>err.log < in.txt 2>&1 &>all');
    expect(p?.argv).toEqual(['cmd', 'a']);
    expect(p?.redirects.map((r) => [r.op, r.kind, r.target?.text ?? null])).toEqual([
      ['>', 'write', 'out.txt'],
      ['2>>', 'write', 'err.log'],
      ['<', 'read', 'in.txt'],
      ['2>&', 'dup', null],
      ['&>', 'write', 'all'],
    ]);
  });

  it('reads digits glued to a word as part of the word, not a file descriptor', () => {
    const [p] = parts('echo a2>f');
    expect(p?.argv).toEqual(['echo', 'a2']);
    expect(p?.redirects[0]?.op).toBe('>');
  });

  it('skips here-document bodies and marks the command unsure', () => {
    const ps = parts("cat <<'EOF' > out.txt\nrm -rf /\nEOF\necho done\ncat <<-X\n\tbody\n\tX\nls");
    expect(ps.map((p) => p.argv)).toEqual([['cat'], ['echo', 'done'], ['cat'], ['ls']]);
    expect(ps[0]?.unsure).toEqual(['here-document cannot be judged']);
  });

  it('takes leading assignments apart from the command', () => {
    const [p] = parts('FOO=1 BAR="a b" npm test');
    expect(p?.assignments).toEqual(['FOO=1', 'BAR=a b']);
    expect(p?.argv).toEqual(['npm', 'test']);
  });

  it('drops comments but not a # inside a word', () => {
    expect(argvs('ls # rm -rf /\necho a#b')).toEqual([['ls'], ['echo', 'a#b']]);
  });

  it('tracks directory changes: sure after &&, both possibilities after ;', () => {
    const [, afterAnd] = parts('cd /tmp && ls');
    expect(afterAnd?.cwd.map((c) => c.map((w) => w?.text))).toEqual([['/tmp']]);
    const [, afterSemi] = parts('cd /tmp; ls');
    expect(afterSemi?.cwd.map((c) => c.map((w) => w?.text))).toEqual([[], ['/tmp']]);
    const [, afterSubshell] = parts('(cd /tmp) && ls');
    expect(afterSubshell?.cwd.map((c) => c.map((w) => w?.text))).toEqual([[], ['/tmp']]);
    const [, unknown] = parts('cd - && ls');
    expect(unknown?.cwd).toEqual([[null]]);
    const [, home] = parts('cd && ls');
    expect(home?.cwd[0]?.[0]?.text).toBe('~');
  });

  it('after cd x && a || b, b may run in either directory', () => {
    const ps = parts('cd /w && a || b');
    expect(ps[2]?.cwd.map((c) => c.map((w) => w?.text))).toEqual([['/w'], []]);
  });

  it('knows which function body a command is in', () => {
    const ps = parts(':(){ :|:& };:');
    expect(ps.map((p) => [p.argv[0], p.inFunction, p.before, p.after])).toEqual([
      [':', ':', null, '|'],
      [':', ':', '|', '&'],
      [':', null, ';', null],
    ]);
    expect(parts('function f { rm x; }; f').map((p) => p.inFunction)).toEqual(['f', null]);
  });

  it.each([
    ['echo "unterminated', 'unbalanced double quote'],
    ["echo 'unterminated", 'unbalanced single quote'],
    ['echo `date', 'unbalanced backtick'],
    ['echo $(date', 'unterminated $(…)'],
    ['echo )', "unexpected ')'"],
    ['echo >', 'redirection > without a target'],
    ['case $x in a) ls;; esac', 'case statements are not supported'],
    ['a b (c)', "unexpected '('"],
  ])('cannot split %j: %s', (command, error) => {
    expect(errorOf(command)).toBe(error);
  });

  it('refuses nesting deeper than it judges', () => {
    expect(errorOf(`${'$('.repeat(40)}x${')'.repeat(40)}`)).toMatch(/nested too deeply/);
  });
});

describe('splitShellCommand: PowerShell', () => {
  it('splits at ; | && || and newlines, not inside quotes', () => {
    expect(argvs("Get-ChildItem | Select-Object -First 5; Write-Host 'a; b' \"c | d\"\nls && pwd || x", 'powershell')).toEqual([
      ['Get-ChildItem'],
      ['Select-Object', '-First', '5'],
      ['Write-Host', 'a; b', 'c | d'],
      ['ls'],
      ['pwd'],
      ['x'],
    ]);
  });

  it("reads '' inside single quotes, backtick escapes, and typographic quotes", () => {
    expect(argvs("echo 'it''s' \"a`\"b`$c\" a`;b \u201csmart; quotes\u201d", 'powershell')).toEqual([['echo', "it's", 'a"b$c', 'a;b', 'smart; quotes']]);
  });

  it('treats & at the start as the call operator', () => {
    expect(argvs('& "C:\\Program Files\\x.exe" -y', 'powershell')).toEqual([['C:\\Program Files\\x.exe', '-y']]);
  });

  it('splits subexpressions and script blocks; subexpressions are unsure', () => {
    const ps = parts('Write-Output $(Remove-Item x); Get-Item * | ForEach-Object { Remove-Item $_ }', 'powershell');
    expect(ps.map((p) => [p.argv[0], p.nested])).toEqual([
      ['Remove-Item', '$(…)'],
      ['Write-Output', null],
      ['Get-Item', null],
      ['Remove-Item', '{…}'],
      ['ForEach-Object', null],
    ]);
    expect(ps[1]?.unsure).toEqual(['subexpression $(...) cannot be judged']);
    expect(ps[4]?.words[1]?.code).toBe(true);
  });

  it('reads $env: variables and redirections, and takes assignments off', () => {
    const [p] = parts('$out = Get-Content $env:USERPROFILE\\x.txt 2>&1 > log.txt', 'powershell');
    expect(p?.assignments).toEqual(['$out']);
    expect(p?.argv[0]).toBe('Get-Content');
    expect(p?.words[1]?.vars[0]?.name).toBe('env:USERPROFILE');
    expect(p?.redirects.map((r) => [r.op, r.kind])).toEqual([
      ['2>&', 'dup'],
      ['>', 'write'],
    ]);
  });

  it('marks .NET calls and here-strings unsure', () => {
    expect(parts('[IO.File]::Delete("x")', 'powershell').at(-1)?.unsure).toContain('a .NET type or method call cannot be judged');
    expect(parts("$s = @'\nrm -rf /\n'@", 'powershell')[0]?.unsure).toEqual(['here-string cannot be judged']);
  });

  it.each([
    ["echo 'open", 'unbalanced single quote'],
    ['echo "open', 'unbalanced double quote'],
    ['echo $(open', 'unterminated $(…)'],
    ['echo }', "unexpected '}'"],
  ])('cannot split %j: %s', (command, error) => {
    expect(errorOf(command, 'powershell')).toBe(error);
  });
});

describe('splitShellCommand: cmd', () => {
  it('splits at & && || | and newlines; ^ escapes; quotes hold separators', () => {
    expect(argvs('dir & echo "a & b" a^&b && x || y | z', 'cmd')).toEqual([['dir'], ['echo', 'a & b', 'a&b'], ['x'], ['y'], ['z']]);
  });

  it('judges the command an if guards, and the commands of blocks', () => {
    expect(argvs('if exist foo (rd /s /q foo) else (echo no)', 'cmd')).toEqual([['rd', '/s', '/q', 'foo'], ['echo', 'no']]);
    expect(argvs('if /i not "%X%"=="y" del x', 'cmd')).toEqual([['del', 'x']]);
    expect(argvs('@echo off', 'cmd')).toEqual([['echo', 'off']]);
  });

  it('reads %VAR% as an expansion and marks for loops unsure', () => {
    const [p] = parts('rd /s /q "%USERPROFILE%\\x"', 'cmd');
    expect(p?.words[3]?.vars[0]?.name).toBe('USERPROFILE');
    const loop = parts('for %%f in (*.txt) do del %%f', 'cmd').at(-1);
    expect(loop?.unsure).toContain('for loops cannot be judged');
    expect(loop?.argv).toEqual(['del', '%%f']);
  });

  it('cannot split an unbalanced quote', () => {
    expect(errorOf('echo "open', 'cmd')).toBe('unbalanced double quote');
  });
});

describe('splitShellCommand: limits', () => {
  it('reports an overlong command instead of judging it', () => {
    expect(errorOf('a'.repeat(100_001))).toMatch(/longer than/);
  });

  it('returns no parts for an empty command', () => {
    expect(parts('  \n ; ')).toEqual([]);
  });
});
