import http from 'node:http';
import { appendFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { silentLogger, type Logger } from '../core/logger.js';
import { readConversation, type Api } from './conversation.js';
import { plan, type Plan } from './planner.js';
import { HELLO_SCENARIO, parseScenario, type Scenario } from './scenario.js';
import { renderAnthropic, renderError, renderGemini, renderOpenAiChat, renderOpenAiResponses, type Rendered } from './wire.js';

/** One request as the scripted model saw it. */
export interface LoggedRequest {
  seq: number;
  time: string;
  method: string;
  path: string;
  api: Api | undefined;
  /** Selected headers (credentials only noted as present). */
  headers: Record<string, string>;
  /** The parsed JSON, or the raw text (bounded) when the body is not JSON. */
  body: unknown;
  /** Absent for probes and for model requests rejected before planning (see `rejected`). */
  /**
   * `prompt` is the prompt's first 2,000 characters; `promptChars` its whole length and `promptEnd`
   * its last 200, so a test can tell a long prompt arrived whole without the log holding it all.
   */
  plan?: { role: Plan['role']; rule: Plan['rule']; step: number; reply: string; status: number; prompt: string; promptChars: number; promptEnd: string; stepsDone: number; tools: string[] };
  /** Why a model request was answered with an error without asking the scenario. */
  rejected?: { status: number; message: string };
}

export interface ModelServerOptions {
  scenario?: Scenario;
  host?: string;
  /** 0 (default) lets the OS choose. */
  port?: number;
  /** Working directory for relative paths when a request does not say where the agent works. */
  cwd?: string;
  /** Also append every request to this JSONL file. */
  logFile?: string;
  logger?: Logger;
  /**
   * Called once each planned reply has gone out, with when its writing began and ended: how a bench
   * lines up the model's first chunk with what a client of the agent saw, on the same clock.
   */
  onReplySent?: (sent: SentReply) => void;
}

/**
 * A reply as it was written. Times are wall-clock milliseconds with fractions
 * (`performance.timeOrigin + performance.now()`), comparable with another process's on this machine.
 */
export interface SentReply {
  request: LoggedRequest;
  /**
   * When its first bytes were written. For a streamed text reply that is its first text piece:
   * everything before the first pause (the stream's opening events and the first piece) goes out
   * in one go, after any `delay_ms` or gate.
   */
  firstWriteAt: number;
  /** When it ended, or when writing stopped because the client had gone. */
  endAt: number;
}

const MAX_BODY_BYTES = 64 * 1024 * 1024;
const LOGGED_HEADERS = ['user-agent', 'anthropic-version', 'anthropic-beta', 'originator', 'session-id', 'x-goog-api-client', 'content-type', 'accept'];
const CREDENTIAL_HEADERS = ['x-api-key', 'authorization', 'x-goog-api-key'];
/** How much of a body that is not JSON the log keeps. */
const MAX_LOGGED_RAW_CHARS = 10_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('request body too large'));
        req.destroy();
        return;
      }
      parts.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });
}

/** A request body as JSON, and why it cannot be a model request when it is not a JSON object. */
interface ReadBody {
  /** The parsed JSON; the raw text (bounded) when it does not parse; undefined when empty. */
  value: unknown;
  problem: string | undefined;
}

function describeJsonKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

function parseBody(raw: Buffer): ReadBody {
  if (raw.length === 0) return { value: undefined, problem: 'the request body is empty; expected a JSON object' };
  const text = raw.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // Kept as text so the log shows what the client actually sent.
    return { value: text.slice(0, MAX_LOGGED_RAW_CHARS), problem: `the request body is not valid JSON: ${(err as Error).message}` };
  }
  const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
  return { value, problem: isObject ? undefined : `the request body must be a JSON object, not ${describeJsonKind(value)}` };
}

/**
 * The path and query for the log, with a Gemini API key given as ?key= masked: the log is served
 * over HTTP and may be written to disk, so no credential may appear in it.
 */
function loggedPath(url: URL): string {
  return url.pathname + url.search.replace(/([?&]key=)[^&]*/g, '$1(present)');
}

/** Wall-clock milliseconds with fractions, for SentReply. */
const preciseNow = (): number => performance.timeOrigin + performance.now();

/**
 * Writes a rendered response, pausing where the script says; stops once the client has gone.
 * Resolves with when the writing began and ended.
 */
async function send(res: http.ServerResponse, rendered: Rendered): Promise<{ firstWriteAt: number; endAt: number }> {
  res.writeHead(rendered.status, rendered.headers);
  let firstWriteAt: number | undefined;
  for (const piece of rendered.body) {
    if (res.destroyed) break;
    if (typeof piece === 'string') {
      firstWriteAt ??= preciseNow();
      res.write(piece);
    } else await sleep(piece.pauseMs);
  }
  if (!res.destroyed) res.end();
  const endAt = preciseNow();
  return { firstWriteAt: firstWriteAt ?? endAt, endAt };
}

function pickHeaders(req: http.IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of LOGGED_HEADERS) {
    const value = req.headers[name];
    if (typeof value === 'string') out[name] = value;
  }
  for (const name of CREDENTIAL_HEADERS) if (req.headers[name] !== undefined) out[name] = '(present)';
  return out;
}

/** Which API a path belongs to, and (for Gemini) the model and whether to stream. */
function route(method: string, pathname: string): { api: Api; model?: string; stream?: boolean } | undefined {
  if (method !== 'POST') return undefined;
  if (/^(\/v1)?\/messages$/.test(pathname)) return { api: 'anthropic' };
  if (/^(\/v1)?\/responses$/.test(pathname)) return { api: 'openai-responses' };
  if (/^(\/v1)?\/chat\/completions$/.test(pathname)) return { api: 'openai-chat' };
  const gemini = /^\/v1(beta|alpha)?\/models\/([^/:]+):(streamGenerateContent|generateContent)$/.exec(pathname);
  if (gemini) return { api: 'gemini', model: gemini[2], stream: gemini[3] === 'streamGenerateContent' };
  return undefined;
}

/**
 * A scripted model on 127.0.0.1 that speaks Anthropic Messages, OpenAI Responses, OpenAI Chat
 * Completions and Gemini generateContent (streaming and not), so the real agent CLIs run offline.
 */
export class ModelServer {
  private readonly log: LoggedRequest[] = [];
  /** Gates by name: open, or the answers held until they are. */
  private readonly gates = new Map<string, { open: boolean; held: (() => void)[] }>();
  private closed = false;
  private scenario: Scenario;
  private seq = 0;
  private readonly logger: Logger;

  private constructor(
    private readonly server: http.Server,
    private readonly options: ModelServerOptions,
  ) {
    this.scenario = options.scenario ?? HELLO_SCENARIO;
    this.logger = options.logger ?? silentLogger;
  }

  /** Starts a server; resolves once it listens. */
  static async start(options: ModelServerOptions = {}): Promise<ModelServer> {
    const server = http.createServer();
    const instance = new ModelServer(server, options);
    server.on('request', (req, res) => {
      instance.handle(req, res).catch((err: unknown) => {
        instance.logger.error('scripted model request failed', { error: String(err) });
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'scripted model failure' } }));
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
    });
    return instance;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** The base URL, e.g. http://127.0.0.1:4010 */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Every request so far, oldest first. */
  get requests(): readonly LoggedRequest[] {
    return this.log;
  }

  /** Requests that asked the model something (not probes), optionally of one API. */
  modelRequests(api?: Api): LoggedRequest[] {
    return this.log.filter((r) => r.plan !== undefined && (api === undefined || r.api === api));
  }

  setScenario(scenario: Scenario): void {
    this.scenario = scenario;
  }

  clearRequests(): void {
    this.log.length = 0;
  }

  /** Opens the gate `name`: the answers held for it go out, and later ones are not held. */
  openGate(name: string): void {
    const gate = this.gates.get(name) ?? { open: false, held: [] };
    gate.open = true;
    this.gates.set(name, gate);
    for (const release of gate.held.splice(0)) release();
  }

  /** How many answers wait for the gate `name` now. */
  heldAt(name: string): number {
    return this.gates.get(name)?.held.length ?? 0;
  }

  /** Resolves once the gate `name` is open (or the server closes). */
  private passGate(name: string): Promise<void> {
    const gate = this.gates.get(name) ?? { open: false, held: [] };
    this.gates.set(name, gate);
    if (gate.open || this.closed) return Promise.resolve();
    return new Promise((resolve) => gate.held.push(resolve));
  }

  close(): Promise<void> {
    this.closed = true;
    for (const gate of this.gates.values()) for (const release of gate.held.splice(0)) release();
    return new Promise((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }

  private record(entry: Omit<LoggedRequest, 'seq' | 'time'>): LoggedRequest {
    const logged: LoggedRequest = { seq: ++this.seq, time: new Date().toISOString(), ...entry };
    this.log.push(logged);
    if (this.options.logFile) appendFileSync(this.options.logFile, `${JSON.stringify(logged)}\n`);
    return logged;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    const raw = method === 'POST' || method === 'PUT' ? await readBody(req) : Buffer.alloc(0);
    const { value: body, problem } = parseBody(raw);
    const json = (status: number, value: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };

    // The scripted model's own control surface, for tests and demos.
    if (url.pathname === '/__scripted/requests') {
      if (method === 'DELETE') this.clearRequests();
      json(200, this.log);
      return;
    }
    const gate = /^\/__scripted\/gates\/([^/]+)$/.exec(url.pathname);
    if (gate?.[1] !== undefined && method === 'POST') {
      this.openGate(decodeURIComponent(gate[1]));
      json(200, { ok: true });
      return;
    }
    if (url.pathname === '/__scripted/scenario' && method === 'POST') {
      try {
        this.setScenario(parseScenario(body));
        json(200, { ok: true, name: this.scenario.name });
      } catch (err) {
        json(400, { error: { message: (err as Error).message } });
      }
      return;
    }

    const target = route(method, url.pathname);
    const headers = pickHeaders(req);
    const path = loggedPath(url);
    if (!target) {
      this.record({ method, path, api: undefined, headers, body });
      this.probe(method, url, req, res, body);
      return;
    }
    if (problem !== undefined) {
      // Answered as the real API would, rather than planned as an empty conversation, so a test
      // that sends a broken body sees the client's own handling of a 400.
      const rejected = renderError(target.api, 400, problem);
      this.record({ method, path, api: target.api, headers, body, rejected: { status: rejected.status, message: problem } });
      await send(res, rejected);
      return;
    }
    const view = readConversation(target.api, body, {
      stream: target.api === 'gemini' ? target.stream === true : undefined,
      model: target.model,
    });
    const decided = plan(this.scenario, view, this.options.cwd);
    const id = `${Date.now().toString(36)}${(this.seq + 1).toString(36)}`;
    const rendered: Rendered =
      target.api === 'anthropic'
        ? renderAnthropic(decided.reply, view, id)
        : target.api === 'openai-responses'
          ? renderOpenAiResponses(decided.reply, view, id)
          : target.api === 'openai-chat'
            ? renderOpenAiChat(decided.reply, view, id, isIncludeUsage(body))
            : renderGemini(decided.reply, view, id);
    const logged = this.record({
      method,
      path,
      api: target.api,
      headers,
      body,
      plan: { role: decided.role, rule: decided.rule, step: decided.step, reply: decided.reply.kind, status: rendered.status, prompt: view.prompt.slice(0, 2_000), promptChars: view.prompt.length, promptEnd: view.prompt.slice(-200), stepsDone: view.stepsDone, tools: view.tools },
    });
    if (decided.reply.timing.gate !== undefined) await this.passGate(decided.reply.timing.gate);
    if (decided.reply.timing.delayMs > 0) await sleep(decided.reply.timing.delayMs);
    const sent = await send(res, rendered);
    this.options.onReplySent?.({ request: logged, ...sent });
  }

  /** Answers the side calls CLIs make: reachability, model lists, token counts. */
  private probe(method: string, url: URL, req: http.IncomingMessage, res: http.ServerResponse, body: unknown): void {
    const json = (status: number, value: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(method === 'HEAD' ? undefined : JSON.stringify(value));
    };
    const p = url.pathname;
    if (p === '/' || p === '/v1' || p === '/v1/') return json(200, { ok: true, name: 'switchboard scripted model' });
    if (/^(\/v1)?\/messages\/count_tokens$/.test(p)) return json(200, { input_tokens: Math.ceil(JSON.stringify(body ?? '').length / 4) });
    if (/:countTokens$/.test(p)) return json(200, { totalTokens: Math.ceil(JSON.stringify(body ?? '').length / 4) });
    if (isGeminiModelList(url, req)) {
      return json(200, { models: [{ name: 'models/gemini-2.5-flash', displayName: 'Scripted Gemini', supportedGenerationMethods: ['generateContent', 'streamGenerateContent'] }] });
    }
    if (/^(\/v1)?\/models$/.test(p)) {
      if (req.headers['anthropic-version'] !== undefined) {
        return json(200, { data: [{ id: 'claude-scripted', type: 'model', display_name: 'Scripted Claude', created_at: '2026-01-01T00:00:00Z' }], has_more: false, first_id: 'claude-scripted', last_id: 'claude-scripted' });
      }
      return json(200, { object: 'list', data: [{ id: 'scripted-model', object: 'model', created: 0, owned_by: 'switchboard' }] });
    }
    json(404, { error: { message: `the scripted model does not serve ${method} ${p}` } });
  }
}

/**
 * Gemini lists models at /v1beta/models (or /v1alpha), which no other API uses; at /v1/models only
 * a Gemini key, sent as a header or as the ?key= query the CLI adds, says Gemini is asking.
 */
function isGeminiModelList(url: URL, req: http.IncomingMessage): boolean {
  if (/^\/v1(beta|alpha)\/models$/.test(url.pathname)) return true;
  return url.pathname === '/v1/models' && (req.headers['x-goog-api-key'] !== undefined || url.searchParams.has('key'));
}

function isIncludeUsage(body: unknown): boolean {
  const options = (body as { stream_options?: { include_usage?: unknown } } | undefined)?.stream_options;
  return options?.include_usage === true;
}
