import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { plan, readConversation } from '../model-server/index.js';
import { APPROVAL_PROMPT, DOCTOR_SCENARIO, LONG_PROMPT_BYTES, LONG_REPLY, SHORT_PROMPT, SHORT_REPLY, longPrompt } from './checks.js';
import { normalizer, saveDoctorRun } from './save.js';
import type { DoctorReport } from './report.js';
import type { LiveCheck } from './live-check.js';

/** What the scripted model answers a main request (one with the shell tools) carrying `prompt`. */
function answerTo(prompt: string): string {
  const body = { model: 'm', messages: [{ role: 'user', content: prompt }], tools: ['bash', 'read', 'write'].map((name) => ({ type: 'function', function: { name, parameters: {} } })) };
  const decided = plan(DOCTOR_SCENARIO, readConversation('openai-chat', body), undefined);
  return decided.reply.kind === 'text' ? decided.reply.text : decided.reply.kind === 'tool' ? `tool:${JSON.stringify(decided.reply.call)}` : decided.reply.kind;
}

describe('doctor checks', () => {
  it('builds a long prompt of the size asked, on one line, with numbered words', () => {
    const long = longPrompt();
    expect(long.length).toBeGreaterThanOrEqual(LONG_PROMPT_BYTES);
    expect(long.length).toBeLessThan(LONG_PROMPT_BYTES + 16);
    expect(long).not.toMatch(/[\r\n]/);
    expect(Buffer.byteLength(long)).toBe(long.length);
    expect(long).toContain(' w00001 ');
    expect(longPrompt(500).length).toBeLessThan(520);
  });

  it('scripts a known reply for each prompt, the long one included', () => {
    expect(answerTo(SHORT_PROMPT)).toBe(SHORT_REPLY);
    expect(answerTo(longPrompt())).toBe(LONG_REPLY);
    expect(answerTo(APPROVAL_PROMPT)).toMatch(/^tool:.*echo doctor-approval-ok > doctor_check\.txt/);
  });

  it('saves screens with the temporary folders and ports replaced', () => {
    const root = path.join('/tmp', 'sb-doctor-a1B2c3', 'codex-Zz9yY8');
    const normalize = normalizer({ home: path.join(root, 'home'), work: path.join(root, 'work') });
    expect(normalize(`cwd ${root}/work and ${root}/home/.codex at http://127.0.0.1:43121/v1 in codex-Zz9yY8`)).toBe('cwd /home/dev/work and /home/dev/.codex at http://127.0.0.1:PORT/v1 in codex-XXXXXX');
    // A path shortened from its start, as OpenCode's footer shows one too long for it (seen in a run
    // whose temporary folder made the paths longer): no full path to replace, the bare names still go.
    expect(normalize('■⬝⬝⬝⬝⬝⬝⬝  OYj5M/sb-doctor-a1B2c3/codex-Zz9yY8/work   12.3K (10%)')).toBe('■⬝⬝⬝⬝⬝⬝⬝  OYj5M/sb-doctor-XXXXXX/codex-XXXXXX/work   12.3K (10%)');
  });

  it('saves a report naming every check\u2019s folders by their fixed names, whatever their order', () => {
    const out = mkdtempSync(path.join(tmpdir(), 'sb-doctor-save-'));
    try {
      const run = path.join('/tmp', 'sbt-OYj5Mq', 'sb-doctor-cZFQfV');
      const checks = new Map(['claude', 'opencode'].map((name) => {
        const dir = path.join(run, `${name}-Ab12Cd`);
        return [name, { home: path.join(dir, 'home'), work: path.join(dir, 'work'), screens: [] } as unknown as LiveCheck];
      }));
      const agents = [...checks].map(([name, check]) => ({ name, version: '1.0.0', detail: `ran in ${check.work} from ${check.home}` }));
      saveDoctorRun(out, { ok: true, agents } as unknown as DoctorReport, checks);
      const report = readFileSync(path.join(out, 'report.json'), 'utf8');
      // One check's masked run folder never keeps the next check's full paths from being replaced.
      expect(report).toContain('"detail": "ran in /home/dev/work from /home/dev"');
      expect(report).not.toMatch(/sb-doctor-(?!XXXXXX)[A-Za-z0-9]{6}\/|sbt-OYj5Mq/);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
