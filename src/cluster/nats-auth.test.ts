import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createAccount, createUser } from '@nats-io/nkeys';
import type { Logger } from '../core/logger.js';
import { natsAuthenticator } from './nats-auth.js';

/** A logger that keeps what it was told. */
function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const logger: Logger & { lines: string[] } = {
    lines,
    debug: (m, f) => lines.push(`${m} ${JSON.stringify(f ?? {})}`),
    info: (m, f) => lines.push(`${m} ${JSON.stringify(f ?? {})}`),
    warn: (m, f) => lines.push(`${m} ${JSON.stringify(f ?? {})}`),
    error: (m, f) => lines.push(`${m} ${JSON.stringify(f ?? {})}`),
    child: () => logger,
  };
  return logger;
}

describe('NATS credentials from files', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sb-nats-auth-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, text: string, mode = 0o600): string => {
    const file = path.join(dir, name);
    writeFileSync(file, text, { mode });
    chmodSync(file, mode);
    return file;
  };
  const seedText = (): string => new TextDecoder().decode(createUser().getSeed());

  it('reads a user seed into an authenticator that signs the nonce', () => {
    const file = write('node.nk', `${seedText()}\n`);
    const authenticator = natsAuthenticator({ kind: 'nkey', file }, recordingLogger());
    const auth = authenticator?.('nonce') as { nkey?: string; sig?: string } | undefined;
    expect(auth?.nkey).toMatch(/^U/);
    expect(auth?.sig).toBeTruthy();
  });

  it('refuses what is not a user seed, without showing what the file holds', () => {
    const account = new TextDecoder().decode(createAccount().getSeed());
    for (const text of ['not a seed', account, `${seedText().slice(0, -3)}AAA`]) {
      const file = write('bad.nk', text);
      try {
        natsAuthenticator({ kind: 'nkey', file }, recordingLogger());
        expect.unreachable();
      } catch (err) {
        expect(err).toMatchObject({ code: 'INVALID_PARAMS', message: expect.stringContaining('does not hold an NKey user seed') });
        expect((err as Error).message).not.toContain(text);
      }
    }
  });

  it('refuses a missing file and one others can write; uses one others can read, with a warning', () => {
    expect(() => natsAuthenticator({ kind: 'nkey', file: path.join(dir, 'none.nk') }, recordingLogger())).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS', message: expect.stringContaining('does not exist') }));
    const writable = write('w.nk', seedText(), 0o622);
    expect(() => natsAuthenticator({ kind: 'nkey', file: writable }, recordingLogger())).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS', message: expect.stringContaining('can be written by other users') }));
    const seed = seedText();
    const readable = write('r.nk', seed, 0o644);
    const logger = recordingLogger();
    expect(natsAuthenticator({ kind: 'nkey', file: readable }, logger)).toBeTypeOf('function');
    expect(logger.lines.join('\n')).toContain('can be read by other users');
    expect(logger.lines.join('\n')).not.toContain(seed);
  });

  it('checks that a creds file is one', () => {
    const bad = write('user.creds', 'hello');
    expect(() => natsAuthenticator({ kind: 'creds', file: bad }, recordingLogger())).toThrow(expect.objectContaining({ message: expect.stringContaining('is not a NATS credentials file') }));
    const good = write('good.creds', `-----BEGIN NATS USER JWT-----\nx\n------END NATS USER JWT------\n-----BEGIN USER NKEY SEED-----\n${seedText()}\n------END USER NKEY SEED------\n`);
    expect(natsAuthenticator({ kind: 'creds', file: good }, recordingLogger())).toBeTypeOf('function');
  });

  it('has no authenticator without credentials', () => {
    expect(natsAuthenticator({ kind: 'none' }, recordingLogger())).toBeUndefined();
  });
});
