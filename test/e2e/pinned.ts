/** The agent CLI versions the test line pins (test/agent-clis/package.json), by profile name. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const file = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'agent-clis', 'package.json');
const deps = (JSON.parse(readFileSync(file, 'utf8')) as { dependencies: Record<string, string> }).dependencies;

export const PINNED = {
  claude: deps['@anthropic-ai/claude-code'] ?? '',
  codex: deps['@openai/codex'] ?? '',
  gemini: deps['@google/gemini-cli'] ?? '',
  opencode: deps['opencode-ai'] ?? '',
} as const;
