import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KeyFile, keyFileOf, SealedFolder } from '../sealed-store.js';
import { PresetStore } from './preset-store.js';

const mine = { name: 'pair', description: 'a secret plan for the payments refactor', planner: 'lead', roles: [{ name: 'lead', agent: 'claude' }, { name: 'coder', agent: 'codex' }] };

describe('the team preset store', () => {
  let root: string;
  let home: string;
  const storeAt = (keyFile = keyFileOf(home)): PresetStore => new PresetStore(new SealedFolder(path.join(home, 'teams'), new KeyFile(keyFile)));

  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'sb-presets-'));
    home = path.join(root, 'home');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('lists the built-ins until the person saves their own, and keeps theirs sealed', () => {
    const store = storeAt();
    expect(store.list().every((p) => p.builtin)).toBe(true);
    expect(readdirSync(root)).toEqual([]); // nothing written, no key made, by reading
    expect(store.save(mine)).toMatchObject({ replaced: false, preset: { name: 'pair' } });
    expect(store.get('pair')).toMatchObject({ builtin: false, preset: { description: mine.description } });
    const file = path.join(home, 'teams', 'team-presets.v1.enc');
    const sealed = readFileSync(file, 'utf8');
    expect(sealed).not.toContain('payments');
    expect(sealed).not.toContain('pair');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(keyFileOf(home)).mode & 0o777).toBe(0o600);
    expect(keyFileOf(home)).toBe(`${home}.key`);
    // A store made afresh (a restarted daemon) reads it back.
    expect(storeAt().get('pair').preset.roles.map((r) => r.name)).toEqual(['lead', 'coder']);
  });

  it("makes the key beside a home whose parent is a user's ordinary home folder, leaving that folder as it is", () => {
    const userHome = path.join(root, 'user');
    mkdirSync(userHome, { mode: 0o755 });
    chmodSync(userHome, 0o755);
    writeFileSync(path.join(userHome, 'notes.txt'), 'the user’s own file');
    const store = new PresetStore(new SealedFolder(path.join(userHome, '.switchboard', 'teams'), new KeyFile(keyFileOf(path.join(userHome, '.switchboard')))));
    store.save(mine);
    expect(statSync(userHome).mode & 0o777).toBe(0o755);
    expect(readdirSync(userHome).sort()).toEqual(['.switchboard', '.switchboard.key', 'notes.txt']);
    expect(statSync(path.join(userHome, '.switchboard.key')).mode & 0o777).toBe(0o600);
  });

  it('edits by saving again, replaces a built-in by name, and brings the built-in back on remove', () => {
    const store = storeAt();
    store.save(mine);
    expect(store.save({ ...mine, description: 'now two coders', roles: [...mine.roles, { name: 'coder-2', agent: 'gemini' }] }).replaced).toBe(true);
    expect(store.get('pair').preset.roles).toHaveLength(3);
    const builtin = store.get('bug-triage').preset;
    expect(store.save({ ...builtin, description: 'ours' }).replaced).toBe(true);
    expect(store.get('bug-triage')).toMatchObject({ builtin: false, preset: { description: 'ours' } });
    expect(store.remove('bug-triage')).toEqual({ restoredBuiltin: true });
    expect(store.get('bug-triage').builtin).toBe(true);
    expect(() => store.remove('bug-triage')).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS', message: expect.stringContaining('built-in') }));
    expect(() => store.get('nope')).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS', message: expect.stringContaining("no team preset is named 'nope'") }));
  });

  it('exports plain JSON that imports back, and imports YAML and lists', () => {
    const store = storeAt();
    store.save(mine);
    const exported = store.export('pair');
    // Another home's store: a different key, a different folder.
    const elsewhere = new PresetStore(new SealedFolder(path.join(root, 'other', 'teams'), new KeyFile(path.join(root, 'other.key'))));
    expect(elsewhere.import(exported).map((p) => p.name)).toEqual(['pair']);
    expect(elsewhere.get('pair').preset).toEqual(store.get('pair').preset);
    const yaml = 'presets:\n  - name: solo\n    planner: a\n    roles:\n      - {name: a, agent: claude}\n      - {name: b, agent: aider}\n';
    expect(elsewhere.import(yaml).map((p) => p.name)).toEqual(['solo']);
    expect(() => elsewhere.import(exported)).toThrow(expect.objectContaining({ code: 'CONFLICT' }));
    expect(elsewhere.import(exported, { replace: true })).toHaveLength(1);
    // One bad preset of two keeps neither.
    expect(() => elsewhere.import(JSON.stringify([{ ...mine, name: 'fresh' }, { ...mine, name: 'Bad' }]))).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS', message: expect.stringMatching(/^preset 2 of 2: /) }));
    expect(() => elsewhere.get('fresh')).toThrow();
    expect(() => elsewhere.import('- [')).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS' }));
    expect(() => elsewhere.import('[]')).toThrow();
  });

  it('with a missing or wrong key: a clear error, and every file as it was', () => {
    const store = storeAt();
    store.save(mine);
    const file = path.join(home, 'teams', 'team-presets.v1.enc');
    const before = readFileSync(file, 'utf8');
    const keyFile = keyFileOf(home);
    const key = readFileSync(keyFile, 'utf8');
    rmSync(keyFile);
    expect(() => storeAt().list()).toThrow(expect.objectContaining({ code: 'KEY_MISMATCH', message: expect.stringContaining('is missing') }));
    // A save must not make a new key over sealed files, nor write.
    expect(() => storeAt().save({ ...mine, name: 'other' })).toThrow(expect.objectContaining({ code: 'KEY_MISMATCH' }));
    expect(() => readFileSync(keyFile)).toThrow();
    writeFileSync(keyFile, `${'ab'.repeat(32)}\n`, { mode: 0o600 });
    expect(() => storeAt().save({ ...mine, name: 'other' })).toThrow(expect.objectContaining({ code: 'KEY_MISMATCH', message: expect.stringContaining('was sealed with key') }));
    expect(readFileSync(file, 'utf8')).toBe(before);
    writeFileSync(keyFile, 'not a key', { mode: 0o600 });
    expect(() => storeAt().list()).toThrow(expect.objectContaining({ code: 'KEY_MISMATCH', message: expect.stringContaining('is not a sealing key') }));
    // The key back: all there.
    writeFileSync(keyFile, key, { mode: 0o600 });
    expect(storeAt().get('pair').builtin).toBe(false);
  });
});
