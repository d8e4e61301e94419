import { describe, expect, it } from 'vitest';
import { EMPTY_SCOPE, expandFormat, formatTrue, strftime, type FormatScope } from './format.js';

function scope(vars: Record<string, string>, options: Record<string, string> = {}, env: Record<string, string> = {}, loops: Partial<Record<'S' | 'W' | 'P', { scope: FormatScope; current: boolean }[]>> = {}): FormatScope {
  return { variable: (n) => vars[n], option: (n) => options[n], environment: (n) => env[n], loop: (k) => loops[k] ?? [] };
}

describe('tmux formats', () => {
  const s = scope(
    { pane_id: '%3', pane_active: '1', pane_dead: '0', session_name: 'ccb', window_name: 'main', pane_title: 'vm', session_created: '1700000000', empty: '' },
    { '@ccb_agent': 'codex', 'history-limit': '2000', 'update-environment[1]': 'KRB5CCNAME' },
    { FOO: 'bar' },
  );

  it('expands variables, user and tmux options (options first), the environment, and unknown names to nothing', () => {
    expect(expandFormat('#{pane_id}\t#{@ccb_agent}\t#{@missing}\t#{history-limit}\t#{FOO}\t#{nope}', s)).toBe('%3\tcodex\t\t2000\tbar\t');
    expect(expandFormat('#{update-environment[1]}', s)).toBe('KRB5CCNAME');
  });

  it('reads one-letter aliases and escapes as tmux does', () => {
    expect(expandFormat('#S #D #T ## #, #} #[fg=red] #Z', s)).toBe('ccb %3 vm # , } #[fg=red] #Z');
    expect(expandFormat('##[bold]', s)).toBe('##[bold]');
  });

  it('chooses in conditionals: set and not 0 is true; a name that neither exists nor expands is false', () => {
    expect(expandFormat('#{?pane_active,#{pane_id},}', s)).toBe('%3');
    expect(expandFormat('#{?pane_dead,dead,alive}', s)).toBe('alive');
    expect(expandFormat('#{?@ccb_agent,yes,no} #{?@missing,yes,no} #{?empty,yes,no}', s)).toBe('yes no no');
    expect(expandFormat('#{?#{==:#{window_name},main},match,other}', s)).toBe('match');
    // tmux 3.3 has one condition: the rest is the else branch.
    expect(expandFormat('#{?pane_dead,a,pane_active,b,c}', s)).toBe('pane_active,b,c');
    expect(expandFormat('#{?pane_active,x#,y,z}', s)).toBe('x,y');
  });

  it('compares, matches and does arithmetic', () => {
    expect(expandFormat('#{==:#{session_name},ccb}#{!=:a,b}#{<:a,b}#{>=:a,b}#{||:0,1}#{&&:1,0}', s)).toBe('111010');
    expect(expandFormat('#{m:c*,#{session_name}} #{m:x*,ccb} #{m/r:^c.b$,ccb}', s)).toBe('1 0 1');
    expect(expandFormat('#{e|+|:3,4} #{e|*|:6,7} #{e|/|f|2:1,3}', s)).toBe('7 42 0.33');
  });

  it('applies value modifiers: trim, pad, length, basename, substitution, literal, time', () => {
    expect(expandFormat('#{=2:session_name}|#{=-2:session_name}|#{=/2/…:session_name}|#{p5:session_name}|#{n:session_name}', s)).toBe('cc|cb|cc…|ccb  |3');
    // b: works on a value found by name, not on an expansion (as in tmux 3.3).
    expect(expandFormat('#{b:#{l:/a/b/c}} #{s/c/x/:session_name} #{l:#{pane_id}} #{b:path}', scope({ path: '/a/b/c' }))).toBe('/a/b/c  #{pane_id} c');
    expect(expandFormat('#{s/c/x/:session_name}', s)).toBe('xxb');
    expect(expandFormat('#{t:session_created}', s)).toMatch(/^\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}$/);
  });

  it('runs strftime over display-message templates first', () => {
    const at = new Date(2026, 10, 3, 9, 5, 7);
    expect(expandFormat('%H:%M %d-%b-%y %% #{pane_id}', s, { time: at })).toBe('09:05 03-Nov-26 % %3');
    expect(strftime('%a %b %e %H:%M:%S %Y', at)).toBe('Tue Nov  3 09:05:07 2026');
  });

  it('loops over windows, marking the current one', () => {
    const w = (name: string): FormatScope => scope({ window_name: name });
    const looped = scope({}, {}, {}, { W: [{ scope: w('a'), current: false }, { scope: w('b'), current: true }] });
    expect(expandFormat('#{W:#{window_name} ,[#{window_name}] }', looped)).toBe('a [b] ');
  });

  it('reads truth as tmux does', () => {
    expect([formatTrue('1'), formatTrue('0'), formatTrue(''), formatTrue(undefined), formatTrue('00')]).toEqual([true, false, false, false, true]);
    expect(expandFormat('#{pane_id}', EMPTY_SCOPE)).toBe('');
  });
});
