// Runs a real agent CLI through one case (bench/capture-cases.ts) at one terminal size against the
// scripted model, with auto-approve (or a callback that denies), and checks what the task left
// behind. With an output folder, every distinct screen is kept, plain and styled, with how the
// profile reads it (scripts/capture-screens.ts); the reliability bench runs it without one.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentCatalog, classifyScreen } from '../src/agents/index.js';
import { PaneRegistry } from '../src/pane/index.js';
import { CodingAgent } from '../src/drivers/pane/index.js';
import type { CaptureCase } from './capture-cases.js';
import { ModelServer } from '../src/model-server/index.js';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN_DIRS = [path.join(root, 'test', 'agent-clis', 'node_modules', '.bin')];

export interface CaptureResult {
  agent: string;
  version: string | undefined;
  caseName: string;
  cols: number;
  rows: number;
  status: string;
  errorMessage: string | null;
  question: string | null;
  approvals: { decision: string; decidedBy: string; certain: boolean | undefined; doubts: string[] | undefined }[];
  screens: number;
  modelRequests: number;
  durationMs: number;
  /** The case's own check of the result (files written, commands never run). */
  verdict: string;
}

/** Runs one case at one size; screens go under `outDir` when given. */
export async function captureCase(agent: string, spec: CaptureCase, cols: number, rows: number, outDir?: string): Promise<CaptureResult> {
  const base = spec.outsideTmp ? path.join(root, 'test-artifacts', 'capture-runs') : os.tmpdir();
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(path.join(base, `sb-capture-${agent}-`));
  const home = path.join(dir, 'home');
  const work = path.join(dir, 'work');
  mkdirSync(home);
  mkdirSync(work);
  spec.prepare?.(work);
  const model = await ModelServer.start({ scenario: spec.scenario, cwd: work });
  const registry = new PaneRegistry({ defaults: { cols, rows } });
  const catalog = new AgentCatalog();
  const profile = catalog.get(agent);
  const seen = new Set<string>();
  let index = 0;
  let version: string | undefined;
  let folder: string | undefined;
  const created = registry.onPaneCreated((pane) => {
    version = pane.agent?.version;
    if (!outDir) return;
    folder = path.join(outDir, `${agent}-${version ?? 'unknown'}`, `${spec.name}-${cols}x${rows}`);
    rmSync(folder, { recursive: true, force: true });
    mkdirSync(folder, { recursive: true });
    const screens = profile.screensFor(version);
    pane.onRender(() => {
      const plain = pane.snapshot().lines;
      const key = plain.join('\n');
      if (seen.has(key) || plain.every((l) => l.trim() === '')) return;
      seen.add(key);
      const ansi = pane.snapshot({ ansi: true }).lines;
      const read = classifyScreen(screens, { lines: plain, ansiLines: ansi });
      const n = String(index++).padStart(3, '0');
      const mask = (t: string): string => t.split(work).join('/home/dev/work').split(home).join('/home/dev').replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT');
      writeFileSync(path.join(folder ?? '', `${n}.txt`), `${mask(plain.join('\n'))}\n`);
      writeFileSync(path.join(folder ?? '', `${n}.ansi.txt`), `${mask(ansi.join('\n'))}\n`);
      writeFileSync(path.join(folder ?? '', `${n}.read.txt`), `${read.state}${read.evidence ? ` ${read.evidence.rule}: ${read.evidence.line}` : ''}\n`);
    });
  });
  const runner = new CodingAgent({
    tool: agent,
    catalog,
    autoApprove: spec.deny ? false : true,
    ...(spec.deny ? { onApproval: () => 'deny' as const } : {}),
    sandbox: { home, modelUrl: model.url },
    registry,
    binaryDirs: BIN_DIRS,
    timeoutMs: spec.timeoutMs ?? 90_000,
  });
  try {
    const result = await runner.execute(spec.prompt, { workdir: work });
    const out: CaptureResult = {
      agent,
      version,
      caseName: spec.name,
      cols,
      rows,
      status: result.status,
      errorMessage: result.errorMessage,
      question: result.question,
      approvals: result.approvals.map((a) => ({ decision: a.decision, decidedBy: a.decidedBy, certain: a.request?.certain, doubts: a.request?.doubts })),
      screens: index,
      modelRequests: model.modelRequests().length,
      durationMs: result.durationMs,
      verdict: spec.check(result, work),
    };
    if (folder) writeFileSync(path.join(folder, 'result.json'), `${JSON.stringify(out, null, 2)}\n`);
    return out;
  } finally {
    await runner.close();
    created.dispose();
    await registry.close();
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
