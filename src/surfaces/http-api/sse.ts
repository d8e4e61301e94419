/**
 * Server-sent events for the HTTP API: each event with its `id` (the run's sequence number, so a
 * client that reconnects with `Last-Event-ID` resumes with no gap and no duplicate), `event` (its
 * type) and `data` (its JSON). A comment every few seconds keeps proxies from closing a quiet
 * stream. A reader too slow to take what is written is cut off instead of being buffered without
 * bound (the unread bound of every HTTP answer, surfaces/http/answer.ts: the connection destroyed,
 * counted and logged): it reconnects with Last-Event-ID and loses nothing, since the ledger has
 * every event.
 */
import type { ServerResponse } from 'node:http';
import { withinUnreadBound } from '../http/answer.js';
const HEARTBEAT_MS = 15_000;

export interface SseStream {
  send(event: { id?: number | string; event?: string; data: string }): void;
  close(): void;
  readonly closed: boolean;
  onClose(listener: () => void): void;
}

export function openSse(res: ServerResponse, headers: Record<string, string> = {}): SseStream {
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', Connection: 'keep-alive', 'X-Accel-Buffering': 'no', 'X-Content-Type-Options': 'nosniff', ...headers });
  res.flushHeaders();
  let closed = false;
  const listeners: (() => void)[] = [];
  const close = (): void => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    res.end();
    for (const l of listeners.splice(0)) l();
  };
  const heartbeat = setInterval(() => {
    if (!closed) res.write(': keep-alive\n\n');
  }, HEARTBEAT_MS);
  heartbeat.unref();
  res.once('close', close);
  return {
    get closed() {
      return closed;
    },
    send(e) {
      if (closed) return;
      let frame = '';
      if (e.id !== undefined) frame += `id: ${e.id}\n`;
      if (e.event !== undefined) frame += `event: ${e.event}\n`;
      for (const line of e.data.split('\n')) frame += `data: ${line}\n`;
      res.write(`${frame}\n`);
      if (!withinUnreadBound(res)) close();
    },
    close,
    onClose(listener) {
      if (closed) listener();
      else listeners.push(listener);
    },
  };
}
