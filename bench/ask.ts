/**
 * What Switchboard adds to an ask, against real CLIs and the scripted model (in-process engine,
 * no daemon): for each ask, `pickup` is from the CLI writing its end of turn in its transcript
 * (Claude's turn_duration, Codex's task_complete: their own timestamps) to the ask being done;
 * `typing` is from the target being free to the CLI showing it took the question (sendPrompt:
 * the echo, Enter, the CLI's confirmation, so partly the CLI's own time). `npm run bench -- ask`
 * (bench/run.ts) records the figures; no peer here asks through these CLIs' transcripts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AskEngine, PaneAskTarget, type AskDirectory, type AskRecord, type AskTarget } from '../src/asks/index.js';
import { ModelServer } from '../src/model-server/index.js';
import { PaneRegistry } from '../src/pane/index.js';
import { startSandboxedAgent } from '../test/support/agent-panes.js';
import { percentile } from './stats.js';

export interface AskFigure {
  name: string;
  unit: string;
  value: number;
  better: 'lower' | 'higher';
}

/** `count` asks to each of Codex and Claude Code, one after another; the figures, and the raw numbers as JSON. */
export async function measureAsks(count = 20): Promise<{ figures: AskFigure[]; raw: Record<string, unknown> }> {
  const targets: AskTarget[] = [];
  const directory: AskDirectory = { list: () => targets, get: (id) => targets.find((t) => t.id === id) };
  const model = await ModelServer.start({ scenario: { name: 'ask-bench', rules: [{ steps: [{ text: 'Four.' }] }] } });
  const registry = new PaneRegistry({});
  const engine = new AskEngine({ directory });
  const base = mkdtempSync(path.join(tmpdir(), 'sb-ask-bench-'));
  const out: Record<string, unknown> = { asks_per_cli: count };
  try {
    for (const agent of ['codex', 'claude']) {
      const started = await startSandboxedAgent(registry, agent, { home: path.join(base, agent, 'home'), cwd: path.join(base, agent, 'work'), modelUrl: model.url });
      targets.push(new PaneAskTarget({ agent: started.agent, home: started.home }));
      const done: AskRecord[] = [];
      for (let i = 0; i < count; i++) {
        const ask = engine.ask({ target: started.pane.id, question: `What is 2+2? (${i})` });
        done.push(await engine.wait(ask.id));
      }
      const ok = done.filter((a) => a.status === 'done' && a.replySource === 'transcript' && a.endRecordAt !== null);
      const pickup = ok.map((a) => (a.endedAt ?? 0) - (a.endRecordAt ?? 0)).sort((a, b) => a - b);
      const typing = ok.map((a) => (a.typedAt ?? 0) - (a.startedAt ?? 0)).sort((a, b) => a - b);
      const whole = ok.map((a) => (a.endedAt ?? 0) - a.createdAt).sort((a, b) => a - b);
      out[agent] = {
        version: started.version,
        done: ok.length,
        failed: done.filter((a) => a.status !== 'done').map((a) => a.error),
        pickup_ms: { p50: percentile(pickup, 50), p99: percentile(pickup, 99) },
        typing_ms: { p50: percentile(typing, 50), p99: percentile(typing, 99) },
        ask_ms: { p50: percentile(whole, 50), p99: percentile(whole, 99) },
      };
    }
  } finally {
    engine.dispose();
    await registry.close({ graceMs: 2_000 });
    await model.close();
    rmSync(base, { recursive: true, force: true });
  }
  const figures: AskFigure[] = [];
  for (const agent of ['codex', 'claude']) {
    const r = out[agent] as { done: number; pickup_ms: { p50: number; p99: number }; typing_ms: { p50: number; p99: number }; ask_ms: { p50: number; p99: number } } | undefined;
    if (!r) continue;
    figures.push(
      { name: `ask ${agent}: pickup after the CLI's end of turn p50`, unit: 'ms', value: r.pickup_ms.p50, better: 'lower' },
      { name: `ask ${agent}: pickup after the CLI's end of turn p99`, unit: 'ms', value: r.pickup_ms.p99, better: 'lower' },
      { name: `ask ${agent}: typing until the CLI took it p50`, unit: 'ms', value: r.typing_ms.p50, better: 'lower' },
      { name: `ask ${agent}: typing until the CLI took it p99`, unit: 'ms', value: r.typing_ms.p99, better: 'lower' },
      { name: `ask ${agent}: whole ask p50`, unit: 'ms', value: r.ask_ms.p50, better: 'lower' },
      { name: `ask ${agent}: asks answered from the transcript`, unit: `of ${count}`, value: r.done, better: 'higher' },
    );
  }
  return { figures, raw: out };
}
