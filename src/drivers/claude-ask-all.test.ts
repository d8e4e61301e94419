import { describe, expect, it } from 'vitest';
import { SwitchboardError } from '../core/errors.js';
import { CLAUDE_ASK_ALL_ARGS, refuseArgsThatSilenceQuestions } from './claude-ask-all.js';

function refusal(args: string[]): SwitchboardError | undefined {
  try {
    refuseArgsThatSilenceQuestions(args);
    return undefined;
  } catch (err) {
    if (err instanceof SwitchboardError) return err;
    throw err;
  }
}

describe('Claude Code asking about every tool call', () => {
  it('is one --settings value: an ask rule for every tool, as Claude Code\u2019s settings schema wants it (a list)', () => {
    expect(CLAUDE_ASK_ALL_ARGS).toEqual(['--settings', '{"permissions":{"ask":["*"]}}']);
    const [, value] = CLAUDE_ASK_ALL_ARGS;
    // An ask rule given as a string instead of a list fails validation, and the CLI then drops the
    // whole value without a word: the list is the point.
    expect(JSON.parse(value ?? '')).toEqual({ permissions: { ask: ['*'] } });
  });

  it('refuses a caller\u2019s arguments that would turn the questions off, saying which and why', () => {
    const cases: [string[], RegExp][] = [
      [['--settings', '{"permissions":{"allow":["Bash"]}}'], /--settings/],
      [['--settings=/tmp/s.json'], /--settings/],
      [['--dangerously-skip-permissions'], /--dangerously-skip-permissions/],
      [['--allow-dangerously-skip-permissions'], /--allow-dangerously-skip-permissions/],
      [['--permission-prompt-tool', 'mcp__x__approve'], /--permission-prompt-tool/],
      [['--permission-prompt-tool=stdio'], /--permission-prompt-tool/],
      [['--permission-prompts', 'none'], /--permission-prompts/],
      [['--model', 'x', '--permission-mode', 'bypassPermissions'], /--permission-mode bypassPermissions/],
      [['--permission-mode=bypassPermissions'], /--permission-mode bypassPermissions/],
    ];
    for (const [args, named] of cases) {
      const err = refusal(args);
      expect(err?.code, args.join(' ')).toBe('INVALID_PARAMS');
      expect(err?.message).toMatch(named);
      expect(err?.message).toMatch(/ask/);
      expect(err?.details).toMatchObject({ argument: expect.any(String) });
    }
  });

  it('lets every other argument through, other permission modes included (the ask rule ranks above them)', () => {
    for (const args of [[], ['--model', 'sonnet'], ['--tools', 'Bash,Read,Glob,Grep'], ['--permission-mode', 'acceptEdits'], ['--permission-mode=plan'], ['--allowedTools', 'Bash'], ['--disallowedTools', 'Bash(rm *)'], ['--permission-prompts', 'host']]) {
      expect(refusal(args), args.join(' ')).toBeUndefined();
    }
  });
});
