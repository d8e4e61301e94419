import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AgentCatalog } from '../profiles/catalog.js';
import { defineProfile } from '../profiles/profile.js';
import { readStatusFile, statusFilePath } from './status-file.js';

const home = mkdtempSync(path.join(tmpdir(), 'sb-status-file-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

const claudeSpec = new AgentCatalog().get('claude').data.status_file;
if (!claudeSpec) throw new Error('the claude profile names no status file');
const spec = claudeSpec;

function write(pid: number, content: string): string {
  const file = statusFilePath(spec, home, pid);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
  return file;
}

describe("a CLI's status file (Claude Code's ~/.claude/sessions/<pid>.json)", () => {
  it('reads the states Claude Code reports, with the value as written', () => {
    write(101, JSON.stringify({ pid: 101, status: 'busy' }));
    write(102, JSON.stringify({ pid: 102, status: 'waiting', waitingFor: 'permission prompt' }));
    const file = write(103, JSON.stringify({ pid: 103, status: 'idle' }));
    expect(readStatusFile(spec, home, 101)?.state).toBe('busy');
    expect(readStatusFile(spec, home, 102)).toMatchObject({ state: 'waiting', value: 'waiting' });
    const idle = readStatusFile(spec, home, 103);
    expect(idle).toMatchObject({ state: 'idle', value: 'idle', file });
    expect(idle?.writtenAt).toBeGreaterThan(Date.now() - 60_000);
  });

  it('says nothing for a missing, half-written or unexpected file, and names what it does not know', () => {
    expect(readStatusFile(spec, home, 999)).toBeUndefined();
    write(104, '{"status": "bu');
    expect(readStatusFile(spec, home, 104)).toBeUndefined();
    write(105, JSON.stringify({ status: 3 }));
    expect(readStatusFile(spec, home, 105)).toBeUndefined();
    write(106, '[1, 2]');
    expect(readStatusFile(spec, home, 106)).toBeUndefined();
    write(107, JSON.stringify({ status: 'compacting' }));
    expect(readStatusFile(spec, home, 107)).toMatchObject({ state: 'unknown', value: 'compacting' });
  });

  it('must live inside the home', () => {
    const base = { name: 'x', binary: { names: ['x'] }, screens: [{ versions: '*', idle: ['>'] }], approval_keys: { allow_once: ['y'], deny: ['n'] } };
    expect(() => defineProfile({ ...base, status_file: { path: '../elsewhere/{pid}.json', field: 'status', idle: ['idle'] } }, { builtin: false })).toThrow(/status_file\.path: .* must be a path inside the home/);
    expect(() => defineProfile({ ...base, status_file: { path: '/etc/{pid}.json', field: 'status', idle: ['idle'] } }, { builtin: false })).toThrow(/inside the home/);
  });
});
