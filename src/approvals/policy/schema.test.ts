import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../core/errors.js';
import { loadPolicyFile, parsePolicy } from './schema.js';

function problemOf(fn: () => unknown): { message: string; problems: unknown } {
  try {
    fn();
  } catch (err) {
    if (!isSwitchboardError(err, 'INVALID_PARAMS')) throw err;
    return { message: err.message, problems: err.details?.problems };
  }
  throw new Error('expected INVALID_PARAMS');
}

describe('parsePolicy', () => {
  it('accepts a full policy and keeps only the keys given', () => {
    const policy = parsePolicy({
      default: 'deny',
      rules: [
        { decision: 'allow', tool: ['shell', 'file_read'], path: 'inside_workdir', reason: 'local work' },
        { decision: 'ask', tool: 'network' },
        { decision: 'deny', command: '^git push', path: '~/.ssh/**' },
        { decision: 'deny', tool: 'internal', command: '^Agent$' },
      ],
    });
    expect(policy).toEqual({
      default: 'deny',
      rules: [
        { decision: 'allow', tool: ['shell', 'file_read'], path: 'inside_workdir', reason: 'local work' },
        { decision: 'ask', tool: 'network' },
        { decision: 'deny', command: '^git push', path: '~/.ssh/**' },
        { decision: 'deny', tool: 'internal', command: '^Agent$' },
      ],
    });
  });

  it('defaults to no rules and asking', () => {
    expect(parsePolicy({})).toEqual({ rules: [], default: 'ask' });
  });

  it.each([
    [{ rules: [{ decision: 'maybe' }] }, /^invalid approval policy: rules\[0\]\.decision: Invalid option: expected one of "allow"\|"deny"\|"ask"$/],
    [{ rules: [{ decision: 'allow' }, { decision: 'ask', tool: 'bash' }] }, /rules\[1\]\.tool: /],
    [{ rules: [{ decision: 'allow', tool: [] }] }, /rules\[0\]\.tool/],
    [{ rules: [{ decision: 'allow', comand: 'x' }] }, /rules\[0\]: unknown key 'comand'/],
    [{ rules: [{ decision: 'allow', command: '(' }] }, /rules\[0\]\.command: invalid regular expression/],
    [{ rules: [{ decision: 'allow', command: '(?=x)' }] }, /rules\[0\]\.command: pattern needs backtracking/],
    [{ rules: [{ decision: 'allow', path: '' }] }, /rules\[0\]\.path: /],
    [{ rules: {} }, /^invalid approval policy: rules: /],
    [{ default: 'yes' }, /^invalid approval policy: default: /],
    [{ version: 2 }, /unknown key 'version'/],
    [null, /^invalid approval policy: /],
    ['allow', /^invalid approval policy: /],
  ])('rejects %j with a message that says where', (input, message) => {
    expect(problemOf(() => parsePolicy(input)).message).toMatch(message);
  });

  it('reports every problem, each in details.problems', () => {
    const { problems } = problemOf(() => parsePolicy({ rules: [{ decision: 'x' }, { decision: 'allow', tool: 'y' }] }));
    expect(problems).toHaveLength(2);
  });
});

describe('loadPolicyFile', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sb-policy-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string): string => {
    const file = path.join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  it('reads YAML and JSON', () => {
    const yaml = write('p.yaml', 'default: ask\nrules:\n  - decision: allow\n    tool: [shell, file_read]\n    path: inside_workdir\n');
    expect(loadPolicyFile(yaml)).toEqual({ default: 'ask', rules: [{ decision: 'allow', tool: ['shell', 'file_read'], path: 'inside_workdir' }] });
    const json = write('p.json', JSON.stringify({ default: 'deny', rules: [] }));
    expect(loadPolicyFile(json)).toEqual({ default: 'deny', rules: [] });
    expect(loadPolicyFile(write('p.yml', 'rules: []'))).toEqual({ default: 'ask', rules: [] });
  });

  it('names the file and the place of a schema problem', () => {
    const file = write('bad.yaml', 'rules:\n  - decision: allow\n  - decision: never\n');
    const { message } = problemOf(() => loadPolicyFile(file));
    expect(message).toContain(file);
    expect(message).toMatch(/rules\[1\]\.decision/);
  });

  it('names the file for syntax errors, unknown extensions and missing files', () => {
    expect(problemOf(() => loadPolicyFile(write('broken.yaml', 'rules: [\n'))).message).toMatch(/broken\.yaml: not valid YAML/);
    expect(problemOf(() => loadPolicyFile(write('broken.json', '{'))).message).toMatch(/broken\.json: not valid JSON/);
    expect(problemOf(() => loadPolicyFile(write('p.toml', ''))).message).toMatch(/must end in \.yaml, \.yml or \.json/);
    expect(problemOf(() => loadPolicyFile(path.join(dir, 'missing.yaml'))).message).toMatch(/cannot read approval policy .*missing\.yaml/);
  });
});
