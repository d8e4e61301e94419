import { describe, expect, it } from 'vitest';
import { isLoopbackHost, parseNatsOptions } from './nats-options.js';

const refused = (flags: Parameters<typeof parseNatsOptions>[0], message: RegExp): void => {
  expect(() => parseNatsOptions(flags)).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS', message: expect.stringMatching(message) }));
};

describe('NATS options', () => {
  it('takes a loopback server with nothing else, plain', () => {
    expect(parseNatsOptions({ url: 'nats://127.0.0.1:4222' })).toEqual({ servers: ['127.0.0.1:4222'], auth: { kind: 'none' }, tls: undefined });
    expect(parseNatsOptions({ url: 'nats://localhost' }).servers).toEqual(['localhost:4222']);
    expect(parseNatsOptions({ url: 'nats://[::1]:5000' }).servers).toEqual(['[::1]:5000']);
  });

  it('takes several servers, comma separated', () => {
    expect(parseNatsOptions({ url: 'nats://127.0.0.1:1, nats://127.0.0.2:2' }).servers).toEqual(['127.0.0.1:1', '127.0.0.2:2']);
  });

  it('refuses a server that is not on this machine without TLS, or without credentials, saying what is missing', () => {
    refused({ url: 'nats://10.0.0.5:4222' }, /10\.0\.0\.5:4222 is not on this machine, so the connection needs TLS .* and credentials/);
    refused({ url: 'nats://nats.example.com', nkeyFile: '/k/seed.nk' }, /needs TLS \(a tls:\/\/ URL, or --nats-ca FILE\)$/);
    refused({ url: 'tls://nats.example.com' }, /needs credentials \(--nats-creds FILE or --nats-nkey FILE\)$/);
    refused({ url: 'nats://127.0.0.1:1,nats://10.1.1.1:2', caFile: '/ca.pem' }, /10\.1\.1\.1:2 .* needs credentials/);
  });

  it('takes a remote server with TLS (a tls:// URL or a CA) and credentials', () => {
    expect(parseNatsOptions({ url: 'tls://nats.example.com:4443', credsFile: '/c/user.creds' })).toEqual({ servers: ['nats.example.com:4443'], auth: { kind: 'creds', file: '/c/user.creds' }, tls: {} });
    expect(parseNatsOptions({ url: 'nats://10.0.0.5', nkeyFile: '/k/seed.nk', caFile: '/ca.pem', certFile: '/me.pem', keyFile: '/me.key' })).toEqual({
      servers: ['10.0.0.5:4222'],
      auth: { kind: 'nkey', file: '/k/seed.nk' },
      tls: { caFile: '/ca.pem', certFile: '/me.pem', keyFile: '/me.key' },
    });
  });

  it('refuses credentials in the URL without repeating them', () => {
    try {
      parseNatsOptions({ url: 'nats://alice:s3cret@127.0.0.1:4222' });
      expect.unreachable();
    } catch (err) {
      expect(err).toMatchObject({ code: 'INVALID_PARAMS', message: expect.stringContaining('--nats-creds FILE or --nats-nkey FILE') });
      expect(JSON.stringify(err) + (err as Error).message).not.toMatch(/s3cret|alice/);
    }
  });

  it('refuses what is not a nats:// or tls:// URL, and flags that do not go together', () => {
    refused({ url: 'http://127.0.0.1:4222' }, /not a nats:\/\/ or tls:\/\/ URL/);
    refused({ url: '127.0.0.1:4222' }, /not a nats:\/\/ or tls:\/\/ URL|is not a URL/);
    refused({ url: 'nats://127.0.0.1:4222/x' }, /path, query or fragment/);
    refused({ url: 'nats://127.0.0.1,' }, /empty entry/);
    refused({ url: 'nats://127.0.0.1', credsFile: '/a', nkeyFile: '/b' }, /one of --nats-creds and --nats-nkey/);
    refused({ url: 'nats://127.0.0.1', certFile: '/me.pem' }, /--nats-cert and --nats-key go together/);
    refused({ url: 'nats://127.0.0.1', nkeyFile: ' ' }, /--nats-nkey needs a file/);
  });

  it('makes files absolute', () => {
    expect(parseNatsOptions({ url: 'nats://127.0.0.1', nkeyFile: 'seed.nk' }).auth).toEqual({ kind: 'nkey', file: `${process.cwd()}/seed.nk` });
  });

  it('knows loopback hosts', () => {
    for (const host of ['127.0.0.1', '127.9.9.9', 'localhost', 'LOCALHOST', '[::1]', '::1']) expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['10.0.0.1', '128.0.0.1', '0.0.0.0', 'example.com', '[::2]', 'localhost.example.com']) expect(isLoopbackHost(host)).toBe(false);
  });
});
