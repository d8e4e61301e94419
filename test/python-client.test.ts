/**
 * The Python client's own unittest suite (clients/python/tests), run as its users run it: the
 * standard library's unittest, against a real daemon the suite starts with the built CLI. The
 * seed's lifecycle and every backend method are in it.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLI, cleanEnv } from './support/cli.js';

const pkg = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'clients', 'python');

describe('the Python client (clients/python)', () => {
  it('passes its unittest suite against a real daemon', async () => {
    const env = { ...cleanEnv(), PYTHONDONTWRITEBYTECODE: '1', SWITCHBOARD_CLI: CLI, NODE: process.execPath };
    const out = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile('python3', ['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.', '-v'], { cwd: pkg, env, timeout: 120_000 }, (err, _stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stderr });
      });
    });
    expect(out.code, out.stderr).toBe(0);
    // unittest reports on stderr: every test ran, none skipped.
    expect(out.stderr).toMatch(/^Ran \d+ tests? in /m);
    expect(out.stderr).toMatch(/^OK$/m);
    expect(out.stderr).toContain('test_seed_lifecycle');
    expect(out.stderr).toContain('test_every_other_backend_method');
  }, 150_000);
});
