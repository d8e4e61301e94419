import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { plan, readConversation } from '../../model-server/index.js';
import { APPROVAL_PROMPT, DOCTOR_SCENARIO, LONG_PROMPT_BYTES, LONG_REPLY, SHORT_PROMPT, SHORT_REPLY, longPrompt } from './checks.js';
import { normalizer } from './save.js';

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
  });
});
