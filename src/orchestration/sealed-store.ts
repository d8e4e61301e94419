/**
 * Files sealed at rest (seed 003 §9: team presets and run metadata encrypted), and the key that
 * opens them. The key sits in a 0600 file beside the Switchboard home (`~/.switchboard.key` for
 * `~/.switchboard`), outside it, so a copy of the home alone opens nothing, and hidden from
 * sandboxed agents. A key is made only when none exists and nothing sealed is there to lose: a
 * missing or wrong key gives KEY_MISMATCH and leaves every file as it was.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { SwitchboardError } from '../core/errors.js';
import { newSealingKey, seal, SEALED_KEY_BYTES, unseal } from '../core/sealed-box.js';
import { createPrivateFileExclusive, ensurePrivateDir, readPrivateFile, writePrivateFileAtomic } from '../platform/index.js';

/** A sealed file is a few presets or a run's metadata; past this it is not ours. */
const MAX_SEALED_FILE_BYTES = 16 * 1024 * 1024;
/** The key file holds the key as hex and a line break. */
const MAX_KEY_FILE_BYTES = 1_024;
/** What a sealed file's name ends with (seed 003: `team-presets.v1.enc`). */
const SEALED_SUFFIX = '.enc';

/** Where the sealing key comes from (a key file here; an OS keychain where one is reachable). */
export interface KeySource {
  /** Where the key is, for messages and the README. */
  readonly where: string;
  /** The key, or undefined when there is none yet. Throws KEY_MISMATCH when it cannot be trusted or read. */
  read(): Buffer | undefined;
  /** Makes and keeps a new key, unless one appeared meanwhile (then that one): only called when `read` found none. */
  create(): Buffer;
}

/** The key file of a Switchboard home: beside it, not in it. */
export function keyFileOf(home: string): string {
  return `${path.resolve(home)}.key`;
}

/** A key kept in a 0600 file, as hex. */
export class KeyFile implements KeySource {
  constructor(readonly where: string) {}

  read(): Buffer | undefined {
    const found = readPrivateFile(this.where, MAX_KEY_FILE_BYTES);
    if (found.kind === 'missing') return undefined;
    if (found.kind === 'refused') throw new SwitchboardError('KEY_MISMATCH', `the sealing key is not trusted: ${found.problem}`, { key_file: this.where });
    const hex = found.text.trim();
    if (!new RegExp(`^[0-9a-f]{${SEALED_KEY_BYTES * 2}}$`).test(hex)) {
      throw new SwitchboardError('KEY_MISMATCH', `${this.where} is not a sealing key (${SEALED_KEY_BYTES * 2} hex digits)`, { key_file: this.where });
    }
    return Buffer.from(hex, 'hex');
  }

  /**
   * Makes the key file in the home's parent folder (the user's home for ~/.switchboard), which is
   * the user's and is left as it is: never made, never chmodded. The file is linked into place
   * whole, so a key that another process made first is never overwritten: that one is used.
   */
  create(): Buffer {
    const key = newSealingKey();
    try {
      createPrivateFileExclusive(this.where, `${key.toString('hex')}\n`);
    } catch (err) {
      throw new SwitchboardError('CONFLICT', `cannot make the sealing key ${this.where}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { key_file: this.where });
    }
    // Read back through the trust rule (a folder others can write is refused), whoever made it.
    const kept = this.read();
    if (!kept) throw new SwitchboardError('CONFLICT', `the sealing key ${this.where} went away as it was made`, { key_file: this.where });
    return kept;
  }
}

/** Seals values kept somewhere else than a file of the folder (the ledger's team runs), under the same key. */
export interface Sealer {
  seal(purpose: string, value: unknown): string;
  /** KEY_MISMATCH when the key is missing, another, or the text was changed. */
  unseal(purpose: string, text: string, where: string): unknown;
}

/**
 * A folder of sealed JSON files, all under one key; and a sealer, under the same key, of values
 * kept elsewhere. Whoever keeps values elsewhere writes a sealed file here saying so (the ledger's
 * team runs: `runs.v1.enc`), so that no new key is made while they need the old one.
 */
export class SealedFolder implements Sealer {
  constructor(
    readonly dir: string,
    private readonly keys: KeySource,
  ) {}

  /** The value sealed in `name` for `purpose`, or undefined when there is no such file. */
  read(name: string, purpose: string): unknown {
    const file = this.fileOf(name);
    const found = readPrivateFile(file, MAX_SEALED_FILE_BYTES);
    if (found.kind === 'missing') return undefined;
    if (found.kind === 'refused') throw new SwitchboardError('KEY_MISMATCH', `${file} is not trusted: ${found.problem}`, { file });
    const key = this.keys.read();
    if (!key) {
      throw new SwitchboardError('KEY_MISMATCH', `${file} is sealed, and its key (${this.keys.where}) is missing: bring the key back (nothing was changed)`, { file, key_file: this.keys.where });
    }
    return unseal(key, purpose, found.text, file);
  }

  /** Seals `value` into `name` (written whole or not at all, 0600). */
  write(name: string, purpose: string, value: unknown): void {
    ensurePrivateDir(this.dir);
    writePrivateFileAtomic(this.fileOf(name), seal(this.writingKey(), purpose, value));
  }

  seal(purpose: string, value: unknown): string {
    return seal(this.writingKey(), purpose, value);
  }

  unseal(purpose: string, text: string, where: string): unknown {
    const key = this.keys.read();
    if (!key) throw new SwitchboardError('KEY_MISMATCH', `${where} is sealed, and its key (${this.keys.where}) is missing: bring the key back (nothing was changed)`, { key_file: this.keys.where });
    return unseal(key, purpose, text, where);
  }

  /**
   * Makes the key now if there is none and nothing sealed needs one: before any jailed agent pane
   * starts, so the jail covers it (a key made later would be in view of panes started earlier).
   */
  prepareKey(): void {
    this.writingKey();
  }

  private fileOf(name: string): string {
    return path.join(this.dir, `${name}${SEALED_SUFFIX}`);
  }

  /**
   * The key to seal with: the one there is, or a new one, but never a new one while a sealed file
   * is in the folder: those would be lost for good under a new key (and so would what is sealed
   * elsewhere, which a file here says). Read each time, so a key a person puts back is used at once.
   */
  private writingKey(): Buffer {
    const existing = this.keys.read();
    if (existing) return existing;
    const sealed = existsSync(this.dir) ? readdirSync(this.dir).filter((f) => f.endsWith(SEALED_SUFFIX)) : [];
    if (sealed.length > 0) {
      throw new SwitchboardError('KEY_MISMATCH', `the key (${this.keys.where}) is missing and ${sealed.length} sealed file(s) in ${this.dir} need it: bring the key back; a new key would lose them`, {
        key_file: this.keys.where,
        files: sealed,
      });
    }
    return this.keys.create();
  }
}
