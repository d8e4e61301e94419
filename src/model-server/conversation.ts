/**
 * What a model request says about the conversation, whatever API it speaks: the latest user prompt,
 * how many tool results came back since it (which step of the script is due), which tools the
 * client offers, and where the agent works. Everything comes from the request body.
 */

export type Api = 'anthropic' | 'openai-responses' | 'openai-chat' | 'gemini';

export interface ConversationView {
  api: Api;
  /** Names of the tools the client offers. */
  tools: string[];
  /**
   * Tools offered inside a namespace (Responses API `{type:'namespace', name, tools}`), whether in
   * the request's `tools` or loaded by a tool search since the prompt: a call names both.
   */
  namespaced: NamespacedTool[];
  /** Tool searches (Codex's tool_search) answered since the prompt; they are not steps of the script. */
  toolSearches: number;
  /** Text of the latest real user prompt ('' when there is none). */
  prompt: string;
  /** Tool results in the conversation after that prompt. */
  stepsDone: number;
  /** The text of the last tool result after that prompt ('' when none). */
  lastToolResult: string;
  /** The agent's working directory, when the request mentions it. */
  cwd: string | undefined;
  /** All text in the request (system prompt included), for recognising side requests. */
  text: string;
  /** A JSON schema the answer must follow (Gemini's model router asks for one). */
  jsonSchema: unknown;
  /** True when the client asked for a JSON answer, with or without a schema. */
  wantsJson: boolean;
  stream: boolean;
  model: string | undefined;
}

/** A tool the client groups under a namespace (Codex: namespace `mcp__server__`, name `tool`). */
export interface NamespacedTool {
  namespace: string | undefined;
  name: string;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Every string inside a value, joined (bounded, so a huge request cannot blow up). */
function allStrings(value: unknown, out: string[] = [], budget = { left: 2_000_000 }): string[] {
  if (budget.left <= 0) return out;
  if (typeof value === 'string') {
    out.push(value);
    budget.left -= value.length;
  } else if (Array.isArray(value)) {
    for (const v of value) allStrings(v, out, budget);
  } else if (isObject(value)) {
    for (const v of Object.values(value)) allStrings(v, out, budget);
  }
  return out;
}

/**
 * Tried in this order, each against the whole request, and the first pattern that matches anywhere
 * wins: the CLIs' own exact phrases come before the loose one, so a request that also mentions a
 * "current working directory" in passing (a tool result, the user's words) keeps the CLI's answer.
 */
const CWD_PATTERNS = [
  /<cwd>([^<\n]+)<\/cwd>/, // Codex environment context
  /Working directory:\s*(\/[^\s'"`]+|[A-Za-z]:\\[^\s'"`]+)/, // Claude Code, OpenCode
  /working in the directory:?\s*(\/[^\s'"`]+|[A-Za-z]:\\[^\s'"`]+)/i, // Gemini CLI
  /current working directory[^/\n]*?(\/[^\s'"`]+)/i,
];

function findCwd(text: string): string | undefined {
  for (const pattern of CWD_PATTERNS) {
    const match = pattern.exec(text);
    if (match?.[1]) return match[1].replace(/[.,;:]+$/, '');
  }
  return undefined;
}

/** Codex sends its environment and instructions as user messages before the prompt. */
const CONTEXT_MESSAGE = /^\s*<(environment_context|user_instructions|permissions|turn_context)[\s>]/;

function textOfParts(parts: unknown): string {
  if (typeof parts === 'string') return parts;
  return asArray(parts)
    .map((p) => (isObject(p) ? str(p.text) : ''))
    .filter(Boolean)
    .join('\n');
}

function anthropic(body: Json): Omit<ConversationView, 'api' | 'text' | 'cwd' | 'stream' | 'model'> {
  let stepsDone = 0;
  let prompt = '';
  let lastToolResult: string | undefined;
  const messages = asArray(body.messages);
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!isObject(m) || m.role !== 'user') continue;
    const blocks = asArray(m.content);
    if (blocks.some((b) => isObject(b) && b.type === 'tool_result')) {
      // A refused tool call ends the turn; Claude Code sends the refusal together with the user's
      // next prompt in one message. Text beside the results is that new prompt.
      const typed = textOfParts(blocks.filter((b) => isObject(b) && b.type === 'text'));
      // Claude Code answers its ToolSearch with the tools found (tool_reference blocks) and a
      // "Tool loaded." beside them: that text is its own, not the user's.
      const loadedTools = blocks.some((b) => isObject(b) && b.type === 'tool_result' && asArray(b.content).some((c) => isObject(c) && c.type === 'tool_reference'));
      if (!loadedTools && typed.replace(CONTEXT_BLOCKS, '').trim() !== '') {
        prompt = typed;
        stepsDone = 0;
        break;
      }
      stepsDone += 1;
      // Walking back from the newest: the first results met are the last ones sent.
      lastToolResult ??= blocks
        .filter((b): b is Json => isObject(b) && b.type === 'tool_result')
        .map((b) => textOfParts(b.content))
        .join('\n');
      continue;
    }
    prompt = textOfParts(m.content);
    break;
  }
  const tools = asArray(body.tools).map((t) => (isObject(t) ? str(t.name) : '')).filter(Boolean);
  return { tools, namespaced: [], toolSearches: 0, prompt, stepsDone, lastToolResult: lastToolResult ?? '', jsonSchema: undefined, wantsJson: false };
}

/**
 * The tools inside Responses API tool definitions: a function at the top level has no namespace, a
 * `namespace` entry holds functions (Codex groups an MCP server's tools so, and its tool_search
 * answers with such entries).
 */
function namespacedTools(defs: unknown[]): NamespacedTool[] {
  return defs.flatMap((t): NamespacedTool[] => {
    if (!isObject(t)) return [];
    if (t.type === 'namespace') {
      const namespace = str(t.name);
      return asArray(t.tools).flatMap((inner) => (isObject(inner) && str(inner.name) ? [{ namespace, name: str(inner.name) }] : []));
    }
    return str(t.name) ? [{ namespace: undefined, name: str(t.name) }] : [];
  });
}

function openaiResponses(body: Json): Omit<ConversationView, 'api' | 'text' | 'cwd' | 'stream' | 'model'> {
  let stepsDone = 0;
  let toolSearches = 0;
  let prompt = '';
  let lastToolResult: string | undefined;
  const loaded: NamespacedTool[] = [];
  const input = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : asArray(body.input);
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i];
    if (!isObject(item)) continue;
    if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') {
      stepsDone += 1;
      lastToolResult ??= typeof item.output === 'string' ? item.output : textOfParts(item.output);
      continue;
    }
    // Codex answers the model's tool_search_call with the tools it found; they can be called from
    // the next request on, without being in `tools`.
    if (item.type === 'tool_search_output') {
      toolSearches += 1;
      loaded.push(...namespacedTools(asArray(item.tools)));
      continue;
    }
    if ((item.type === 'message' || item.type === undefined) && item.role === 'user') {
      const text = textOfParts(item.content);
      if (CONTEXT_MESSAGE.test(text)) continue;
      prompt = text;
      break;
    }
  }
  const tools = asArray(body.tools).map((t) => (isObject(t) ? str(t.name) || str(t.type) : '')).filter(Boolean);
  const namespaced = [...namespacedTools(asArray(body.tools)).filter((t) => t.namespace !== undefined), ...loaded];
  const format = isObject(body.text) && isObject(body.text.format) ? body.text.format : undefined;
  return { tools, namespaced, toolSearches, prompt, stepsDone, lastToolResult: lastToolResult ?? '', jsonSchema: format?.schema, wantsJson: format?.type === 'json_schema' || format?.type === 'json_object' };
}

function openaiChat(body: Json): Omit<ConversationView, 'api' | 'text' | 'cwd' | 'stream' | 'model'> {
  let stepsDone = 0;
  let prompt = '';
  let lastToolResult: string | undefined;
  const messages = asArray(body.messages);
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!isObject(m)) continue;
    if (m.role === 'tool') {
      lastToolResult ??= textOfParts(m.content);
      continue;
    }
    if (m.role === 'assistant' && asArray(m.tool_calls).length > 0) {
      stepsDone += 1;
      continue;
    }
    if (m.role === 'user') {
      prompt = textOfParts(m.content);
      break;
    }
  }
  const tools = asArray(body.tools)
    .map((t) => (isObject(t) && isObject(t.function) ? str(t.function.name) : ''))
    .filter(Boolean);
  const format = isObject(body.response_format) ? body.response_format : undefined;
  return {
    tools,
    namespaced: [],
    toolSearches: 0,
    prompt,
    stepsDone,
    lastToolResult: lastToolResult ?? '',
    jsonSchema: isObject(format?.json_schema) ? format.json_schema.schema : undefined,
    wantsJson: format?.type === 'json_object' || format?.type === 'json_schema',
  };
}

/**
 * The text of a Gemini functionResponse: its `output` (Gemini CLI 0.61 puts an MCP tool's text there,
 * inside <untrusted_context> tags, its framing, taken off as a prompt's is), else its result,
 * content or error, else the response as JSON.
 */
function geminiToolResult(part: unknown): string {
  const response = isObject(part) && isObject(part.functionResponse) ? part.functionResponse.response : undefined;
  if (!isObject(response)) return typeof response === 'string' ? response : '';
  const value = response.output ?? response.result ?? response.content ?? response.error;
  const text = typeof value === 'string' ? value : textOfParts(value) || JSON.stringify(response);
  return /^\s*<untrusted_context>\n?([\s\S]*?)\n?<\/untrusted_context>\s*$/.exec(text)?.[1] ?? text;
}

function gemini(body: Json): Omit<ConversationView, 'api' | 'text' | 'cwd' | 'stream' | 'model'> {
  let stepsDone = 0;
  let prompt = '';
  let lastToolResult: string | undefined;
  const contents = asArray(body.contents);
  for (let i = contents.length - 1; i >= 0; i--) {
    const c = contents[i];
    if (!isObject(c) || (c.role !== 'user' && c.role !== undefined)) continue;
    const parts = asArray(c.parts);
    const responses = parts.filter((p) => isObject(p) && p.functionResponse !== undefined);
    if (responses.length > 0) {
      stepsDone += 1;
      lastToolResult ??= geminiToolResult(responses[responses.length - 1]);
      continue;
    }
    prompt = textOfParts(parts);
    break;
  }
  const tools = asArray(body.tools).flatMap((t) =>
    isObject(t) ? asArray(t.functionDeclarations).map((d) => (isObject(d) ? str(d.name) : '')) : [],
  ).filter(Boolean);
  const config = isObject(body.generationConfig) ? body.generationConfig : {};
  return {
    tools,
    namespaced: [],
    toolSearches: 0,
    prompt,
    stepsDone,
    lastToolResult: lastToolResult ?? '',
    jsonSchema: config.responseJsonSchema ?? config.responseSchema,
    wantsJson: config.responseMimeType === 'application/json',
  };
}

/**
 * Context the CLIs wrap around the user's words (Claude Code's system reminders, Gemini CLI's
 * session context, Codex's environment); rules match what the user wrote.
 */
const CONTEXT_BLOCKS = /<(system-reminder|session_context|environment_context|user_instructions)>[\s\S]*?<\/\1>/g;

/** Reads a request body of `api`. */
export function readConversation(api: Api, body: unknown, extra: { stream?: boolean; model?: string } = {}): ConversationView {
  const json = isObject(body) ? body : {};
  const core = api === 'anthropic' ? anthropic(json) : api === 'openai-responses' ? openaiResponses(json) : api === 'openai-chat' ? openaiChat(json) : gemini(json);
  const text = allStrings(json).join('\n');
  return {
    api,
    ...core,
    prompt: core.prompt.replace(CONTEXT_BLOCKS, '').trim(),
    text,
    cwd: findCwd(text),
    stream: extra.stream ?? json.stream === true,
    model: extra.model ?? (typeof json.model === 'string' ? json.model : undefined),
  };
}
