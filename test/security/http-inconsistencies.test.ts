/**
 * Item 11 of issue 21, its HTTP parts: invalid UTF-8 in a JSON body was accepted over HTTP (a run's
 * prompt with the bytes 0xff 0xfe became `\ufffd\ufffd`, 202) where JSON-RPC refuses it, and a
 * 2 MiB body to `/mcp` got a connection reset instead of 413. Every HTTP body is now decoded
 * strictly (400, PARSE_ERROR, as JSON-RPC), and every body limit answers 413 with LIMIT_EXCEEDED in
 * a JSON error, which the client reads whole before the connection closes.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeBackend } from '../../src/runs/backends/fake-backend.js';
import { errorOf, RawClient, startTestDaemon } from '../support/daemon.js';

type Started = Awaited<ReturnType<typeof startTestDaemon>>;
let started: Started | undefined;
const need = (): Started => {
  if (!started) throw new Error('not started');
  return started;
};

beforeAll(async () => {
  started = await startTestDaemon({ dashboard: { port: 0 }, bridge: { backends: [new FakeBackend()] } });
});

afterAll(async () => {
  await started?.stop();
});

const port = (): number => need().daemon.dashboard?.port ?? 0;

interface RawAnswer {
  status: number;
  headers: string;
  body: string;
  /** How the connection ended: 'end' (the daemon closed it cleanly, or kept it open until we did), or the socket error. */
  ended: string;
}

/** One POST over a raw socket (so a reset is seen as one), with `body` as bytes; resolves when the daemon ends the connection or answers whole. */
function rawPost(path: string, body: Buffer, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = net.connect(port(), '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (ended: string): void => {
      if (settled) return;
      settled = true;
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const cut = text.indexOf('\r\n\r\n');
      const head = cut < 0 ? text : text.slice(0, cut);
      let rest = cut < 0 ? '' : text.slice(cut + 4);
      if (/transfer-encoding: chunked/i.test(head)) rest = unchunk(rest);
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0), headers: head, body: Buffer.from(rest, 'latin1').toString('utf8'), ended });
    };
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      // An answer with its whole length read is complete, whether or not the daemon closes.
      const text = Buffer.concat(chunks).toString('latin1');
      const cut = text.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(text.slice(0, Math.max(0, cut)))?.[1];
      if (cut >= 0 && length !== undefined && Buffer.byteLength(text.slice(cut + 4), 'latin1') >= Number(length)) finish('end');
      if (cut >= 0 && text.endsWith('\r\n0\r\n\r\n')) finish('end');
    });
    socket.on('end', () => finish('end'));
    socket.on('error', (err: NodeJS.ErrnoException) => finish(err.code ?? err.message));
    const head = [`POST ${path} HTTP/1.1`, `Host: 127.0.0.1:${port()}`, `Authorization: Bearer ${need().daemon.token}`, 'Content-Type: application/json', 'Accept: application/json, text/event-stream', `Content-Length: ${body.length}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n');
    socket.write(head);
    socket.write(body);
  });
}

function unchunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const line = rest.indexOf('\r\n');
    if (line < 0) return out;
    const size = parseInt(rest.slice(0, line), 16);
    if (!(size > 0)) return out;
    out += rest.slice(line + 2, line + 2 + size);
    rest = rest.slice(line + 2 + size + 2);
  }
}

/** A JSON body with the bytes 0xff 0xfe inside a string. */
function withInvalidUtf8(before: string, after: string): Buffer {
  return Buffer.concat([Buffer.from(before, 'utf8'), Buffer.from([0xff, 0xfe]), Buffer.from(after, 'utf8')]);
}

describe('HTTP bodies are decoded strictly, as JSON-RPC decodes them', () => {
  it('refuses invalid UTF-8 in a run request with 400 and the code JSON-RPC uses', async () => {
    const rpc = await RawClient.connect(need().daemon, 'tcp');
    try {
      rpc.send(Buffer.concat([withInvalidUtf8(`{"jsonrpc":"2.0","id":1,"method":"run_submit","params":{"token":"${need().daemon.token}","backend":"fake","prompt":"`, `"}}`), Buffer.from('\n')]));
      const rpcCode = errorOf(await rpc.next()).data.code;
      expect(rpcCode).toBe('PARSE_ERROR');

      const answer = await rawPost('/api/v2/agent/run', withInvalidUtf8('{"backend":"fake","prompt":"', '"}'));
      expect(answer.status).toBe(400);
      const body = JSON.parse(answer.body) as { error: { code: string; message: string } };
      expect(body.error.code).toBe(rpcCode);
      expect(body.error.message).toMatch(/UTF-8/);
    } finally {
      rpc.close();
    }
  });

  it('refuses invalid UTF-8 in an MCP message with 400 and the same code', async () => {
    const answer = await rawPost('/mcp', withInvalidUtf8('{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"', '"}}'));
    expect(answer.status).toBe(400);
    const body = JSON.parse(answer.body) as { error: { code: number; message: string; data: { code: string } } };
    expect(body.error.data.code).toBe('PARSE_ERROR');
  });
});

describe('every body limit answers 413 with a JSON error, then closes cleanly', () => {
  const big = (): Buffer => Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(2 * 1024 * 1024) } }));

  it('answers a 2 MiB body to /mcp with 413 and LIMIT_EXCEEDED, not a reset', async () => {
    const answer = await rawPost('/mcp', big());
    expect(answer.ended).toBe('end');
    expect(answer.status).toBe(413);
    const body = JSON.parse(answer.body) as { error: { message: string; data: { code: string } } };
    expect(body.error.data.code).toBe('LIMIT_EXCEEDED');
  });

  it('answers a 2 MiB body to the HTTP API with 413 and LIMIT_EXCEEDED, and closes the connection', async () => {
    const answer = await rawPost('/api/v2/agent/run', Buffer.from(JSON.stringify({ backend: 'fake', prompt: 'x'.repeat(2 * 1024 * 1024) })));
    expect(answer.ended).toBe('end');
    expect(answer.status).toBe(413);
    expect(answer.headers).toMatch(/connection: close/i);
    expect((JSON.parse(answer.body) as { error: { code: string } }).error.code).toBe('LIMIT_EXCEEDED');
  });
});
