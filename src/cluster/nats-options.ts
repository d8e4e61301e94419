/**
 * How to reach NATS, from the command line's words to checked options, secure by default: a
 * server that is not on this machine needs TLS and credentials, or it is refused before anything
 * connects. Secrets never come from argv (a process list shows it to every user): a URL with a
 * user or password is refused, and credentials are named by file (`--nats-creds`, `--nats-nkey`),
 * read only when connecting (nats-auth.ts). Nothing here reads a file, so it is checked in tests
 * without any.
 */
import { isIP } from 'node:net';
import path from 'node:path';
import { SwitchboardError } from '../core/errors.js';

/** The port NATS listens on when a URL names none. */
const DEFAULT_NATS_PORT = 4222;

/** What the command line says: the URL(s) of `--controller`/`--cluster` and the `--nats-*` files. */
export interface NatsFlags {
  /** `nats://host:port` or `tls://host:port`, or several, comma separated (one cluster). */
  url: string;
  /** `--nats-creds FILE`: a user JWT and its seed (a `.creds` file). */
  credsFile?: string | undefined;
  /** `--nats-nkey FILE`: an NKey user seed (`SU…`). */
  nkeyFile?: string | undefined;
  /** `--nats-ca FILE`: the CA that signed the server's certificate. */
  caFile?: string | undefined;
  /** `--nats-cert FILE` and `--nats-key FILE`: this side's certificate, for mutual TLS. */
  certFile?: string | undefined;
  keyFile?: string | undefined;
}

/** Who we are to the server, as files to read when connecting. */
export type NatsAuth = { readonly kind: 'none' } | { readonly kind: 'creds'; readonly file: string } | { readonly kind: 'nkey'; readonly file: string };

/** TLS settings; each file is optional (no CA: the system's; no certificate: none shown). */
export interface NatsTls {
  readonly caFile?: string;
  readonly certFile?: string;
  readonly keyFile?: string;
}

/** Checked options: the servers as `host:port`, who we are, and TLS (undefined: none). */
export interface NatsOptions {
  readonly servers: readonly string[];
  readonly auth: NatsAuth;
  readonly tls: NatsTls | undefined;
}

const invalid = (message: string, details?: Record<string, unknown>): SwitchboardError => new SwitchboardError('INVALID_PARAMS', message, details);

/** True for a host name that can only be this machine: localhost, 127.0.0.0/8, ::1. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare.toLowerCase() === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || bare === '0:0:0:0:0:0:0:1';
  return false;
}

interface ParsedServer {
  hostPort: string;
  host: string;
  tls: boolean;
}

/** One URL of the list; `position` names it in errors without repeating it (it may hold a secret). */
function parseServer(text: string, position: number): ParsedServer {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid(`NATS server ${position} is not a URL: write nats://host:port or tls://host:port`);
  }
  if (url.username !== '' || url.password !== '') {
    throw invalid(`NATS server ${position} has a user or password in its URL, which any user of this machine can read in the process list: give credentials by file (--nats-creds FILE or --nats-nkey FILE)`);
  }
  if (url.protocol !== 'nats:' && url.protocol !== 'tls:') throw invalid(`NATS server ${position} (${url.protocol}//…) is not a nats:// or tls:// URL`);
  if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '') throw invalid(`NATS server ${position} has a path, query or fragment: write only nats://host:port`);
  if (url.hostname === '') throw invalid(`NATS server ${position} names no host`);
  const port = url.port === '' ? DEFAULT_NATS_PORT : Number(url.port);
  return { hostPort: `${url.hostname}:${port}`, host: url.hostname, tls: url.protocol === 'tls:' };
}

/** A file named on the command line, absolute; empty is refused. */
function fileFlag(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === '') throw invalid(`${flag} needs a file`);
  return path.resolve(value);
}

/**
 * Checks the flags and returns the options to connect with; INVALID_PARAMS with what to do when
 * they are wrong. Rules: URLs are nats:// or tls:// with no credentials in them; at most one of
 * --nats-creds and --nats-nkey; --nats-cert and --nats-key together; TLS is on with a tls:// URL,
 * a CA or a certificate; a server that is not loopback needs TLS and credentials.
 */
export function parseNatsOptions(flags: NatsFlags): NatsOptions {
  const texts = flags.url.split(',').map((s) => s.trim());
  if (texts.some((s) => s === '')) throw invalid('the NATS URL is empty, or has an empty entry in its comma-separated list');
  const servers = texts.map((text, i) => parseServer(text, i + 1));
  const credsFile = fileFlag('--nats-creds', flags.credsFile);
  const nkeyFile = fileFlag('--nats-nkey', flags.nkeyFile);
  const caFile = fileFlag('--nats-ca', flags.caFile);
  const certFile = fileFlag('--nats-cert', flags.certFile);
  const keyFile = fileFlag('--nats-key', flags.keyFile);
  if (credsFile !== undefined && nkeyFile !== undefined) throw invalid('give one of --nats-creds and --nats-nkey, not both');
  if ((certFile === undefined) !== (keyFile === undefined)) throw invalid('--nats-cert and --nats-key go together (a certificate and its private key, for mutual TLS)');
  const auth: NatsAuth = credsFile !== undefined ? { kind: 'creds', file: credsFile } : nkeyFile !== undefined ? { kind: 'nkey', file: nkeyFile } : { kind: 'none' };
  const tlsOn = servers.some((s) => s.tls) || caFile !== undefined || certFile !== undefined;
  const remote = servers.find((s) => !isLoopbackHost(s.host));
  if (remote !== undefined) {
    const missing = [...(tlsOn ? [] : ['TLS (a tls:// URL, or --nats-ca FILE)']), ...(auth.kind === 'none' ? ['credentials (--nats-creds FILE or --nats-nkey FILE)'] : [])];
    if (missing.length > 0) throw invalid(`NATS server ${remote.hostPort} is not on this machine, so the connection needs ${missing.join(' and ')}`, { server: remote.hostPort });
  }
  const tls: NatsTls | undefined = tlsOn ? { ...(caFile !== undefined && { caFile }), ...(certFile !== undefined && { certFile }), ...(keyFile !== undefined && { keyFile }) } : undefined;
  return { servers: servers.map((s) => s.hostPort), auth, tls };
}
