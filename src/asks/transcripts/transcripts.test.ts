import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { claudeFold } from './claude.js';
import { codexFold } from './codex.js';
import { geminiFold } from './gemini.js';
import { dashedCwd } from '../../agents/index.js';
import { transcriptDirs, type TranscriptLocation } from './locate.js';
import { askIdIn, askMarker, markQuestion, newAskId, withoutMarkers } from './marker.js';
import { askRowsSql, readOpenCodeRows, type OpenCodeRow } from './opencode.js';
import { createTranscriptReader } from './reader.js';
import type { TranscriptFold } from './types.js';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const RECORDED = path.join(root, 'test', 'fixtures', 'transcripts');
const SHARED = path.join(root, 'test', 'fixtures', 'cli-captures');
/** The ids scripts/record-transcripts.ts gave its two asks. */
const IDS = { text: 'a1b2c3d4e5', tool: 'f6e5d4c3b2' } as const;
const REPLIES = { text: 'Paris is the capital of France.', tool: 'The folder holds notes.txt.' } as const;

function recordedFile(agent: string, test: (name: string) => boolean = () => true): string {
  const dir = path.join(RECORDED, agent);
  const name = readdirSync(dir).find((f) => f.endsWith('.jsonl') && test(f));
  if (!name) throw new Error(`no recording for ${agent}`);
  return path.join(dir, name);
}

const records = (file: string): unknown[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as unknown);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- every fold, whatever its state
function foldAll(fold: TranscriptFold<any>, recs: readonly unknown[], id: string): ReturnType<TranscriptFold<unknown>['view']> {
  let state = fold.initial(id);
  for (const r of recs) state = fold.step(state, r);
  return fold.view(state);
}

/** For every prefix of the records: once the fold says done, the reply is whole (never an early end). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function doneOnlyWhenWhole(fold: TranscriptFold<any>, recs: readonly unknown[], id: string, reply: string): number {
  let state = fold.initial(id);
  let firstDone = -1;
  recs.forEach((r, i) => {
      state = fold.step(state, r);
    const view = fold.view(state);
    if (view.done && firstDone < 0) firstDone = i;
    if (view.done) expect(view.reply).toBe(reply);
  });
  return firstDone;
}

const geminiFile = (): string => recordedFile('gemini', (f) => readFileSync(path.join(RECORDED, 'gemini', f), 'utf8').includes('say hello please'));

describe('the ask marker', () => {
  it('is a line of its own the readers find, and is taken out of replies', () => {
    const id = newAskId();
    expect(id).toMatch(/^[0-9a-f]{10}$/);
    const typed = markQuestion('What is 2+2?  ', id);
    expect(typed).toBe(`What is 2+2?\n[switchboard ask ${id}]`);
    expect(askIdIn(typed)).toBe(id);
    expect(askIdIn('no marker here')).toBeNull();
    expect(withoutMarkers(`Four.\n${askMarker(id)}`)).toBe('Four.');
  });
});

describe.each([
  ['claude', claudeFold, (): string => recordedFile('claude'), 'system/turn_duration', true],
  ['codex', codexFold, (): string => recordedFile('codex'), 'event_msg/task_complete', true],
  ['gemini', geminiFold, geminiFile, 'gemini/message', true],
] as const)('%s transcript (recorded)', (_agent, fold, file, textEnd, certain) => {
  it('finds each ask by its marker and reads exactly its reply, ended by the CLI', () => {
    const recs = records(file());
    const text = foldAll(fold, recs, IDS.text);
    expect(text).toMatchObject({ found: true, reply: REPLIES.text, done: true, certain, endSignal: textEnd, interrupted: false });
    expect(text.endAt).toEqual(expect.any(Number));
    const tool = foldAll(fold, recs, IDS.tool);
    expect(tool).toMatchObject({ found: true, reply: REPLIES.tool, done: true, interrupted: false });
  });

  it('never says done before the reply is whole, and the tool ask ends after its tool call', () => {
    const recs = records(file());
    const textDone = doneOnlyWhenWhole(fold, recs, IDS.text, REPLIES.text);
    const toolDone = doneOnlyWhenWhole(fold, recs, IDS.tool, REPLIES.tool);
    expect(textDone).toBeGreaterThan(0);
    expect(toolDone).toBeGreaterThan(textDone);
  });

  it('does not take a prompt without the marker, or another id, for the ask', () => {
    const recs = records(file());
    expect(foldAll(fold, recs, '0000000000')).toMatchObject({ found: false, done: false, reply: '' });
  });
});

describe('Gemini without a newer prompt', () => {
  it('ends on its last text message, not certain until the screen agrees', () => {
    const view = foldAll(geminiFold, records(geminiFile()), IDS.tool);
    expect(view).toMatchObject({ done: true, certain: false, endSignal: 'gemini/message', reply: REPLIES.tool });
  });
});

describe("Gemini's own user records", () => {
  // Records as Gemini CLI 0.61.0 writes them: the question, its answer, then the folder list it adds
  // to the history as a user message once a folder given with --include-directories is trusted
  // (seen after its restart for a trust answer, late under load: after the answer).
  const id = '20dbf2394b';
  const question = { id: 'c7912ba3-19ed-4eb2-a8a7-4569fb88f127', timestamp: '2026-11-27T10:48:07.317Z', type: 'user', content: [{ text: markQuestion('What is the capital of France?', id) }] };
  const answer = { id: '08da76c9-717a-43c8-9b0c-e0d50aea9a08', timestamp: '2026-11-27T10:48:07.909Z', type: 'gemini', content: REPLIES.text, thoughts: [], model: 'gemini-2.5-flash' };
  const folders = { id: '3cc025c2-25d0-4d63-ac59-b8d1bb51a724', timestamp: '2026-11-27T10:48:08.230Z', type: 'user', content: [{ text: '- **Workspace Directories:**\n  - /work/project\n  - /home/u/.switchboard/tmp/41-AbCdEf/prompts-GhIjKl\n' }] };

  it('after the answer, makes the end certain but the answer is still what ended the turn', () => {
    expect(foldAll(geminiFold, [question, answer, folders], id)).toMatchObject({ found: true, done: true, certain: true, reply: REPLIES.text, endSignal: 'gemini/message', interrupted: false });
  });

  it('a user record before any answer still ends the turn unanswered: it may be a new prompt after an interruption, whose answer is not the ask\'s', () => {
    expect(foldAll(geminiFold, [question, folders, answer], id)).toMatchObject({ done: true, certain: true, reply: '', endSignal: 'user/next prompt', interrupted: true });
  });
});

describe('the shared captures (plain prompts, no ask)', () => {
  it.each([
    ['claude-transcript-sample.jsonl', claudeFold],
    ['codex-rollout-sample.jsonl', codexFold],
    ['gemini-chat-sample.jsonl', geminiFold],
  ] as const)('%s holds no ask', (name, fold) => {
    expect(foldAll(fold, records(path.join(SHARED, name)), IDS.text).found).toBe(false);
  });
});

describe('OpenCode rows (recorded database, joined as askRowsSql joins them)', () => {
  interface Row {
    id: string;
    session_id: string;
    time_created: number;
    data: string;
    message_id?: string;
  }
  const load = (t: string): Row[] => JSON.parse(readFileSync(path.join(RECORDED, 'opencode', `db-${t}.json`), 'utf8')) as Row[];

  /** What askRowsSql returns, computed from the recorded tables. */
  function rowsFor(id: string): OpenCodeRow[] {
    const messages = load('message');
    const parts = load('part');
    const hit = parts.find((p) => p.data.includes(`[switchboard ask ${id}]`));
    if (!hit) return [];
    const from = messages.find((m) => m.id === hit.message_id)?.time_created ?? 0;
    const out: OpenCodeRow[] = [];
    for (const m of messages.filter((m) => m.session_id === hit.session_id && m.time_created >= from).sort((a, b) => a.time_created - b.time_created)) {
      const own = parts.filter((p) => p.message_id === m.id).sort((a, b) => a.time_created - b.time_created);
      if (own.length === 0) out.push({ message_id: m.id, message_time: m.time_created, message: m.data, part_id: null, part: null });
      for (const p of own) out.push({ message_id: m.id, message_time: m.time_created, message: m.data, part_id: p.id, part: p.data });
    }
    return out;
  }

  it('reads each ask and its end (a step that finished for a reason other than tool calls)', () => {
    expect(readOpenCodeRows(rowsFor(IDS.text), IDS.text)).toMatchObject({ found: true, reply: REPLIES.text, done: true, certain: true, endSignal: 'message/finish:stop' });
    expect(readOpenCodeRows(rowsFor(IDS.tool), IDS.tool)).toMatchObject({ found: true, reply: REPLIES.tool, done: true, endSignal: 'message/finish:stop', endAt: expect.any(Number) as unknown });
    expect(readOpenCodeRows([], IDS.text).found).toBe(false);
  });

  it('is not done while the only answer so far stopped for tool calls', () => {
    const rows = rowsFor(IDS.tool);
    const lastMessage = rows[rows.length - 1]?.message_id;
    const partial = rows.filter((r) => r.message_id !== lastMessage);
    expect(readOpenCodeRows(partial, IDS.tool)).toMatchObject({ found: true, done: false, reply: '' });
  });

  it('builds its query only from a well-formed id', () => {
    expect(askRowsSql(IDS.text)).toContain(`LIKE '%[switchboard ask ${IDS.text}]%'`);
    expect(() => askRowsSql("x' OR 1=1 --")).toThrow(/not an ask id/);
  });
});

describe('the reader over live files', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const home = (): string => {
    const d = mkdtempSync(path.join(tmpdir(), 'sb-transcripts-'));
    dirs.push(d);
    return d;
  };

  it('reads only lines added after begin, whole lines only, and binds to the file that holds the question', async () => {
    const h = home();
    const cwd = '/home/dev/work';
    const location: TranscriptLocation = { format: 'claude-jsonl', home: h, cwd, dir: '.claude/projects/{cwd_dashed}', pattern: '*.jsonl' };
    const dir = path.join(h, '.claude', 'projects', dashedCwd(cwd));
    mkdirSync(dir, { recursive: true });
    const lines = readFileSync(recordedFile('claude'), 'utf8').split('\n').filter((l) => l !== '');
    const questionAt = lines.findIndex((l) => l.includes(`[switchboard ask ${IDS.text}]`));
    const file = path.join(dir, 'session.jsonl');
    // Another session of the same folder, written to at the same time: never read as the reply.
    const other = path.join(dir, 'other.jsonl');
    writeFileSync(file, lines.slice(0, questionAt).join('\n') + '\n');
    writeFileSync(other, '');
    const reader = createTranscriptReader(location, IDS.text);
    const second = createTranscriptReader(location, IDS.tool);
    reader.begin();
    second.begin();
    expect((await reader.read({ idle: false })).found).toBe(false);
    // The rest arrives in pieces that cut lines (and characters) anywhere.
    const rest = Buffer.from(lines.slice(questionAt).join('\n') + '\n', 'utf8');
    let sawUnfinished = false;
    for (let at = 0; at < rest.length; at += 997) {
      appendFileSync(file, rest.subarray(at, at + 997));
      appendFileSync(other, '{"type":"user","message":{"role":"user","content":"unrelated"}}\n');
      const view = await reader.read({ idle: false });
      if (view.found && !view.done) sawUnfinished = true;
      if (view.done) expect(view.reply).toBe(REPLIES.text);
    }
    const done = await reader.read({ idle: false });
    expect(done).toMatchObject({ found: true, done: true, reply: REPLIES.text, source: file });
    expect(sawUnfinished).toBe(true);
    expect(await second.read({ idle: false })).toMatchObject({ done: true, reply: REPLIES.tool, source: file });
  });

  it('reads a Gemini chat file again from its start when it was rewritten shorter', async () => {
    const h = home();
    const location: TranscriptLocation = { format: 'gemini-chat', home: h, cwd: '/home/dev/work', dir: '.gemini/tmp/{project}/chats', pattern: 'session-*.jsonl' };
    const dir = path.join(h, '.gemini', 'tmp', 'work', 'chats');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'session-1.jsonl');
    writeFileSync(file, `{"sessionId":"s"}\n${'{"$set":{"lastUpdated":"x"}}\n'.repeat(50)}`);
    const reader = createTranscriptReader(location, IDS.text);
    reader.begin();
    cpSync(geminiFile(), file);
    expect(await reader.read({ idle: false })).toMatchObject({ found: true, done: true, reply: REPLIES.text });
  });

  it('looks for Codex rollouts in the dated folders around now, under CODEX_HOME when set', () => {
    const at = new Date(2026, 10, 23, 12);
    const dirsFound = transcriptDirs({ format: 'codex-rollout', home: '/h', cwd: '/w', dir: '.codex/sessions', pattern: '**/rollout-*.jsonl', env: { CODEX_HOME: '/c' } }, at);
    expect(dirsFound).toContain(path.join('/c', 'sessions', '2026', '11', '23'));
    expect(dirsFound).toContain(path.join('/c', 'sessions', '2026', '11', '22'));
    expect(dirsFound.every((d) => d.startsWith(path.join('/c', 'sessions')))).toBe(true);
  });

  it('asks OpenCode only while the target is idle, and stops once the turn is done', async () => {
    const sqls: string[] = [];
    let clock = 0;
    const reader = createTranscriptReader({ format: 'opencode-sqlite', home: '/h', cwd: '/w', dir: '.local/share/opencode', pattern: 'opencode.db' }, IDS.text, {
      now: () => clock,
      opencodeQuery: (sql) => {
        sqls.push(sql);
        return Promise.resolve([]);
      },
    });
    reader.begin();
    expect((await reader.read({ idle: false })).found).toBe(false);
    expect(sqls).toHaveLength(0);
    await reader.read({ idle: true });
    await reader.read({ idle: true });
    expect(sqls).toHaveLength(1);
    clock += 1_000;
    await reader.read({ idle: true });
    expect(sqls).toHaveLength(2);
  });
});
