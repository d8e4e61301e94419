import { afterEach, describe, expect, it } from 'vitest';
import { Emitter } from '../core/emitter.js';
import type { AgentState } from '../agents/index.js';
import { AskEngine } from './engine.js';
import { askIdIn } from './transcripts/marker.js';
import { NOTHING_YET, type ReplyRead } from './transcripts/types.js';
import type { TranscriptReader } from './transcripts/reader.js';
import type { AskDirectory, AskTarget } from './types.js';
import { until } from '../../test/support/processes.js';

/** What the fake CLIs "wrote" to their transcripts, by ask id. */
const transcript = new Map<string, ReplyRead>();

/** An agent that answers each question after `turnMs`, and refuses to be typed into while busy. */
class FakeAgent implements AskTarget {
  state: AgentState = 'idle';
  stateSince = Date.now();
  alive = true;
  dialogOpen = false;
  readonly prompts: string[] = [];
  answer: ((question: string) => string | null) | undefined = (q) => `answer to ${q.split('\n')[0] ?? ''}`;
  private readonly changes = new Emitter<void>();
  private readonly exits = new Emitter<void>();

  constructor(
    readonly id: string,
    readonly agent: string | undefined,
    readonly cwd = '/work',
    readonly title = agent ?? id,
    readonly turnMs = 30,
    readonly writesTranscript = true,
  ) {}

  setState(state: AgentState): void {
    this.state = state;
    this.stateSince = Date.now();
    this.changes.fire();
  }
  exit(): void {
    this.alive = false;
    this.setState('exited');
    this.exits.fire();
  }
  onStateChange(listener: () => void) {
    return this.changes.event(listener);
  }
  onExit(listener: () => void) {
    return this.exits.event(listener);
  }
  prompt(text: string): Promise<void> {
    if (this.state !== 'idle' || this.dialogOpen) throw new Error(`typed into ${this.id} while ${this.state}`);
    this.prompts.push(text);
    this.setState('thinking');
    setTimeout(() => {
      if (!this.alive) return;
      const id = askIdIn(text);
      const reply = this.answer?.(text);
      if (id && reply !== null && reply !== undefined && this.writesTranscript) transcript.set(id, { ...NOTHING_YET, found: true, done: true, certain: true, reply, endSignal: 'fake/end', source: `fake:${this.id}`, endAt: Date.now() });
      if (reply !== null) this.setState('idle');
    }, this.turnMs);
    return Promise.resolve();
  }
  transcript() {
    return this.writesTranscript ? { format: 'claude-jsonl' as const, home: '/h', cwd: this.cwd, dir: 'x', pattern: '*' } : undefined;
  }
  screenReply(question: string): string | null {
    return `on screen: ${question}`;
  }
}

class Directory implements AskDirectory {
  constructor(readonly panes: FakeAgent[]) {}
  list() {
    return this.panes;
  }
  get(id: string) {
    return this.panes.find((p) => p.id === id);
  }
}

const readerFor = (_: unknown, askId: string): TranscriptReader => ({
  begin: () => undefined,
  read: () => Promise.resolve(transcript.get(askId) ?? NOTHING_YET),
});

const engines: AskEngine[] = [];
function engineOver(...panes: FakeAgent[]): AskEngine {
  const engine = new AskEngine({ directory: new Directory(panes), readerFor });
  engines.push(engine);
  return engine;
}
afterEach(() => {
  for (const e of engines.splice(0)) e.dispose();
  transcript.clear();
});

describe('the ask engine', () => {
  it('answers two asks to one target at once in order, each with its own reply, one at a time', async () => {
    const codex = new FakeAgent('p1', 'codex');
    const engine = engineOver(codex, new FakeAgent('p0', 'claude'));
    const first = engine.ask({ target: 'codex', question: 'first question', from: { paneId: 'p0' } });
    const second = engine.ask({ target: 'codex', question: 'second question', from: { paneId: 'p0' } });
    expect(second.queuedBehind).toBe(1);
    expect((await engine.get(second.id)).status).toBe('queued');
    const [a, b] = await Promise.all([engine.wait(first.id), engine.wait(second.id)]);
    expect(a).toMatchObject({ status: 'done', reply: 'answer to first question', replySource: 'transcript', endSignal: 'fake/end' });
    expect(b).toMatchObject({ status: 'done', reply: 'answer to second question' });
    expect(codex.prompts).toEqual([`first question\n[switchboard ask ${first.id}]`, `second question\n[switchboard ask ${second.id}]`]);
    expect(b.startedAt ?? 0).toBeGreaterThanOrEqual(a.endedAt ?? Infinity);
  });

  it('waits for a busy target (or one with a dialog open) to be idle before typing', async () => {
    const gemini = new FakeAgent('p1', 'gemini');
    gemini.setState('thinking');
    const engine = engineOver(gemini);
    const ask = engine.ask({ target: 'p1', question: 'are you free?' });
    await new Promise((r) => setTimeout(r, 50));
    expect(gemini.prompts).toHaveLength(0);
    gemini.dialogOpen = true;
    gemini.setState('idle');
    await new Promise((r) => setTimeout(r, 20));
    expect(gemini.prompts).toHaveLength(0);
    gemini.dialogOpen = false;
    gemini.setState('idle');
    expect(await engine.wait(ask.id)).toMatchObject({ status: 'done', reply: 'answer to are you free?' });
  });

  it('times out, leaves the target usable, and answers the next ask once the target is idle again', async () => {
    const claude = new FakeAgent('p1', 'claude');
    let stuck = true;
    claude.answer = (q) => (stuck ? null : `answer to ${q.split('\n')[0] ?? ''}`);
    const engine = engineOver(claude);
    const slow = engine.ask({ target: 'claude', question: 'slow one', timeoutMs: 80 });
    const next = engine.ask({ target: 'claude', question: 'next one' });
    expect(await engine.wait(slow.id)).toMatchObject({ status: 'timed_out', error: { code: 'TIMEOUT' } });
    // The target is still in its turn: nothing is typed over it.
    await new Promise((r) => setTimeout(r, 40));
    expect(claude.prompts).toHaveLength(1);
    stuck = false;
    claude.setState('idle');
    expect(await engine.wait(next.id)).toMatchObject({ status: 'done', reply: 'answer to next one' });
  });

  it('fails at once for an exited target, and fails the line when the target exits mid-ask', async () => {
    const gone = new FakeAgent('p9', 'codex');
    gone.exit();
    const engine = engineOver(gone, new FakeAgent('p1', 'opencode', '/work', 'oc', 10_000));
    expect(() => engine.ask({ target: 'p9', question: 'hello?' })).toThrow(expect.objectContaining({ code: 'PANE_EXITED' }) as Error);
    expect(() => engine.ask({ target: 'codex', question: 'hello?' })).toThrow(expect.objectContaining({ code: 'PANE_EXITED' }) as Error);
    const oc = engine.ask({ target: 'oc', question: 'long one' });
    const behind = engine.ask({ target: 'oc', question: 'behind' });
    await new Promise((r) => setTimeout(r, 20));
    (engine as unknown as { options: { directory: Directory } }).options.directory.panes[1]?.exit();
    expect(await engine.wait(oc.id)).toMatchObject({ status: 'failed', error: { code: 'PANE_EXITED' } });
    expect(await engine.wait(behind.id)).toMatchObject({ status: 'failed', error: { code: 'PANE_EXITED' } });
  });

  it('refuses panes marked not askable, itself, unknown names, and says which panes a name could mean', () => {
    const engine = engineOver(new FakeAgent('p1', 'codex', '/a'), new FakeAgent('p2', 'codex', '/b'), new FakeAgent('p3', 'claude', '/a'));
    engine.setAskable('p3', false);
    expect(() => engine.ask({ target: 'claude', question: 'q' })).toThrow(expect.objectContaining({ code: 'FORBIDDEN' }) as Error);
    engine.setAskable('p3', true);
    expect(() => engine.ask({ target: 'p3', question: 'q', from: { paneId: 'p3' } })).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS' }) as Error);
    expect(() => engine.ask({ target: 'aider', question: 'q' })).toThrow(expect.objectContaining({ code: 'PANE_NOT_FOUND' }) as Error);
    expect(() => engine.ask({ target: 'codex', question: 'q' })).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS', details: expect.objectContaining({ candidates: expect.arrayContaining([expect.objectContaining({ pane_id: 'p1' })]) }) }) as Error);
    // In the asker's folder, the name means the one there.
    expect(engine.ask({ target: 'codex', question: 'q', from: { cwd: '/b' } }).target.paneId).toBe('p2');
    expect(() => engine.ask({ target: 'p1', question: '   ' })).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS' }) as Error);
    expect(() => engine.ask({ target: 'p1', question: 'q', timeoutMs: 0 })).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS' }) as Error);
  });

  it('cancels a queued ask without typing it', async () => {
    const codex = new FakeAgent('p1', 'codex');
    const engine = engineOver(codex);
    const first = engine.ask({ target: 'codex', question: 'one' });
    const second = engine.ask({ target: 'codex', question: 'two' });
    expect((await engine.cancel(second.id)).status).toBe('cancelled');
    expect((await engine.wait(first.id)).status).toBe('done');
    await new Promise((r) => setTimeout(r, 30));
    expect(codex.prompts).toHaveLength(1);
    expect((await engine.list()).map((a) => a.status).sort()).toEqual(['cancelled', 'done']);
  });

  it('cancelled while typed: the next ask waits until the cancelled question is taken back', async () => {
    const codex = new FakeAgent('p1', 'codex');
    const engine = engineOver(codex);
    const events: string[] = [];
    let withdrawn: (() => void) | undefined;
    const typing = codex.prompt.bind(codex);
    codex.prompt = (text: string, signal?: AbortSignal) => {
      events.push(`typing ${text.split('\n')[0] ?? ''}`);
      if (text.startsWith('second')) return typing(text);
      // The first question is still going in when the cancel comes: taking it back takes a while.
      return new Promise<void>((_, reject) => {
        signal?.addEventListener('abort', () => {
          withdrawn = () => {
            events.push('first taken back');
            reject(new Error('aborted'));
          };
        });
      });
    };
    const first = engine.ask({ target: 'codex', question: 'first question' });
    await until(() => events.length === 1, 'the first question being typed');
    expect((await engine.get(first.id)).status).toBe('typing');
    const second = engine.ask({ target: 'codex', question: 'second question' });
    expect((await engine.cancel(first.id)).status).toBe('cancelled');
    await new Promise((r) => setTimeout(r, 30));
    // Nothing typed over the question being taken back.
    expect(events).toEqual(['typing first question']);
    withdrawn?.();
    expect(await engine.wait(second.id)).toMatchObject({ status: 'done', reply: 'answer to second question' });
    expect(events).toEqual(['typing first question', 'first taken back', 'typing second question']);
    expect((await engine.get(first.id)).status).toBe('cancelled');
  });

  it('reads the screen when the target writes no transcript', async () => {
    const aider = new FakeAgent('p1', 'aider', '/work', 'aider', 20, false);
    const engine = engineOver(aider);
    const ask = engine.ask({ target: 'aider', question: 'what now?' });
    expect(await engine.wait(ask.id)).toMatchObject({ status: 'done', replySource: 'screen', reply: 'on screen: what now?', endSignal: 'screen/idle' });
  });

  it('an empty screen with a silent transcript is a turn not begun yet, not an empty answer (a loaded machine drew idle before the turn)', { timeout: 20_000 }, async () => {
    const gemini = new FakeAgent('p1', 'gemini');
    // Idle again at once after the typing, nothing on the screen and nothing in the transcript; the
    // turn only shows later, past the transcript's patience (3 s).
    gemini.prompt = (text: string): Promise<void> => {
      gemini.prompts.push(text);
      gemini.setState('idle');
      setTimeout(() => {
        gemini.setState('thinking');
        const id = askIdIn(text);
        if (id) transcript.set(id, { ...NOTHING_YET, found: true, done: true, certain: true, reply: 'the late answer', endSignal: 'fake/end', source: 'fake:p1', endAt: Date.now() });
        gemini.setState('idle');
      }, 4_000);
      return Promise.resolve();
    };
    gemini.screenReply = () => '';
    const engine = engineOver(gemini);
    const ask = engine.ask({ target: 'gemini', question: 'are you there?' });
    expect(await engine.wait(ask.id)).toMatchObject({ status: 'done', reply: 'the late answer', replySource: 'transcript' });
  });

  it("delivers an async ask's reply into the asker's pane once, when the asker is idle", async () => {
    const codex = new FakeAgent('p1', 'codex');
    const claude = new FakeAgent('p0', 'claude');
    const engine = engineOver(codex, claude);
    claude.setState('thinking');
    const ask = engine.ask({ target: 'codex', question: 'async one', from: { paneId: 'p0' }, deliver: true });
    const done = await engine.wait(ask.id);
    expect(done.status).toBe('done');
    await new Promise((r) => setTimeout(r, 30));
    expect(claude.prompts).toHaveLength(0);
    // Not typed yet: pending, not delivering, while the asker is busy.
    expect((await engine.get(ask.id)).delivery).toBe('pending');
    const typing = claude.prompt.bind(claude);
    let whileTyping: string | undefined;
    claude.prompt = (text) => {
      // A live ask's record is read when get is called: the value is the one at this moment.
      void engine.get(ask.id).then((now) => {
        whileTyping = now.delivery;
      });
      return typing(text);
    };
    claude.setState('idle');
    await until(() => claude.prompts.length > 0, 'the reply typed into the asker', 10_000);
    expect(claude.prompts).toEqual([`[switchboard reply from codex (pane p1, ask ${ask.id})]\nanswer to async one`]);
    expect(whileTyping).toBe('delivering');
    expect(await engine.get(ask.id)).toMatchObject({ delivery: 'delivered', deliveredAt: expect.any(Number) as unknown });
    // Idle again later: nothing typed twice.
    claude.setState('thinking');
    claude.setState('idle');
    await new Promise((r) => setTimeout(r, 30));
    expect(claude.prompts).toHaveLength(1);
  });
});
