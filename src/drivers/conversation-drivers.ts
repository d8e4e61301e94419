/** Which multi-turn driver speaks to which CLI; `registerConversationDriver` adds one for a user's own profile. */
import { SwitchboardError } from '../core/errors.js';
import type { SessionDriverOptions } from './agent-program.js';
import { ClaudeConversationDriver } from './claude-conversation.js';
import { CodexConversationDriver } from './codex-conversation.js';
import { AcpDriver } from './acp-driver.js';
import type { ConversationDriver } from './conversation.js';

type Factory = (options: SessionDriverOptions) => ConversationDriver;

const factories = new Map<string, Factory>([
  ['claude', (o) => new ClaudeConversationDriver(o)],
  ['codex', (o) => new CodexConversationDriver(o)],
  ['gemini', (o) => new AcpDriver({ tool: 'gemini', ...o })],
  ['opencode', (o) => new AcpDriver({ tool: 'opencode', ...o })],
]);

/** The agents a multi-turn session can be opened with. */
export function conversationAgents(): string[] {
  return [...factories.keys()];
}

/** The multi-turn driver for `agent`; INVALID_PARAMS for a CLI without one. */
export function conversationDriverFor(agent: string, options: SessionDriverOptions = {}): ConversationDriver {
  const factory = factories.get(agent);
  if (!factory) throw new SwitchboardError('INVALID_PARAMS', `no multi-turn driver for ${agent} (there is one for ${conversationAgents().join(', ')})`, { agent });
  return factory(options);
}
