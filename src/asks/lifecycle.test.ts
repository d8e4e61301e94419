import { describe, expect, it } from 'vitest';
import { newAskLife, stepAsk, stepDelivery, type AskEvent } from './lifecycle.js';

const reply: AskEvent = { type: 'reply', at: 40, reply: 'Paris.', source: 'transcript', endSignal: 'event_msg/task_complete', endRecordAt: 39, transcript: '/t.jsonl' };

describe('the ask lifecycle', () => {
  it('goes queued → typing → waiting → done, with its timings', () => {
    let life = newAskLife(10);
    life = stepAsk(life, { type: 'start', at: 20 });
    expect(life.status).toBe('typing');
    life = stepAsk(life, { type: 'typed', at: 30 });
    expect(life.status).toBe('waiting');
    life = stepAsk(life, reply);
    expect(life).toMatchObject({ status: 'done', createdAt: 10, startedAt: 20, typedAt: 30, endedAt: 40, reply: 'Paris.', replySource: 'transcript', endRecordAt: 39 });
  });

  it('takes no reply before the question was typed, and no event once final', () => {
    const queued = newAskLife(0);
    expect(stepAsk(queued, reply)).toBe(queued);
    expect(stepAsk(queued, { type: 'typed', at: 1 })).toBe(queued);
    const cancelled = stepAsk(queued, { type: 'cancel', at: 2 });
    expect(cancelled.status).toBe('cancelled');
    for (const e of [reply, { type: 'start', at: 3 }, { type: 'timeout', at: 3, message: 'x' }, { type: 'fail', at: 3, code: 'PANE_EXITED', message: 'x' }] as AskEvent[]) {
      expect(stepAsk(cancelled, e)).toBe(cancelled);
    }
  });

  it('fails, times out or is cancelled from any state before the end', () => {
    for (const path of [[], [{ type: 'start', at: 1 }], [{ type: 'start', at: 1 }, { type: 'typed', at: 2 }]] as AskEvent[][]) {
      const at = path.reduce(stepAsk, newAskLife(0));
      expect(stepAsk(at, { type: 'timeout', at: 5, message: 'no reply within 1 s' })).toMatchObject({ status: 'timed_out', error: { code: 'TIMEOUT' }, endedAt: 5 });
      expect(stepAsk(at, { type: 'fail', at: 5, code: 'PANE_EXITED', message: 'gone' })).toMatchObject({ status: 'failed', error: { code: 'PANE_EXITED' } });
      expect(stepAsk(at, { type: 'cancel', at: 5 }).status).toBe('cancelled');
    }
  });
});

describe('delivery', () => {
  it('happens once: pending → delivering → delivered, and never again', () => {
    let d = stepDelivery('pending', { type: 'begin' });
    expect(d).toBe('delivering');
    d = stepDelivery(d, { type: 'delivered' });
    expect(d).toBe('delivered');
    expect(stepDelivery(d, { type: 'begin' })).toBe('delivered');
    expect(stepDelivery(d, { type: 'failed' })).toBe('delivered');
    expect(stepDelivery('none', { type: 'begin' })).toBe('none');
    expect(stepDelivery('delivering', { type: 'failed' })).toBe('failed');
  });
});
