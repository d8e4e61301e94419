import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AgentCatalog, BUILTIN_PROFILES } from './catalog.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});
const scratch = (): string => (dir = mkdtempSync(path.join(tmpdir(), 'sb-agents-')));

const USER_YAML = `
agents:
  - name: goose
    display_name: Goose
    binary: { names: [goose], env: GOOSE_BIN }
    interactive_args: [session]
    env: { GOOSE_MODE: approve }
    screens:
      - versions: ">=1.0.0"
        idle: [{ pattern: "^\\\\( O\\\\)>", rows: 2 }]
        busy: ["thinking\\\\.\\\\.\\\\."]
        approval: ["Allow this command\\\\?"]
    approval_keys: { allow_once: [y, Enter], deny: [n, Enter] }
    home_files:
      .config/goose/config.yaml: "GOOSE_PROVIDER: openai\\nOPENAI_HOST: {model_url}\\n"
`;

describe('AgentCatalog', () => {
  it('knows the built-in agents', () => {
    const catalog = new AgentCatalog();
    expect(catalog.list().map((p) => p.data.name)).toEqual(['claude', 'codex', 'gemini', 'opencode', 'aider', 'shell']);
    expect(BUILTIN_PROFILES.every((p) => p.builtin)).toBe(true);
    expect(() => catalog.get('cursor')).toThrow("unknown agent 'cursor' (known: claude, codex, gemini, opencode, aider, shell)");
  });

  it('adds user profiles from agents.yaml in the home, with their data validated', () => {
    const home = scratch();
    writeFileSync(path.join(home, 'agents.yaml'), USER_YAML);
    const catalog = AgentCatalog.load({ home });
    const goose = catalog.get('goose');
    expect(goose.builtin).toBe(false);
    expect(goose.data).toMatchObject({ display_name: 'Goose', interactive_args: ['session'], env: { GOOSE_MODE: 'approve' } });
    expect(goose.data.input.separate_enter).toBe(true);
    const launch = goose.prepareSandbox({ home: path.join(home, 'sandbox'), modelUrl: 'http://127.0.0.1:9', cwd: home });
    expect(launch.env.HOME).toBe(path.join(home, 'sandbox'));
    expect(catalog.find('claude')?.builtin).toBe(true);
  });

  it('puts the private temporary folders of its agents under the home it was loaded for', () => {
    const home = scratch();
    expect(AgentCatalog.load({ home }).tempRoot).toBe(path.join(home, 'tmp'));
  });

  it('reads a JSON list from an explicit file, and lets a user profile replace a built-in', () => {
    const file = path.join(scratch(), 'profiles.json');
    writeFileSync(
      file,
      JSON.stringify([{ name: 'claude', binary: { names: ['claude-wrapper'] }, screens: [{ versions: '*', idle: ['READY'] }], approval_keys: { allow_once: ['1'], deny: ['Escape'] } }]),
    );
    const claude = AgentCatalog.load({ file }).get('claude');
    expect(claude.builtin).toBe(false);
    expect(claude.data.binary.names).toEqual(['claude-wrapper']);
  });

  it('names the file, the profile and the problem when a profile is wrong, and keeps the sound ones', () => {
    const file = path.join(scratch(), 'agents.json');
    const good = { name: 'good', binary: { names: ['good'] }, screens: [{ versions: '*', idle: ['READY'] }], approval_keys: { allow_once: ['y'], deny: ['n'] } };
    writeFileSync(file, JSON.stringify({ agents: [{ name: 'Bad Name', binary: { names: [] }, screens: [] }, null, good] }));
    const catalog = AgentCatalog.load({ file });
    expect(catalog.problems).toHaveLength(2);
    expect(catalog.problems[0]).toMatch(/agents\.json: profile 1: invalid agent profile 'Bad Name': name: a lower-case name/);
    expect(catalog.problems[1]).toMatch(/agents\.json: profile 2: invalid agent profile '\?'/);
    expect(catalog.get('good').builtin).toBe(false);
    expect(catalog.get('claude').builtin).toBe(true);

    writeFileSync(file, '{ not json');
    expect(AgentCatalog.load({ file }).problems).toEqual([expect.stringMatching(/cannot read agent profiles from .*agents\.json/)]);
    writeFileSync(file, JSON.stringify({ something: 1 }));
    expect(AgentCatalog.load({ file }).problems).toEqual([expect.stringMatching(/expected a list of agent profiles under "agents"/)]);
    writeFileSync(file, JSON.stringify([good, good]));
    expect(AgentCatalog.load({ file }).problems).toEqual([expect.stringMatching(/profile 2: 'good' is defined twice/)]);
  });

  it('refuses, at load, what would otherwise fail on the first screen or during a start', () => {
    const file = path.join(scratch(), 'agents.yaml');
    const profile = (extra: string): string => `
agents:
  - name: broken
    binary: { names: [broken] }
    screens:
      - versions: ">=1"
        idle: ["ready"]
${extra}
    approval_keys: { allow_once: [y], deny: [n] }
`;
    const problemsOf = (extra: string, top = ''): string[] => {
      writeFileSync(file, profile(extra) + top);
      return AgentCatalog.load({ file }).problems;
    };
    expect(problemsOf('        busy: [{ pattern: "(unclosed" }]')).toEqual([expect.stringMatching(/screens\.0\.busy\.0: invalid regular expression/)]);
    expect(problemsOf('        busy: [{ pattern: "(?<=x)y" }]')).toEqual([expect.stringMatching(/screens\.0\.busy\.0: pattern needs backtracking/)]);
    expect(problemsOf('        busy: [{ pattern: "x", flags: "u" }]')).toEqual([expect.stringMatching(/flags are i, m and s/)]);
    // "m" is implied; giving it again is harmless.
    expect(problemsOf('        busy: [{ pattern: "x", flags: "mi" }]')).toEqual([]);
    expect(problemsOf('        dialogs: [{ id: trust, when: ["Trust"], decides: trust_folder, accept: [Entr], decline: [Escape] }]')).toEqual([
      expect.stringMatching(/screens\.0\.dialogs\.0\.accept: .*Entr/),
    ]);
    // Choosing by label reads the menu by its shape when the dialog gives no option pattern (issue 10:
    // dialogs answered by meaning on releases no pattern has seen); a pattern given must name the
    // label and the highlight.
    expect(problemsOf('        dialogs: [{ id: nudge, when: ["Try"], decides: keep_current_model, accept: { choose: "^Use" }, decline: [Enter] }]')).toEqual([]);
    expect(problemsOf('        dialogs: [{ id: nudge, when: ["Try"], decides: keep_current_model, options: { pattern: "^\\\\d+\\\\. (?<label>.*)" }, accept: { choose: "^Use" }, decline: [Enter] }]')).toEqual([
      expect.stringMatching(/screens\.0\.dialogs\.0\.options\.pattern: needs a group named 'selected'/),
    ]);
    expect(problemsOf('        dialogs: [{ id: nudge, when: ["Try"], decides: keep_current_model, options: { pattern: "^(?<selected>›)? *(?<label>.*)" }, accept: { choose: "(?<x>Use)" }, decline: { choose: "^Try" } }]')).toEqual([
      expect.stringMatching(/screens\.0\.dialogs\.0\.accept\.choose: unknown group 'x'/),
    ]);
    writeFileSync(file, profile('').replace('">=1"', '"^2.1"'));
    expect(AgentCatalog.load({ file }).problems).toEqual([expect.stringMatching(/screens\.0\.versions: '\^2\.1' is not a version range/)]);
    writeFileSync(file, `${profile('')}    home_files: { "../escape": "x" }\n`);
    expect(AgentCatalog.load({ file }).problems).toEqual([expect.stringMatching(/home_files: '\.\.\/escape' must be a file path inside the home/)]);
  });
});
