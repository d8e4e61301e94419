/**
 * A small client for the bridge's HTTP API in tests and the bench: JSON calls with the token, and
 * an SSE reader that parses frames (id, event, data) as they arrive and can be cut off at any point.
 */
export interface SseFrame {
  id: string | undefined;
  event: string | undefined;
  data: string;
}

export interface ApiClient {
  base: string;
  token: string;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: unknown; headers: Headers }>;
  /** Reads an SSE stream until it ends, `stopAfter` frames were read (then it is cut), or the signal aborts. */
  stream(path: string, options?: { lastEventId?: string; stopAfter?: number; onFrame?: (frame: SseFrame) => void }): Promise<{ status: number; frames: SseFrame[]; headers: Headers }>;
}

export function apiClient(base: string, token: string): ApiClient {
  return {
    base,
    token,
    async call(method, path, body, headers = {}) {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...headers },
        ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: kept as text
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async stream(path, options = {}) {
      const controller = new AbortController();
      const res = await fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream', ...(options.lastEventId !== undefined ? { 'Last-Event-ID': options.lastEventId } : {}) }, signal: controller.signal });
      const frames: SseFrame[] = [];
      if (!res.body || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
        await res.text();
        return { status: res.status, frames, headers: res.headers };
      }
      const decoder = new TextDecoder();
      let buffer = '';
      try {
        for await (const chunk of res.body) {
          buffer += decoder.decode(chunk as Uint8Array, { stream: true });
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const raw = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const frame: SseFrame = { id: undefined, event: undefined, data: '' };
            const data: string[] = [];
            for (const line of raw.split('\n')) {
              if (line.startsWith(':')) continue;
              const colon = line.indexOf(':');
              const field = colon < 0 ? line : line.slice(0, colon);
              const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
              if (field === 'id') frame.id = value;
              else if (field === 'event') frame.event = value;
              else if (field === 'data') data.push(value);
            }
            if (data.length === 0 && frame.id === undefined) continue;
            frame.data = data.join('\n');
            frames.push(frame);
            options.onFrame?.(frame);
            if (options.stopAfter !== undefined && frames.length >= options.stopAfter) {
              controller.abort();
              return { status: res.status, frames, headers: res.headers };
            }
          }
        }
      } catch (err) {
        if (!controller.signal.aborted) throw err;
      }
      return { status: res.status, frames, headers: res.headers };
    },
  };
}
