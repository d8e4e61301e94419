/**
 * Values sealed at rest with AES-256-GCM: a JSON envelope that names its format, the key it was
 * sealed with (a fingerprint, never the key) and its purpose, which is bound into the tag as
 * additional data, so a file sealed as one thing cannot be passed off as another. Opening with
 * the wrong key, or a file changed on disk, is KEY_MISMATCH; nothing is ever decrypted halfway.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { SwitchboardError } from './errors.js';

/** AES-256: a key is 32 bytes. */
export const SEALED_KEY_BYTES = 32;
/** GCM's recommended nonce length; a fresh random one per seal. */
const NONCE_BYTES = 12;
/** GCM's full tag: a shorter one would be easier to forge, so nothing else is accepted. */
const TAG_BYTES = 16;
const FORMAT = 'switchboard-sealed';
const ALGORITHM = 'aes-256-gcm';

/** A sealed value as it is stored: every field but `data` is readable without the key. */
interface SealedEnvelope {
  format: typeof FORMAT;
  version: 1;
  alg: typeof ALGORITHM;
  /** Which key sealed it: the first 16 hex digits of the key's SHA-256. */
  key: string;
  /** What it is (a preset store, a run record): bound into the tag. */
  purpose: string;
  nonce: string;
  tag: string;
  data: string;
}

/** A new random key. */
export function newSealingKey(): Buffer {
  return randomBytes(SEALED_KEY_BYTES);
}

/** Names a key without giving it away (what an envelope records, and what an error may show). */
export function keyFingerprint(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/** Seals `value` (anything JSON can hold) as the envelope's JSON text. */
export function seal(key: Buffer, purpose: string, value: unknown): string {
  checkKey(key);
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(purpose, 'utf8'));
  const data = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  const envelope: SealedEnvelope = {
    format: FORMAT,
    version: 1,
    alg: ALGORITHM,
    key: keyFingerprint(key),
    purpose,
    nonce: nonce.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    data: data.toString('base64'),
  };
  return `${JSON.stringify(envelope)}\n`;
}

/**
 * Opens an envelope sealed for `purpose`. INVALID_PARAMS when `text` is not an envelope (say what
 * it is instead); KEY_MISMATCH when another key sealed it, or when it was changed after sealing.
 */
export function unseal(key: Buffer, purpose: string, text: string, where = 'the sealed file'): unknown {
  checkKey(key);
  const envelope = parseEnvelope(text, where);
  if (envelope.purpose !== purpose) {
    throw new SwitchboardError('INVALID_PARAMS', `${where} holds ${envelope.purpose}, not ${purpose}`, { purpose: envelope.purpose });
  }
  const fingerprint = keyFingerprint(key);
  if (envelope.key !== fingerprint) {
    throw new SwitchboardError('KEY_MISMATCH', `${where} was sealed with key ${envelope.key}, and the key here is ${fingerprint}: bring back the key it was sealed with (nothing was changed)`, {
      sealed_with: envelope.key,
      key: fingerprint,
    });
  }
  const nonce = Buffer.from(envelope.nonce, 'base64');
  const tag = Buffer.from(envelope.tag, 'base64');
  try {
    if (nonce.length !== NONCE_BYTES || tag.length !== TAG_BYTES) throw new Error('a nonce or tag of the wrong length');
    const decipher = createDecipheriv(ALGORITHM, key, nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(purpose, 'utf8'));
    decipher.setAuthTag(tag);
    const plain = Buffer.concat([decipher.update(Buffer.from(envelope.data, 'base64')), decipher.final()]);
    return JSON.parse(plain.toString('utf8')) as unknown;
  } catch {
    // GCM's tag failed: the right key's fingerprint, but the bytes were changed after sealing.
    throw new SwitchboardError('KEY_MISMATCH', `${where} does not open with its key: it was changed after it was sealed (nothing was changed here)`, { key: fingerprint });
  }
}

function parseEnvelope(text: string, where: string): SealedEnvelope {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new SwitchboardError('INVALID_PARAMS', `${where} is not a sealed file (not JSON)`);
  }
  const v = value as Partial<SealedEnvelope> | null;
  const strings = ['key', 'purpose', 'nonce', 'tag', 'data'] as const;
  if (typeof v !== 'object' || v === null || v.format !== FORMAT || !strings.every((field) => typeof v[field] === 'string')) {
    throw new SwitchboardError('INVALID_PARAMS', `${where} is not a sealed file`);
  }
  if (v.version !== 1 || v.alg !== ALGORITHM) {
    throw new SwitchboardError('INVALID_PARAMS', `${where} is sealed in a format this Switchboard does not know (version ${String(v.version)}, ${String(v.alg)}): update Switchboard`);
  }
  return v as SealedEnvelope;
}

function checkKey(key: Buffer): void {
  if (key.length !== SEALED_KEY_BYTES) throw new SwitchboardError('INVALID_PARAMS', `a sealing key is ${SEALED_KEY_BYTES} bytes, not ${key.length}`);
}
