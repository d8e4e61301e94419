import { describe, expect, it } from 'vitest';
import type { LogMessage, NormalizedEntry } from '../rpc/wire.js';
import { LogModel } from './log-model.js';

let seq = 0;
const out = (content: string): LogMessage => ({ seq: ++seq, msg: { type: 'stdout', content } });
const entry = (e: Partial<NormalizedEntry> & Pick<NormalizedEntry, 'id' | 'type'>): LogMessage => ({
  seq: ++seq,
  msg: { type: 'normalized', entry: { timestamp: 0, content: '', ...e } },
});

describe('LogModel', () => {
  it('joins consecutive output chunks into one run, colours kept', () => {
    const model = new LogModel();
    model.push([out('\x1b[31mre'), out('d\x1b[0m ok')]);
    expect(model.items).toHaveLength(1);
    const [run] = model.items;
    expect(run?.kind === 'output' && run.html).toBe('<span class="sb-fg-1">red</span> ok');
  });

  it('puts a tool result under its call, paired by toolCallId', () => {
    const model = new LogModel();
    model.push([
      entry({ id: 'c1', type: 'command_run', content: 'ls', metadata: { toolCallId: 't1', toolInput: { command: 'ls' } } }),
      entry({ id: 'm1', type: 'assistant_message', content: 'looking' }),
      entry({ id: 'r1', type: 'tool_result', content: 'a.txt', metadata: { toolCallId: 't1' } }),
    ]);
    expect(model.items.map((i) => i.kind === 'entry' && i.entry.id)).toEqual(['c1', 'm1']);
    const [call] = model.items;
    expect(call?.kind === 'entry' && call.result?.content).toBe('a.txt');
  });

  it('shows a result whose call it never saw on its own', () => {
    const model = new LogModel();
    model.push([entry({ id: 'r9', type: 'tool_result', content: 'x', metadata: { toolCallId: 'unknown' } })]);
    expect(model.items).toHaveLength(1);
  });

  it('replaces an entry that arrives again with the same id', () => {
    const model = new LogModel();
    model.push([entry({ id: 'a', type: 'command_run', content: 'rm x', metadata: { status: 'pending' } })]);
    model.push([entry({ id: 'a', type: 'command_run', content: 'rm x', metadata: { status: 'success' } })]);
    expect(model.items).toHaveLength(1);
    const [item] = model.items;
    expect(item?.kind === 'entry' && item.entry.metadata?.status).toBe('success');
  });

  it('keeps the view bounded, counting what it dropped', () => {
    const model = new LogModel();
    const many: LogMessage[] = [];
    for (let i = 0; i < 3000; i++) many.push(entry({ id: `e${i}`, type: 'system_message', content: String(i) }));
    model.push(many);
    expect(model.items.length).toBeLessThanOrEqual(2500);
    expect(model.items.length + model.hidden).toBe(3000);
  });
});
