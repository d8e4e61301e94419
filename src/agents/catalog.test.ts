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

  it('names the file, the profile and the problem when a profile is wrong', () => {
    const file = path.join(scratch(), 'agents.json');
    writeFileSync(file, JSON.stringify({ agents: [{ name: 'Bad Name', binary: { names: [] }, screens: [] }] }));
    expect(() => AgentCatalog.load({ file })).toThrow(/agents\.json: profile 1: invalid agent profile 'Bad Name': name: a lower-case name/);
    writeFileSync(file, '{ not json');
    expect(() => AgentCatalog.load({ file })).toThrow(/cannot read agent profiles from .*agents\.json/);
    writeFileSync(file, JSON.stringify({ something: 1 }));
    expect(() => AgentCatalog.load({ file })).toThrow(/expected a list of agent profiles under "agents"/);
  });
});
