import { describe, expect, it } from 'vitest';
import { keyFingerprint, newSealingKey, seal, unseal } from './sealed-box.js';

describe('a sealed box', () => {
  const key = newSealingKey();

  it('opens with its key and purpose, and holds nothing in clear', () => {
    const value = { goal: 'add a --verbose flag', roles: ['planner', 'executor'] };
    const text = seal(key, 'presets', value);
    expect(text).not.toContain('verbose');
    expect(text).not.toContain('planner');
    expect(JSON.parse(text)).toMatchObject({ format: 'switchboard-sealed', version: 1, alg: 'aes-256-gcm', key: keyFingerprint(key), purpose: 'presets' });
    expect(unseal(key, 'presets', text)).toEqual(value);
  });

  it('seals the same value differently each time (a fresh nonce)', () => {
    expect(seal(key, 'p', 'x')).not.toBe(seal(key, 'p', 'x'));
  });

  it('answers KEY_MISMATCH for another key, naming both fingerprints', () => {
    const other = newSealingKey();
    const text = seal(key, 'presets', { a: 1 });
    expect(() => unseal(other, 'presets', text)).toThrow(expect.objectContaining({ code: 'KEY_MISMATCH', details: { sealed_with: keyFingerprint(key), key: keyFingerprint(other) } }));
  });

  it('answers KEY_MISMATCH for bytes changed after sealing, and for a purpose swapped in', () => {
    const envelope = JSON.parse(seal(key, 'presets', { a: 1 })) as { data: string; purpose: string };
    const data = Buffer.from(envelope.data, 'base64');
    data[0] = (data[0] ?? 0) ^ 1;
    expect(() => unseal(key, 'presets', JSON.stringify({ ...envelope, data: data.toString('base64') }))).toThrow(expect.objectContaining({ code: 'KEY_MISMATCH' }));
    // A tag cut short (GCM would check only what is there) is refused, not half-checked.
    const sealed = JSON.parse(seal(key, 'presets', { a: 1 })) as { tag: string };
    const short = Buffer.from(sealed.tag, 'base64').subarray(0, 4).toString('base64');
    expect(() => unseal(key, 'presets', JSON.stringify({ ...sealed, tag: short }))).toThrow(expect.objectContaining({ code: 'KEY_MISMATCH' }));
    // The purpose is bound into the tag: relabelling a run record as presets does not open.
    const run = JSON.parse(seal(key, 'runs', { a: 1 })) as object;
    expect(() => unseal(key, 'presets', JSON.stringify({ ...run, purpose: 'presets' }))).toThrow(expect.objectContaining({ code: 'KEY_MISMATCH' }));
  });

  it('refuses what is not an envelope, or one sealed for something else, with INVALID_PARAMS', () => {
    expect(() => unseal(key, 'presets', 'not json', 'presets.enc')).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS', message: 'presets.enc is not a sealed file (not JSON)' }));
    expect(() => unseal(key, 'presets', '{"name":"x"}')).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS' }));
    expect(() => unseal(key, 'presets', seal(key, 'runs', 1))).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS', message: 'the sealed file holds runs, not presets' }));
    expect(() => seal(Buffer.alloc(16), 'p', 1)).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS' }));
  });
});
