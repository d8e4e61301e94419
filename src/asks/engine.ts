/**
 * Agents asking agents. An ask names a target (resolve.ts) and waits in that target's line, first in
 * first out, one at a time; its question is typed, with its request id on a line of its own, only
 * once the target is idle with no dialog open; its reply is read from the target CLI's transcript,
 * bound to the request id and ended by the CLI's own end of turn, with the screen as the fallback.
 * The caller waits for the outcome or takes the ask's id and comes back (wait, get, cancel); an
 * async ask's outcome is delivered into the asker's pane once it is idle (delivery.ts). Every
 * change is recorded. A timeout or a cancel never touches the target's turn: it goes on, and the
 * next ask is typed once it is idle again; one that comes while the question is being typed stops
 * the typing and takes the question back out of the input box (the target's prompt does, on the
 * abort), and the next ask waits for that.
 */
import type { Disposable } from '../core/disposable.js';
import { errorMessage, isSwitchboardError, SwitchboardError, type ErrorCode } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { setLongTimeout } from '../core/long-timer.js';
import { DeliveryQueue } from './delivery.js';
import { isFinal, newAskLife, stepAsk, stepDelivery, type AskEvent, type DeliveryEvent } from './lifecycle.js';
import { MemoryAskRecorder } from './memory-recorder.js';
import { DEFAULT_ASK_TIMEOUT_MS, MAX_ASK_TIMEOUT_MS, MAX_ASKS_PER_TARGET, MAX_QUESTION_CHARS } from '../contract/ask.js';
import { resolveTarget } from './resolve.js';
import { markQuestion, newAskId } from './transcripts/marker.js';
import { createTranscriptReader, type TranscriptReader } from './transcripts/reader.js';
import type { TranscriptLocation } from './transcripts/locate.js';
import { ASK_OWNER, type AskDirectory, type AskRecord, type AskRecorder, type AskRequest, type AskTarget } from './types.js';

/** How often the transcript is looked at while a reply is awaited (besides every state change). */
const REPLY_POLL_MS = 100;
/**
 * With the target idle again after the question and its transcript still silent about it this
 * long, the reply is read off the screen (a CLI that wrote elsewhere, or a profile without a
 * transcript it really writes).
 */
const TRANSCRIPT_PATIENCE_MS = 3_000;
/**
 * An empty screen with a transcript silent about the question is most often a turn not begun yet: a
 * loaded machine can draw the target idle between the typing and the start of its turn. Only past
 * this long is it taken as an empty answer.
 */
const EMPTY_SCREEN_PATIENCE_MS = 30_000;
/** The target showing an error this long, with no end of turn in its transcript, fails the ask. */
const ERROR_PATIENCE_MS = 1_500;

export interface AskEngineOptions {
  directory: AskDirectory;
  recorder?: AskRecorder;
  logger?: Logger;
  /** The transcript reader for an ask (tests give their own). */
  readerFor?: (location: TranscriptLocation, askId: string) => TranscriptReader;
}

interface Job {
  record: AskRecord;
  target: AskTarget;
  /** The line the ask waits in (kept here: a target's line is replaced once it empties). */
  line: Line;
  abort: AbortController;
  /** The ask's timeout (a long timer: the limit comes from the caller). */
  timer: Disposable | undefined;
  waiters: (() => void)[];
  deliver: boolean;
}

interface Line {
  target: AskTarget;
  jobs: Job[];
  active: Job | undefined;
  subscriptions: Disposable[];
}

export class AskEngine implements Disposable {
  private readonly jobs = new Map<string, Job>();
  private readonly lines = new Map<string, Line>();
  private readonly notAskable = new Set<string>();
  private recorder: AskRecorder;
  private readonly logger: Logger;
  private readonly deliveries: DeliveryQueue;
  private disposed = false;

  constructor(private readonly options: AskEngineOptions) {
    this.recorder = options.recorder ?? new MemoryAskRecorder();
    this.logger = options.logger ?? silentLogger;
    this.deliveries = new DeliveryQueue(options.directory);
  }

  /**
   * Queues an ask and returns its record at once (status `queued`). Throws, with nothing queued,
   * for bad input, a target that cannot be found or has exited, a pane marked not askable, or a
   * full line.
   */
  ask(request: AskRequest): AskRecord {
    if (this.disposed) throw new SwitchboardError('SHUTTING_DOWN', 'Switchboard is stopping: no new asks');
    const question = request.question.trim();
    if (question === '') throw new SwitchboardError('INVALID_PARAMS', 'the question is empty');
    if (question.length > MAX_QUESTION_CHARS) throw new SwitchboardError('INVALID_PARAMS', `the question is ${question.length} characters; at most ${MAX_QUESTION_CHARS}`);
    const timeoutMs = request.timeoutMs ?? DEFAULT_ASK_TIMEOUT_MS;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_ASK_TIMEOUT_MS) throw new SwitchboardError('INVALID_PARAMS', `timeout must be 1 ms to ${MAX_ASK_TIMEOUT_MS / 60_000} minutes`);
    if (request.deliver && !request.from?.paneId) throw new SwitchboardError('INVALID_PARAMS', 'delivering the reply needs the asker\'s pane (from.paneId)');
    const target = resolveTarget(this.options.directory, request.target, request.from);
    if (target.id === request.from?.paneId) throw new SwitchboardError('INVALID_PARAMS', 'a pane cannot ask itself');
    if (this.notAskable.has(target.id)) throw new SwitchboardError('FORBIDDEN', `pane ${target.id} (${target.title}) is marked not askable`, { pane_id: target.id });
    const line = this.lineOf(target);
    if (line.jobs.length >= MAX_ASKS_PER_TARGET) throw new SwitchboardError('LIMIT_EXCEEDED', `${line.jobs.length} asks already wait for pane ${target.id}; at most ${MAX_ASKS_PER_TARGET}`, { pane_id: target.id });
    const id = newAskId();
    const record: AskRecord = {
      ...newAskLife(Date.now()),
      id,
      createdBy: request.createdBy ?? ASK_OWNER,
      from: request.from ?? null,
      target: { paneId: target.id, agent: target.agent ?? null, title: target.title },
      question,
      queuedBehind: line.jobs.length,
      delivery: request.deliver ? 'pending' : 'none',
      deliveredAt: null,
      deliveryError: null,
    };
    const job: Job = { record, target, line, abort: new AbortController(), timer: undefined, waiters: [], deliver: request.deliver === true };
    job.timer = setLongTimeout(() => this.timeOut(job, timeoutMs), timeoutMs);
    this.jobs.set(id, job);
    line.jobs.push(job);
    this.recorder.record(record);
    this.pump(line);
    return { ...job.record };
  }

  /** The ask's record now: the live one, else the recorder's (ASK_NOT_FOUND when neither has it). */
  async get(id: string): Promise<AskRecord> {
    const job = this.jobs.get(id);
    if (job) return { ...job.record };
    const kept = await this.recorder.get(id);
    if (kept) return kept;
    throw new SwitchboardError('ASK_NOT_FOUND', `no ask ${id}`, { ask_id: id });
  }

  /** Every ask the recorder keeps, oldest first. */
  list(): Promise<AskRecord[]> {
    return this.recorder.list();
  }

  /**
   * Resolves with the ask's record once it is final, or after `timeoutMs` with the record as it
   * stands then (the ask goes on).
   */
  wait(id: string, timeoutMs?: number): Promise<AskRecord> {
    const job = this.jobs.get(id);
    if (!job || isFinal(job.record.status)) return this.get(id);
    return new Promise((resolve) => {
      const timer = timeoutMs !== undefined ? setLongTimeout(() => resolve(this.get(id)), timeoutMs) : undefined;
      job.waiters.push(() => {
        timer?.dispose();
        resolve(this.get(id));
      });
    });
  }

  /**
   * Cancels an ask that is not final yet (a question already typed stays typed; its reply is no
   * longer awaited). Only its maker (`caller`, as at ask) or the owner may: anyone else FORBIDDEN.
   */
  async cancel(id: string, caller: string = ASK_OWNER): Promise<AskRecord> {
    const job = this.jobs.get(id);
    const maker = (job?.record ?? (await this.get(id))).createdBy ?? ASK_OWNER;
    if (caller !== ASK_OWNER && caller !== maker) {
      const whose = maker === ASK_OWNER ? 'the owner' : `pane ${maker}`;
      throw new SwitchboardError('FORBIDDEN', `forbidden: ask ${id} was made by ${whose}; only the caller that made an ask, or the owner, may cancel it (the token of pane ${caller} did not)`, { ask_id: id, created_by: maker });
    }
    if (!job) return this.get(id);
    this.update(job, { type: 'cancel', at: Date.now() });
    return { ...job.record };
  }

  /**
   * Keeps asks in `recorder` from now on (the daemon's run ledger, which opens after the services
   * are built); what the recorder before kept is copied into it.
   */
  async keepAsksIn(recorder: AskRecorder): Promise<void> {
    const before = this.recorder;
    // Switched first, so no change made while the old list is read goes to the old recorder; an
    // ask still live is copied as it stands now, never older than what was recorded since.
    this.recorder = recorder;
    for (const ask of await before.list()) recorder.record(this.jobs.get(ask.id)?.record ?? ask);
  }

  /** Marks a pane askable or not (asks already queued for it go on). */
  setAskable(paneId: string, askable: boolean): void {
    if (askable) this.notAskable.delete(paneId);
    else this.notAskable.add(paneId);
  }

  isAskable(paneId: string): boolean {
    return !this.notAskable.has(paneId);
  }

  /** Asks waiting for `paneId` (the one being answered first). */
  queueOf(paneId: string): AskRecord[] {
    return (this.lines.get(paneId)?.jobs ?? []).map((j) => ({ ...j.record }));
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const job of [...this.jobs.values()]) this.update(job, { type: 'fail', at: Date.now(), code: 'SHUTTING_DOWN', message: 'Switchboard stopped before the reply came' });
    for (const line of this.lines.values()) for (const s of line.subscriptions) s.dispose();
    this.lines.clear();
    this.deliveries.dispose();
  }

  private lineOf(target: AskTarget): Line {
    const existing = this.lines.get(target.id);
    if (existing) return existing;
    const line: Line = { target, jobs: [], active: undefined, subscriptions: [] };
    line.subscriptions.push(
      target.onStateChange(() => this.pump(line)),
      target.onExit(() => {
        for (const job of [...line.jobs]) this.update(job, { type: 'fail', at: Date.now(), code: 'PANE_EXITED', message: `pane ${target.id} (${target.title}) exited before it answered` });
      }),
    );
    this.lines.set(target.id, line);
    return line;
  }

  /** Starts the first ask of the line when the target can take it. */
  private pump(line: Line): void {
    if (this.disposed || line.active) return;
    // Final asks have left the line already; this only guards the invariant.
    line.jobs = line.jobs.filter((j) => !isFinal(j.record.status));
    const head = line.jobs[0];
    if (!head) {
      for (const s of line.subscriptions) s.dispose();
      if (this.lines.get(line.target.id) === line) this.lines.delete(line.target.id);
      return;
    }
    const target = line.target;
    if (!target.alive) {
      for (const job of [...line.jobs]) this.update(job, { type: 'fail', at: Date.now(), code: 'PANE_EXITED', message: `pane ${target.id} (${target.title}) has exited` });
      return;
    }
    if (target.state !== 'idle' || target.dialogOpen) return;
    line.active = head;
    void this.run(line, head).finally(() => {
      if (line.active === head) line.active = undefined;
      this.pump(line);
    });
  }

  /** Types the question and reads the reply, until the ask is final. */
  private async run(line: Line, job: Job): Promise<void> {
    const target = line.target;
    this.update(job, { type: 'start', at: Date.now() });
    if (job.record.status !== 'typing') return;
    const location = target.transcript();
    const reader = location ? (this.options.readerFor ?? createTranscriptReader)(location, job.record.id) : undefined;
    try {
      reader?.begin();
      await target.prompt(markQuestion(job.record.question, job.record.id), job.abort.signal);
    } catch (err) {
      if (!isFinal(job.record.status)) {
        const code: ErrorCode = !target.alive ? 'PANE_EXITED' : isSwitchboardError(err) ? err.code : 'NOT_DELIVERED';
        this.update(job, { type: 'fail', at: Date.now(), code, message: `the question could not be typed into pane ${target.id}: ${errorMessage(err)}` });
      }
      return;
    }
    this.update(job, { type: 'typed', at: Date.now() });
    await this.awaitReply(job, reader);
  }

  /** Looks for the reply on every state change of the target and every REPLY_POLL_MS, until the ask is final. */
  private awaitReply(job: Job, reader: TranscriptReader | undefined): Promise<void> {
    const target = job.target;
    const startedAt = job.record.startedAt ?? 0;
    return new Promise((resolve) => {
      let looking = false;
      let again = false;
      let idleSilentSince: number | undefined;
      let errorSince: number | undefined;
      const finish = (): void => {
        clearInterval(timer);
        sub.dispose();
        resolve();
      };
      const look = async (): Promise<void> => {
        if (isFinal(job.record.status)) return finish();
        const now = Date.now();
        // Idle again since the question went in: the tracker changed state after typing began.
        const idleAfter = target.state === 'idle' && target.stateSince >= startedAt;
        const read = reader ? await reader.read({ idle: idleAfter }) : undefined;
        if (isFinal(job.record.status)) return finish();
        if (read?.done && (read.certain || idleAfter)) {
          if (read.interrupted && read.reply === '') {
            this.update(job, { type: 'fail', at: Date.now(), code: 'AGENT_ERROR', message: `pane ${target.id}'s turn ended without an answer (${read.endSignal ?? 'interrupted'})` });
          } else {
            this.update(job, { type: 'reply', at: Date.now(), reply: read.reply, source: 'transcript', endSignal: read.endSignal, endRecordAt: read.endAt, transcript: read.source });
          }
          return finish();
        }
        if (target.state === 'error' && target.stateSince >= startedAt) {
          errorSince ??= now;
          if (now - errorSince >= ERROR_PATIENCE_MS) {
            this.update(job, { type: 'fail', at: now, code: 'AGENT_ERROR', message: `pane ${target.id} showed an error instead of an answer` });
            return finish();
          }
        } else errorSince = undefined;
        // No transcript, or one that says nothing of the question while the target sits idle: the screen.
        const silent = !read?.found;
        idleSilentSince = idleAfter && silent ? (idleSilentSince ?? now) : undefined;
        const silentFor = idleSilentSince === undefined ? 0 : now - idleSilentSince;
        if (idleAfter && (!reader || silentFor >= TRANSCRIPT_PATIENCE_MS)) {
          const reply = target.screenReply(job.record.question) ?? '';
          if (reply !== '' || !reader || silentFor >= EMPTY_SCREEN_PATIENCE_MS) {
            this.update(job, { type: 'reply', at: now, reply, source: 'screen', endSignal: reader ? 'screen/idle (transcript silent)' : 'screen/idle', endRecordAt: target.stateSince, transcript: null });
            return finish();
          }
        }
      };
      const tick = (): void => {
        if (looking) {
          again = true;
          return;
        }
        looking = true;
        look()
          .catch((err: unknown) => this.logger.warn('ask: reading the reply failed', { ask: job.record.id, error: errorMessage(err) }))
          .finally(() => {
            looking = false;
            if (again) {
              again = false;
              tick();
            }
          });
      };
      const timer = setInterval(tick, REPLY_POLL_MS);
      const sub = target.onStateChange(tick);
      tick();
    });
  }

  private timeOut(job: Job, timeoutMs: number): void {
    const where = job.record.status === 'queued' ? `still waiting for pane ${job.target.id} to be free` : `no reply from pane ${job.target.id}`;
    this.update(job, { type: 'timeout', at: Date.now(), message: `${where} after ${Math.round(timeoutMs / 1000)} s` });
  }

  /** Applies an event, records the change, and settles a final ask: out of its line, waiters told, delivery queued. */
  private update(job: Job, event: AskEvent): void {
    const before = job.record.status;
    const life = stepAsk(job.record, event);
    if (life === job.record) return;
    job.record = { ...job.record, ...life };
    this.recorder.record(job.record);
    if (!isFinal(job.record.status) || isFinal(before)) return;
    job.timer?.dispose();
    job.abort.abort();
    this.jobs.delete(job.record.id);
    const line = job.line;
    line.jobs = line.jobs.filter((j) => j !== job);
    // A final ask frees its target's line (a timed-out turn still runs: the next ask waits for idle),
    // save one ended while its question was typed: the line stays held until the typing has
    // stopped and what went in is taken back out of the input box (run() frees it then), or the
    // next question would be typed onto it and both sent as one.
    if (line.active === job && before !== 'typing') line.active = undefined;
    queueMicrotask(() => this.pump(line));
    for (const w of job.waiters.splice(0)) w();
    if (job.deliver) this.deliver(job);
  }

  private deliver(job: Job): void {
    const step = (event: DeliveryEvent, extra: Partial<AskRecord> = {}): void => {
      job.record = { ...job.record, ...extra, delivery: stepDelivery(job.record.delivery, event) };
      this.recorder.record(job.record);
    };
    // `pending` while the asker is busy; `delivering` from the moment its reply is being typed.
    this.deliveries.enqueue(
      { ...job.record },
      {
        start: () => step({ type: 'begin' }),
        done: (outcome) => {
          if (outcome.ok) step({ type: 'delivered' }, { deliveredAt: Date.now() });
          else step({ type: 'failed' }, { deliveryError: outcome.error ?? null });
        },
      },
    );
  }
}
