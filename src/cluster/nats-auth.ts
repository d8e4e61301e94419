/**
 * Credentials for NATS, read from the files the options name, at connect time and nowhere else.
 * A secret file follows the trust rule every private file of Switchboard follows
 * (platform/files.ts: this user's, not writable by others, no symbolic link); one others can read
 * is used with a warning. Errors name the file and what is wrong with it, never what it holds.
 */
import { credsAuthenticator, nkeyAuthenticator, type Authenticator } from '@nats-io/transport-node';
import { fromSeed } from '@nats-io/nkeys';
import { SwitchboardError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { readPrivateFile } from '../platform/index.js';
import type { NatsAuth } from './nats-options.js';

/** A seed is 58 characters and a creds file a few KiB; anything much larger is not one. */
const MAX_SECRET_FILE_BYTES = 64 * 1024;
/** A user seed's prefix: S(eed) for a U(ser). The server accepts only user keys from clients. */
const USER_SEED_PREFIX = 'SU';
const CREDS_BLOCKS = [/-----BEGIN NATS USER JWT-----/, /-----BEGIN USER NKEY SEED-----/];

function readSecret(file: string, what: string, logger: Logger): string {
  const found = readPrivateFile(file, MAX_SECRET_FILE_BYTES);
  if (found.kind === 'missing') throw new SwitchboardError('INVALID_PARAMS', `the NATS ${what} file ${file} does not exist`, { file });
  if (found.kind === 'refused') throw new SwitchboardError('INVALID_PARAMS', `the NATS ${what} file is not trusted: ${found.problem}`, { file });
  if (found.exposed !== undefined) logger.warn('a NATS secret can be read by other users; chmod 600 it', { file, problem: found.exposed });
  return found.text;
}

/** The authenticator for `auth`, or undefined for none; INVALID_PARAMS for a file that is not what it should be. */
export function natsAuthenticator(auth: NatsAuth, logger: Logger): Authenticator | undefined {
  switch (auth.kind) {
    case 'none':
      return undefined;
    case 'nkey': {
      const seed = readSecret(auth.file, 'NKey seed', logger).trim();
      const bytes = new TextEncoder().encode(seed);
      let valid = seed.startsWith(USER_SEED_PREFIX);
      try {
        if (valid) fromSeed(bytes);
      } catch {
        valid = false;
      }
      if (!valid) throw new SwitchboardError('INVALID_PARAMS', `${auth.file} does not hold an NKey user seed (one line starting with ${USER_SEED_PREFIX}, as 'nsc' or 'nk -gen user' writes it)`, { file: auth.file });
      return nkeyAuthenticator(bytes);
    }
    case 'creds': {
      const text = readSecret(auth.file, 'credentials', logger);
      if (!CREDS_BLOCKS.every((block) => block.test(text))) throw new SwitchboardError('INVALID_PARAMS', `${auth.file} is not a NATS credentials file (a user JWT and its NKey seed, as 'nsc generate creds' writes it)`, { file: auth.file });
      return credsAuthenticator(new TextEncoder().encode(text));
    }
  }
}
