/**
 * Where the run ledger is kept, as `--ledger` says it: `sqlite` (the default: `ledger.db` in the
 * Switchboard home) or a PostgreSQL connection URL (`postgres://user:password@host:port/db`). The
 * URL's password never leaves this module in the clear: everything that names the ledger in a log,
 * a status or an error uses `shown`, the URL with its password replaced.
 */
import { SwitchboardError } from '../core/errors.js';

export type LedgerLocation = { kind: 'sqlite' } | { kind: 'postgres'; url: string; shown: string };

const POSTGRES_SCHEMES = new Set(['postgres:', 'postgresql:']);

/** `--ledger`'s value read: INVALID_PARAMS (with `ledger` as the value shown without its password) for anything else. */
export function parseLedgerLocation(value: string | undefined): LedgerLocation {
  if (value === undefined || value === 'sqlite') return { kind: 'sqlite' };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // Not a URL at all: it may still hold a password (a typo in the scheme), so none of it is repeated.
    throw new SwitchboardError('INVALID_PARAMS', '--ledger takes `sqlite` or a PostgreSQL URL (postgres://user:password@host:port/database); the value given is neither', { ledger: 'unparsable' });
  }
  const shown = withoutPassword(url);
  if (!POSTGRES_SCHEMES.has(url.protocol)) {
    throw new SwitchboardError('INVALID_PARAMS', `--ledger takes \`sqlite\` or a postgres:// URL, not a ${url.protocol.replace(/:$/, '')}: URL (${shown})`, { ledger: shown });
  }
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  // A URL with no host must name a socket folder (?host=/run/postgresql), as libpq's do.
  if (url.hostname === '' && !url.searchParams.has('host')) {
    throw new SwitchboardError('INVALID_PARAMS', `the ledger's PostgreSQL URL names no host (${shown})`, { ledger: shown });
  }
  if (database === '' || database.includes('/')) {
    throw new SwitchboardError('INVALID_PARAMS', `the ledger's PostgreSQL URL names no database, or not one (${shown}): put it after the host, as in postgres://host:5432/switchboard`, { ledger: shown });
  }
  return { kind: 'postgres', url: value, shown };
}

/** The URL with its password (and any `password` parameter) replaced by `***`. */
function withoutPassword(url: URL): string {
  const copy = new URL(url.href);
  if (copy.password !== '') copy.password = '***';
  if (copy.searchParams.has('password')) copy.searchParams.set('password', '***');
  return copy.href;
}
