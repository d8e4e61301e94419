/** Which multi-turn driver speaks to which CLI; `registerSessionDriver` adds one for a user's own profile. */
import { SwitchboardError } from '../core/errors.js';
import type { SessionDriverOptions } from './agent-program.js';
import { ClaudeSessionDriver } from './claude-session.js';
import { CodexSessionDriver } from './codex-session.js';
import { AcpDriver } from './acp-driver.js';
import type { SessionDriver } from './session.js';

type Factory = (options: SessionDriverOptions) => SessionDriver;

const factories = new Map<string, Factory>([
  ['claude', (o) => new ClaudeSessionDriver(o)],
  ['codex', (o) => new CodexSessionDriver(o)],
  ['gemini', (o) => new AcpDriver({ tool: 'gemini', ...o })],
  ['opencode', (o) => new AcpDriver({ tool: 'opencode', ...o })],
]);

export function registerSessionDriver(agent: string, factory: Factory): void {
  factories.set(agent, factory);
}

/** The agents a multi-turn session can be opened with. */
export function sessionAgents(): string[] {
  return [...factories.keys()];
}

/** The multi-turn driver for `agent`; INVALID_PARAMS for a CLI without one. */
export function sessionDriverFor(agent: string, options: SessionDriverOptions = {}): SessionDriver {
  const factory = factories.get(agent);
  if (!factory) throw new SwitchboardError('INVALID_PARAMS', `no multi-turn driver for ${agent} (there is one for ${sessionAgents().join(', ')})`, { agent });
  return factory(options);
}
