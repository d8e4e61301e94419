/**
 * The structured-output path at speed: how many lines per second each normalizer turns into
 * entries, and how many messages per second the MsgStore takes in and fans out to 1 and to 50
 * subscribers, with the memory it holds at its bound. All on one core, in this process.
 *
 * The inputs are the real CLIs' recorded lines (test/fixtures/cli-captures), repeated: what a long
 * session of each CLI looks like to its normalizer.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Normalizer } from '../src/output/entry.js';
import { MsgStore } from '../src/output/msg-store.js';
import { ClaudeStreamJsonNormalizer } from '../src/output/normalize-claude.js';
import { CodexExecJsonNormalizer } from '../src/output/normalize-codex.js';
import { GeminiStreamJsonNormalizer } from '../src/output/normalize-gemini.js';
import { OpenCodeJsonNormalizer } from '../src/output/normalize-opencode.js';
import { sleep } from './stats.js';

const captures = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'test', 'fixtures', 'cli-captures');

export interface EventFigure {
  name: string;
  unit: string;
  value: number;
}

const FORMATS: { format: string; files: string[]; make: () => Normalizer }[] = [
  { format: 'claude stream-json', files: ['claude-headless-tool-allowedTools.jsonl', 'claude-headless-text.jsonl'], make: () => new ClaudeStreamJsonNormalizer() },
  { format: 'codex exec --json', files: ['codex-headless-tool.jsonl', 'codex-headless-text.jsonl'], make: () => new CodexExecJsonNormalizer() },
  { format: 'gemini stream-json', files: ['gemini-headless-tool-yolo.jsonl', 'gemini-headless-text.jsonl'], make: () => new GeminiStreamJsonNormalizer() },
  { format: 'opencode json', files: ['opencode-headless-tool.jsonl', 'opencode-headless-text.jsonl'], make: () => new OpenCodeJsonNormalizer() },
];

/** Entries per second for one format: the best of 3 passes over 200,000 lines. */
function normalizerThroughput(make: () => Normalizer, sample: string[]): { linesPerSec: number; entriesPerSec: number } {
  const lines: string[] = [];
  while (lines.length < 200_000) lines.push(...sample);
  let best = { linesPerSec: 0, entriesPerSec: 0 };
  for (let pass = 0; pass < 3; pass++) {
    const n = make();
    let entries = 0;
    const t0 = performance.now();
    for (const line of lines) entries += n.line(line).length;
    entries += n.end?.().length ?? 0;
    const s = (performance.now() - t0) / 1000;
    if (lines.length / s > best.linesPerSec) best = { linesPerSec: lines.length / s, entriesPerSec: entries / s };
  }
  return best;
}

/** Messages per second pushed and delivered to every subscriber, with `subscribers` listening. */
async function storeThroughput(subscribers: number, messages: number): Promise<number> {
  const store = new MsgStore<{ type: string; content: string; n: number }>({ batchMs: 16 });
  let delivered = 0;
  for (let i = 0; i < subscribers; i++) store.subscribe((batch) => void (delivered += batch.length));
  const t0 = performance.now();
  // Pushed in bursts of 1,000, letting the event loop turn between them as a producer on I/O does.
  for (let i = 0; i < messages; i++) {
    store.push({ type: 'assistant_message', content: `line ${i} of a reply streamed by the agent`, n: i });
    if (i % 1_000 === 999) await new Promise((resolve) => setImmediate(resolve));
  }
  while (delivered < messages * subscribers) await sleep(1);
  const s = (performance.now() - t0) / 1000;
  await store.close();
  return messages / s;
}

/** Heap held by a store filled far past its default bound (10,000 messages or 50 MB). */
async function memoryAtBound(): Promise<{ mib: number; retained: number }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  await sleep(50);
  const before = process.memoryUsage().heapUsed;
  const store = new MsgStore<{ type: string; content: string }>();
  const body = 'x'.repeat(2_000);
  for (let i = 0; i < 100_000; i++) store.push({ type: 'tool_result', content: `${i} ${body}` });
  gc?.();
  await sleep(50);
  const mib = (process.memoryUsage().heapUsed - before) / 2 ** 20;
  const retained = store.stats().retained;
  await store.close();
  return { mib, retained };
}

export async function measureEvents(): Promise<EventFigure[]> {
  const figures: EventFigure[] = [];
  for (const { format, files, make } of FORMATS) {
    const sample = files.flatMap((f) => readFileSync(path.join(captures, f), 'utf8').split('\n').filter((l) => l.trim() !== ''));
    const { linesPerSec, entriesPerSec } = normalizerThroughput(make, sample);
    figures.push({ name: `normalizer ${format}: lines/s`, unit: 'lines/s', value: Math.round(linesPerSec) });
    figures.push({ name: `normalizer ${format}: entries/s`, unit: 'entries/s', value: Math.round(entriesPerSec) });
  }
  for (const subscribers of [1, 50]) {
    figures.push({ name: `MsgStore push+deliver, ${subscribers} subscriber${subscribers === 1 ? '' : 's'}`, unit: 'msg/s', value: Math.round(await storeThroughput(subscribers, 200_000)) });
  }
  const memory = await memoryAtBound();
  figures.push({ name: `MsgStore heap at its bound (${memory.retained} messages of ~2 KB retained)`, unit: 'MiB', value: Number(memory.mib.toFixed(1)) });
  return figures;
}
