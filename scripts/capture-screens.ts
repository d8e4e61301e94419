// Captures what a real agent CLI draws for each case (bench/capture-cases.ts) at the sizes people
// use, against the scripted model: every distinct screen, plain and styled, with how the profile
// reads it, and the task's end. A developer's tool for new CLI versions: the screens that become
// fixtures (test/fixtures/cases/) are picked from its output.
//
//   node --import tsx scripts/capture-screens.ts --agent codex [--case shell]... [--sizes 80x24,120x40,200x50] [--out DIR]
//
// Needs the pinned CLIs installed (scripts/install-agent-clis.ts). Writes
// DIR/<agent>-<version>/<case>-<cols>x<rows>/NNN.txt, NNN.ansi.txt, NNN.read.txt and result.json
// (default DIR: test-artifacts/captures); prints one line per size.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CAPTURE_CASES } from '../bench/capture-cases.js';
import { captureCase } from '../bench/case-run.js';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      agent: { type: 'string' },
      case: { type: 'string', multiple: true },
      sizes: { type: 'string', default: '80x24,120x40,200x50' },
      out: { type: 'string', default: path.join(root, 'test-artifacts', 'captures') },
    },
  });
  if (!values.agent) throw new Error('--agent is required');
  const names = values.case ?? Object.keys(CAPTURE_CASES);
  for (const name of names) {
    const spec = CAPTURE_CASES[name];
    if (!spec) throw new Error(`unknown case ${name}; known: ${Object.keys(CAPTURE_CASES).join(', ')}`);
    for (const size of values.sizes.split(',')) {
      const [cols = 120, rows = 40] = size.split('x').map(Number);
      const r = await captureCase(values.agent, spec, cols, rows, values.out);
      console.log(`${r.agent} ${r.version} ${name} ${cols}x${rows}: ${r.status} (${r.verdict}) in ${r.durationMs} ms, ${r.screens} screens, approvals ${JSON.stringify(r.approvals)}${r.errorMessage ? ` error: ${r.errorMessage.slice(0, 120)}` : ''}${r.question ? ` question: ${r.question.slice(0, 120)}` : ''}`);
    }
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
