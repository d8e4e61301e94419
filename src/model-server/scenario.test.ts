import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isSwitchboardError, type SwitchboardError } from '../core/errors.js';
import { HELLO_SCENARIO, loadScenario, parseScenario, type Scenario } from './scenario.js';

/** The error parseScenario throws for `data`; fails the test when it accepts the data instead. */
function rejection(data: unknown): SwitchboardError {
  try {
    parseScenario(data);
  } catch (err) {
    if (isSwitchboardError(err)) return err;
    throw err;
  }
  throw new Error(`parseScenario accepted ${JSON.stringify(data)}`);
}

/** A scenario whose only rule has the single step `step`. */
const oneStep = (step: unknown): unknown => ({ name: 'one', rules: [{ steps: [step] }] });

describe('parseScenario on good scenarios', () => {
  it('accepts every step kind with every optional field and returns the data unchanged', () => {
    const scenario: Scenario = {
      name: 'everything',
      description: 'every step kind once',
      title: 'A scripted title',
      rules: [
        {
          match: 'write (a|the) file',
          steps: [
            { text: 'Running it.', tool: 'shell', command: 'echo hi > f.txt', description: 'Write f.txt', escalate: true, delay_ms: 5, chunk_chars: 3, chunk_delay_ms: 1 },
            { tool: 'write', path: 'notes.txt', content: 'one\ntwo\n' },
            { text: 'Editing.', tool: 'edit', path: '/abs/notes.txt', old: 'one', new: '' },
            { error: 429, message: 'slow down', delay_ms: 0 },
            { text: 'Done.', chunk_chars: 100_000, chunk_delay_ms: 60_000, delay_ms: 600_000 },
          ],
        },
        { steps: [{ text: '' }] },
      ],
    };
    expect(parseScenario(structuredClone(scenario))).toEqual(scenario);
  });

  // Every status the scripted model knows how to render must be accepted in a scenario.
  it.each([500, 429, 529, 503, 400, 401])('accepts error status %i', (status) => {
    const parsed = parseScenario(oneStep({ error: status }));
    expect(parsed.rules[0]?.steps[0]).toEqual({ error: status });
  });

  it('accepts a rule with no match pattern (it matches any prompt)', () => {
    expect(parseScenario({ name: 'any', rules: [{ steps: [{ text: 'hi' }] }] }).rules[0]?.match).toBeUndefined();
  });

  // The built-in default goes through the same validation as a file would.
  it('accepts the built-in hello scenario', () => {
    expect(parseScenario(structuredClone(HELLO_SCENARIO))).toEqual(HELLO_SCENARIO);
  });
});

describe('parseScenario on bad scenarios', () => {
  it('throws INVALID_PARAMS, prefixed "invalid scenario:"', () => {
    const err = rejection({});
    expect(err.code).toBe('INVALID_PARAMS');
    expect(err.message).toMatch(/^invalid scenario: /);
  });

  // Each case names the field at fault, so the author of a scenario file can find it.
  it.each<[string, unknown, RegExp]>([
    ['a string instead of an object', 'hello', /expected object, received string/],
    ['null', null, /expected object, received null/],
    ['an array', [], /expected object, received array/],
    ['no name', { rules: [{ steps: [{ text: 'x' }] }] }, /: name: .*expected string, received undefined/],
    ['an empty name', { name: '', rules: [{ steps: [{ text: 'x' }] }] }, /: name: Too small/],
    ['a numeric name', { name: 3, rules: [{ steps: [{ text: 'x' }] }] }, /: name: .*received number/],
    ['a numeric description', { name: 'a', description: 1, rules: [{ steps: [{ text: 'x' }] }] }, /: description: .*received number/],
    ['a numeric title', { name: 'a', title: 5, rules: [{ steps: [{ text: 'x' }] }] }, /: title: .*received number/],
    ['no rules', { name: 'a' }, /: rules: .*expected array, received undefined/],
    ['rules as an object', { name: 'a', rules: {} }, /: rules: .*expected array, received object/],
    ['an empty rule list', { name: 'a', rules: [] }, /: rules: Too small/],
    ['a rule with no steps', { name: 'a', rules: [{ match: 'x' }] }, /: rules\[0\]\.steps: .*expected array/],
    ['a rule with an empty step list', { name: 'a', rules: [{ steps: [] }] }, /: rules\[0\]\.steps: Too small/],
    ['a later rule with an empty step list', { name: 'a', rules: [{ steps: [{ text: 'ok' }] }, { match: 'x', steps: [] }] }, /: rules\[1\]\.steps: Too small/],
    ['a numeric match pattern', { name: 'a', rules: [{ match: 5, steps: [{ text: 'x' }] }] }, /: rules\[0\]\.match: .*received number/],
    ['an unknown top-level field', { name: 'a', extra: 1, rules: [{ steps: [{ text: 'x' }] }] }, /unknown parameter 'extra'/],
    ['an unknown rule field', { name: 'a', rules: [{ when: 'x', steps: [{ text: 'x' }] }] }, /unknown parameter 'when'/],
    ['an unknown text-step field', oneStep({ text: 'x', colour: 'red' }), /unknown parameter 'colour'/],
    ['an unknown shell-step field', oneStep({ tool: 'shell', command: 'ls', cwd: '/x' }), /unknown parameter 'cwd'/],
    ['an unknown error-step field', oneStep({ error: 500, retry: true }), /unknown parameter 'retry'/],
    ['an empty shell command', oneStep({ tool: 'shell', command: '' }), /: rules\[0\]\.steps\[0\]\.command: Too small/],
    ['an empty write path', oneStep({ tool: 'write', path: '', content: 'x' }), /: rules\[0\]\.steps\[0\]\.path: Too small/],
    ['an empty edit path', oneStep({ tool: 'edit', path: '', old: 'x', new: 'y' }), /: rules\[0\]\.steps\[0\]\.path: Too small/],
    ['an empty edit old text', oneStep({ tool: 'edit', path: 'f', old: '', new: 'y' }), /: rules\[0\]\.steps\[0\]\.old: Too small/],
    ['a negative delay', oneStep({ text: 'x', delay_ms: -1 }), /: rules\[0\]\.steps\[0\]\.delay_ms: Too small/],
    ['a delay over ten minutes', oneStep({ text: 'x', delay_ms: 600_001 }), /: rules\[0\]\.steps\[0\]\.delay_ms: Too big/],
    ['a negative delay on an error step', oneStep({ error: 500, delay_ms: -5 }), /: rules\[0\]\.steps\[0\]\.delay_ms: Too small/],
    ['zero characters per chunk', oneStep({ text: 'x', chunk_chars: 0 }), /: rules\[0\]\.steps\[0\]\.chunk_chars: Too small/],
    ['too many characters per chunk', oneStep({ text: 'x', chunk_chars: 100_001 }), /: rules\[0\]\.steps\[0\]\.chunk_chars: Too big/],
    ['a chunk pause over a minute', oneStep({ text: 'x', chunk_delay_ms: 60_001 }), /: rules\[0\]\.steps\[0\]\.chunk_delay_ms: Too big/],
    ['a problem in a later step', { name: 'a', rules: [{ steps: [{ text: 'ok' }, { text: 'x', delay_ms: -1 }] }] }, /: rules\[0\]\.steps\[1\]\.delay_ms: Too small/],
  ])('rejects %s, naming the field', (_label, data, message) => {
    const err = rejection(data);
    expect(err.code).toBe('INVALID_PARAMS');
    expect(err.message).toMatch(message);
  });

  it('names every problem at once, not just the first', () => {
    const err = rejection({ name: '', rules: [] });
    expect(err.message).toMatch(/name: Too small/);
    expect(err.message).toMatch(/rules: Too small/);
  });

  // The pattern is compiled up front, so a typo fails when the scenario loads, not mid-run.
  it('rejects a match pattern that is not a valid regular expression, quoting it', () => {
    const err = rejection({ name: 'a', rules: [{ steps: [{ text: 'ok' }] }, { match: '(unclosed', steps: [{ text: 'x' }] }] });
    expect(err.code).toBe('INVALID_PARAMS');
    expect(err.message).toMatch(/^invalid scenario: bad match pattern "\(unclosed": Invalid regular expression/);
  });

  // These steps fit no step kind at all. The step is rejected and located (the exact messages are
  // checked in 'parseScenario on a bad step').
  it.each<[string, unknown]>([
    ['an empty step', {}],
    ['a shell step with no command', { tool: 'shell' }],
    ['an unknown tool', { tool: 'browse', url: 'https://example.com' }],
    ['a write step with no content', { tool: 'write', path: 'f' }],
    ['an edit step with no old text', { tool: 'edit', path: 'f', new: 'y' }],
    ['an error status the model cannot render', { error: 404 }],
    ['an error status given as a string', { error: '500' }],
    ['a numeric text', { text: 5 }],
    ['a fractional delay', { text: 'x', delay_ms: 1.5 }],
    ['escalate as a string', { tool: 'shell', command: 'ls', escalate: 'yes' }],
  ])('rejects %s, locating the step', (_label, step) => {
    const err = rejection(oneStep(step));
    expect(err.code).toBe('INVALID_PARAMS');
    expect(err.message).toMatch(/^invalid scenario: rules\[0\]\.steps\[0\]/);
  });
});

// A step's kind is decided by its key (tool, then error, then text) and the step is checked against
// that kind alone, so the message names the field at fault instead of a union's "Invalid input".
describe('parseScenario on a bad step', () => {
  /** A scenario whose second step is `step`, so the index in the path is checked too. */
  const secondStep = (step: unknown): unknown => ({ name: 'two', rules: [{ steps: [{ text: 'ok' }, step] }] });

  it.each<[string, unknown, string]>([
    ['a shell step with no command', { tool: 'shell' }, 'rules[0].steps[1].command: Invalid input: expected string, received undefined'],
    ['a numeric shell command', { tool: 'shell', command: 5 }, 'rules[0].steps[1].command: Invalid input: expected string, received number'],
    ['escalate as a string', { tool: 'shell', command: 'ls', escalate: 'yes' }, 'rules[0].steps[1].escalate: Invalid input: expected boolean, received string'],
    ['a write step with no content', { tool: 'write', path: 'f' }, 'rules[0].steps[1].content: Invalid input: expected string, received undefined'],
    ['an edit step with no old text', { tool: 'edit', path: 'f', new: 'y' }, 'rules[0].steps[1].old: Invalid input: expected string, received undefined'],
    ['an unknown tool', { tool: 'browse', url: 'https://example.com' }, `rules[0].steps[1].tool: unknown tool "browse"; expected one of 'shell', 'write', 'edit', 'mcp'`],
    ['a numeric tool', { tool: 5 }, `rules[0].steps[1].tool: unknown tool 5; expected one of 'shell', 'write', 'edit', 'mcp'`],
    ['an error status the model cannot render', { error: 404 }, 'rules[0].steps[1].error: Invalid option: expected one of 500|429|529|503|400|401'],
    ['an error status given as a string', { error: '500' }, 'rules[0].steps[1].error: Invalid option: expected one of 500|429|529|503|400|401'],
    ['a numeric text', { text: 5 }, 'rules[0].steps[1].text: Invalid input: expected string, received number'],
    ['a fractional delay', { text: 'x', delay_ms: 1.5 }, 'rules[0].steps[1].delay_ms: Invalid input: expected int, received number'],
    ['a string instead of a step', 'hello', 'rules[0].steps[1]: Invalid input: expected object, received string'],
  ])('names the field at fault in %s', (_label, step, message) => {
    expect(rejection(secondStep(step)).message).toBe(`invalid scenario: ${message}`);
  });

  it('says which keys make a step when it has none of them', () => {
    expect(rejection(secondStep({})).message).toBe(`invalid scenario: rules[0].steps[1]: a step needs one of the keys 'tool', 'error', 'text'`);
    expect(rejection(secondStep({ command: 'ls', cwd: '/x' })).message).toBe(`invalid scenario: rules[0].steps[1]: a step needs one of the keys 'tool', 'error', 'text'; it has 'command', 'cwd'`);
  });

  // A tool step may say something too, but a key of another kind is a mistake, reported as unknown.
  it.each<[string, unknown, string]>([
    ['a tool step with an error', { tool: 'shell', command: 'ls', error: 500 }, `rules[0].steps[1]: unknown parameter 'error'`],
    ['an error step with text', { error: 500, text: 'x' }, `rules[0].steps[1]: unknown parameter 'text'`],
  ])('decides the kind by its first kind key in %s', (_label, step, message) => {
    expect(rejection(secondStep(step)).message).toBe(`invalid scenario: ${message}`);
  });

  it('locates unknown keys in a step and in a rule', () => {
    expect(rejection(secondStep({ text: 'x', colour: 'red', size: 1 })).message).toBe(`invalid scenario: rules[0].steps[1]: unknown parameters 'colour', 'size'`);
    expect(rejection({ name: 'a', rules: [{ steps: [{ text: 'x' }] }, { when: 'x', steps: [{ text: 'x' }] }] }).message).toBe(`invalid scenario: rules[1]: unknown parameter 'when'`);
  });

  it('still names an unknown top-level key without a path', () => {
    expect(rejection({ name: 'a', extra: 1, rules: [{ steps: [{ text: 'x' }] }] }).message).toBe(`invalid scenario: unknown parameter 'extra'`);
  });

  it('names every bad step at once', () => {
    const err = rejection({ name: 'a', rules: [{ steps: [{ tool: 'shell' }, { text: 'ok' }, { error: 404 }] }] });
    expect(err.message).toMatch(/rules\[0\]\.steps\[0\]\.command: /);
    expect(err.message).toMatch(/rules\[0\]\.steps\[2\]\.error: /);
  });
});

describe('loadScenario', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });
  const file = (name: string, content: string): string => {
    dir ??= mkdtempSync(path.join(tmpdir(), 'sb-scenario-'));
    const full = path.join(dir, name);
    writeFileSync(full, content);
    return full;
  };

  it('reads and validates a scenario file', () => {
    const scenario = { name: 'from-file', title: 'T', rules: [{ match: 'hello', steps: [{ text: 'Hi.' }] }] };
    expect(loadScenario(file('s.json', JSON.stringify(scenario, null, 2)))).toEqual(scenario);
  });

  it('reads a scenario written in YAML', () => {
    const yaml = 'name: from-yaml\ntitle: T\nrules:\n  - match: hello\n    steps:\n      - text: Hi.\n';
    expect(loadScenario(file('s.yaml', yaml))).toEqual({ name: 'from-yaml', title: 'T', rules: [{ match: 'hello', steps: [{ text: 'Hi.' }] }] });
    expect(() => loadScenario(file('bad.yml', 'rules: [\n'))).toThrow(/^cannot read scenario .*bad\.yml/);
  });

  it('names the file when it does not exist', () => {
    const missing = path.join(tmpdir(), 'sb-no-such-dir', 'missing.json');
    expect(() => loadScenario(missing)).toThrow(`cannot read scenario ${missing}: ENOENT`);
  });

  it('names the file when it is not JSON', () => {
    const bad = file('bad.json', '{ name: "unquoted" ');
    let thrown: unknown;
    try {
      loadScenario(bad);
    } catch (err) {
      thrown = err;
    }
    expect(isSwitchboardError(thrown, 'INVALID_PARAMS')).toBe(true);
    expect((thrown as Error).message).toMatch(new RegExp(`^cannot read scenario ${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*JSON`));
  });

  it('reports schema problems of a well-formed file like parseScenario does', () => {
    expect(() => loadScenario(file('empty-rules.json', '{"name":"x","rules":[]}'))).toThrow(/^invalid scenario: rules: Too small/);
  });
});
