import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../core/logger.js';
import type { ShelvedConversation } from '../cluster/index.js';
import { conversationTarget, findConversationFile } from '../runs/index.js';
import { ConversationCarrier } from './conversation-carrier.js';

const CLAUDE_ID = '0f1e2d3c-4b5a-4678-9abc-def012345678';
const CODEX_ID = '019a1b2c-3d4e-7f80-9123-456789abcdef';

let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});
function tempHome(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'sb-carrier-'));
  dirs.push(dir);
  return dir;
}

/** A shelf in memory, counting its writes. */
class MemoryShelf {
  readonly items = new Map<string, ShelvedConversation>();
  puts = 0;
  put(backend: string, conversation: string, copy: ShelvedConversation): Promise<void> {
    this.puts++;
    this.items.set(`${backend}/${conversation}`, { data: Uint8Array.from(copy.data), relative: copy.relative });
    return Promise.resolve();
  }
  get(backend: string, conversation: string): Promise<ShelvedConversation | undefined> {
    return Promise.resolve(this.items.get(`${backend}/${conversation}`));
  }
}

const text = (copy: ShelvedConversation | undefined): string => Buffer.from(copy?.data ?? []).toString();

describe('where a CLI keeps a conversation', () => {
  it("finds Claude Code's transcript under the folder's dashed name, and a copy goes under this host's name for the folder", async () => {
    const home = tempHome();
    const place = { home, cwd: '/work/my repo' };
    expect(await findConversationFile('claude', place, CLAUDE_ID)).toBeUndefined();
    const dir = path.join(home, '.claude', 'projects', '-work-my-repo');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `${CLAUDE_ID}.jsonl`), '{}\n');
    expect(await findConversationFile('claude', place, CLAUDE_ID)).toEqual({ file: path.join(dir, `${CLAUDE_ID}.jsonl`), relative: `projects/-work-my-repo/${CLAUDE_ID}.jsonl` });
    // The place a copy names is not used: the folder's name here is.
    expect(await conversationTarget('claude', place, CLAUDE_ID, '../../.bashrc')).toBe(path.join(dir, `${CLAUDE_ID}.jsonl`));
  });

  it("finds Codex's rollout by its id in the newest day's folder first, under CODEX_HOME when set", async () => {
    const home = tempHome();
    const codexHome = path.join(home, 'elsewhere');
    const name = `rollout-2026-12-04T10-00-00-${CODEX_ID}.jsonl`;
    for (const day of ['2026/11/30', '2026/12/04']) {
      mkdirSync(path.join(codexHome, 'sessions', ...day.split('/')), { recursive: true });
      writeFileSync(path.join(codexHome, 'sessions', ...day.split('/'), `rollout-2026-x-other.jsonl`), '{}\n');
    }
    writeFileSync(path.join(codexHome, 'sessions', '2026', '11', '30', name), '{}\n');
    expect(await findConversationFile('codex', { home, cwd: '/w' }, CODEX_ID)).toBeUndefined();
    expect(await findConversationFile('codex', { home, cwd: '/w', codexHome }, CODEX_ID)).toEqual({ file: path.join(codexHome, 'sessions', '2026', '11', '30', name), relative: `sessions/2026/11/30/${name}` });
  });

  it("takes a Codex copy's place only inside the sessions' dated folders, named with its id", async () => {
    const place = { home: '/h', cwd: '/w' };
    const good = `sessions/2026/11/30/rollout-2026-11-30T01-02-03-${CODEX_ID}.jsonl`;
    expect(await conversationTarget('codex', place, CODEX_ID, good)).toBe(path.join('/h', '.codex', ...good.split('/')));
    for (const bad of [`sessions/2026/11/30/../../../../.bashrc`, `../sessions/2026/11/30/rollout-${CODEX_ID}.jsonl`, `sessions/2026/11/30/rollout-other.jsonl`, `config.toml`, '']) {
      expect(await conversationTarget('codex', place, CODEX_ID, bad)).toBeUndefined();
    }
  });

  it('carries no id that could be a path, and no CLI whose conversations are not files it knows', async () => {
    const place = { home: '/h', cwd: '/w' };
    for (const id of ['../x', 'a/b', '.hidden', '']) expect(await conversationTarget('claude', place, id, '')).toBeUndefined();
    expect(await conversationTarget('gemini', place, CLAUDE_ID, '')).toBeUndefined();
    expect(await findConversationFile('opencode', place, CLAUDE_ID)).toBeUndefined();
  });
});

describe('ConversationCarrier', () => {
  it('keeps a copy of a run’s conversation while it changes, writes it once more at the end, and not again when unchanged', async () => {
    const home = tempHome();
    const shelf = new MemoryShelf();
    const carrier = new ConversationCarrier({ shelf, placeOf: (_backend, cwd) => ({ home, cwd }), logger: silentLogger, lookEveryMs: 10 });
    try {
      // Said before the CLI has written its file: looked for again at each look.
      carrier.carry('run-1', 'claude', '/w', CLAUDE_ID);
      const file = path.join(home, '.claude', 'projects', '-w', `${CLAUDE_ID}.jsonl`);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, 'first\n');
      await expect.poll(async () => text(await shelf.get('claude', CLAUDE_ID)), { timeout: 10_000 }).toBe('first\n');
      appendFileSync(file, 'second\n');
      await expect.poll(async () => text(await shelf.get('claude', CLAUDE_ID)), { timeout: 10_000 }).toBe('first\nsecond\n');
      expect((await shelf.get('claude', CLAUDE_ID))?.relative).toBe(`projects/-w/${CLAUDE_ID}.jsonl`);
      // Written between two looks: the end writes it.
      appendFileSync(file, 'third\n');
      await carrier.finish('run-1');
      expect(text(await shelf.get('claude', CLAUDE_ID))).toBe('first\nsecond\nthird\n');
      const puts = shelf.puts;
      carrier.carry('run-2', 'claude', '/w', CLAUDE_ID);
      await carrier.finish('run-2');
      // The next run of the same conversation found it as written: nothing sent again.
      expect(shelf.puts).toBe(puts);
    } finally {
      carrier.dispose();
    }
  });

  it('writes a copy at once when asked (a resume elsewhere is about to take it), not waiting for its next look', async () => {
    const home = tempHome();
    const shelf = new MemoryShelf();
    // Looked at once an hour: only the ask writes it.
    const carrier = new ConversationCarrier({ shelf, placeOf: (_backend, cwd) => ({ home, cwd }), logger: silentLogger, lookEveryMs: 3_600_000 });
    try {
      expect(await carrier.shelveNow('claude', CLAUDE_ID)).toBe(false);
      const file = path.join(home, '.claude', 'projects', '-w', `${CLAUDE_ID}.jsonl`);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, 'first\n');
      carrier.carry('run-1', 'claude', '/w', CLAUDE_ID);
      await expect.poll(async () => text(await shelf.get('claude', CLAUDE_ID)), { timeout: 10_000 }).toBe('first\n');
      appendFileSync(file, 'second\n');
      expect(await carrier.shelveNow('claude', CLAUDE_ID)).toBe(true);
      expect(text(await shelf.get('claude', CLAUDE_ID))).toBe('first\nsecond\n');
      // Ended: its last copy is what an ask waits for.
      appendFileSync(file, 'third\n');
      void carrier.finish('run-1');
      expect(await carrier.shelveNow('claude', CLAUDE_ID)).toBe(true);
      expect(text(await shelf.get('claude', CLAUDE_ID))).toBe('first\nsecond\nthird\n');
      expect(await carrier.shelveNow('codex', CODEX_ID)).toBe(false);
    } finally {
      carrier.dispose();
    }
  });

  it('puts a shelved copy where the CLI reads it (0600, whole), over a file here only when the copy goes on from it', async () => {
    const home = tempHome();
    const shelf = new MemoryShelf();
    const carrier = new ConversationCarrier({ shelf, placeOf: (_backend, cwd) => ({ home, cwd }), logger: silentLogger });
    const relative = `projects/-elsewhere/${CLAUDE_ID}.jsonl`;
    expect(await carrier.restore('claude', '/w', CLAUDE_ID)).toBe('none');
    await shelf.put('claude', CLAUDE_ID, { data: Buffer.from('turn 1\n'), relative });
    expect(await carrier.restore('claude', '/w', CLAUDE_ID)).toBe('restored');
    const file = path.join(home, '.claude', 'projects', '-w', `${CLAUDE_ID}.jsonl`);
    expect(readFileSync(file, 'utf8')).toBe('turn 1\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // A turn here the copy lacks: the file here is further on, and kept.
    appendFileSync(file, 'turn 2 here\n');
    expect(await carrier.restore('claude', '/w', CLAUDE_ID)).toBe('here');
    expect(readFileSync(file, 'utf8')).toBe('turn 1\nturn 2 here\n');
    // The conversation went on elsewhere from there (resumed on another host, and back): the copy replaces it.
    await shelf.put('claude', CLAUDE_ID, { data: Buffer.from('turn 1\nturn 2 here\nturn 3 elsewhere\n'), relative });
    expect(await carrier.restore('claude', '/w', CLAUDE_ID)).toBe('restored');
    expect(readFileSync(file, 'utf8')).toBe('turn 1\nturn 2 here\nturn 3 elsewhere\n');
    // A copy that differs from the file here otherwise: the CLI's own file is kept.
    await shelf.put('claude', CLAUDE_ID, { data: Buffer.from('another story altogether\n'), relative });
    expect(await carrier.restore('claude', '/w', CLAUDE_ID)).toBe('here');
    expect(readFileSync(file, 'utf8')).toBe('turn 1\nturn 2 here\nturn 3 elsewhere\n');
    // Nothing left beside it.
    expect(readdirSync(path.dirname(file))).toEqual([`${CLAUDE_ID}.jsonl`]);
    // A copy naming a place the CLI does not read from is not put anywhere.
    await shelf.put('codex', CODEX_ID, { data: Buffer.from('x'), relative: '../../.profile' });
    expect(await carrier.restore('codex', '/w', CODEX_ID)).toBe('none');
    expect(await findConversationFile('codex', { home, cwd: '/w' }, CODEX_ID)).toBeUndefined();
  });

  it('writes the last copies of ended runs before a stop, and looks at nothing once disposed', async () => {
    const home = tempHome();
    const shelf = new MemoryShelf();
    const carrier = new ConversationCarrier({ shelf, placeOf: (_backend, cwd) => ({ home, cwd }), logger: silentLogger, lookEveryMs: 60_000 });
    const file = path.join(home, '.claude', 'projects', '-w', `${CLAUDE_ID}.jsonl`);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, 'all of it\n');
    carrier.carry('run-1', 'claude', '/w', CLAUDE_ID);
    void carrier.finish('run-1');
    await carrier.drained(30_000);
    expect(text(await shelf.get('claude', CLAUDE_ID))).toBe('all of it\n');
    carrier.dispose();
    const puts = shelf.puts;
    appendFileSync(file, 'more\n');
    carrier.carry('run-2', 'claude', '/w', CLAUDE_ID);
    await carrier.finish('run-2');
    expect(shelf.puts).toBe(puts);
  });
});
