import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { SwitchboardError } from '../../core/errors.js';
import { envNameMatches } from '../../platform/index.js';
import { normalizeModelUrl, prepareSandboxHome, SANDBOX_SCRUBBED_ENV } from './sandbox.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'sb-sandbox-test-'));
  made.push(dir);
  return dir;
}

function invalidParams(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(SwitchboardError);
    expect((err as SwitchboardError).code).toBe('INVALID_PARAMS');
    return (err as Error).message;
  }
  throw new Error('expected INVALID_PARAMS');
}

describe('prepareSandboxHome', () => {
  it('creates a private directory for a new absolute path', () => {
    const home = path.join(scratch(), 'nested', 'home');
    expect(prepareSandboxHome(home)).toBe(home);
    expect(statSync(home).isDirectory()).toBe(true);
    if (process.platform !== 'win32') expect(statSync(home).mode & 0o777).toBe(0o700);
  });

  it('refuses a relative path', () => {
    expect(invalidParams(() => prepareSandboxHome('some/dir'))).toMatch(/absolute/);
  });

  it("refuses the user's own home and any folder above it", () => {
    expect(invalidParams(() => prepareSandboxHome(homedir()))).toMatch(/your own home/);
    expect(invalidParams(() => prepareSandboxHome(path.dirname(homedir())))).toMatch(/your own home/);
    expect(invalidParams(() => prepareSandboxHome(path.join(homedir(), '.')))).toMatch(/your own home/);
  });

  it('refuses a path that is a file', () => {
    const file = path.join(scratch(), 'a-file');
    writeFileSync(file, 'x');
    expect(invalidParams(() => prepareSandboxHome(file))).toMatch(/agent_home/);
  });
});

describe('normalizeModelUrl', () => {
  it('keeps scheme, host, port and path, without a trailing slash', () => {
    expect(normalizeModelUrl('http://127.0.0.1:9000/')).toBe('http://127.0.0.1:9000');
    expect(normalizeModelUrl('https://models.local/api/v1//')).toBe('https://models.local/api/v1');
  });

  it('refuses what is not an http(s) URL or carries a query, fragment or credentials', () => {
    expect(invalidParams(() => normalizeModelUrl('not a url'))).toMatch(/not a URL/);
    expect(invalidParams(() => normalizeModelUrl('file:///etc/passwd'))).toMatch(/http or https/);
    expect(invalidParams(() => normalizeModelUrl('http://h/?key=1'))).toMatch(/query/);
    expect(invalidParams(() => normalizeModelUrl('http://h/#x'))).toMatch(/fragment/);
    expect(invalidParams(() => normalizeModelUrl('http://user:pw@h/'))).toMatch(/credentials/);
  });
});

describe('the scrubbed environment', () => {
  const scrubbed = (name: string): boolean => SANDBOX_SCRUBBED_ENV.some((p) => envNameMatches(name, p));

  it("covers every CLI's keys, base URLs and cloud switches", () => {
    for (const name of ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'CLAUDE_CODE_USE_BEDROCK', 'OPENAI_API_KEY', 'CODEX_HOME', 'GEMINI_API_KEY', 'GOOGLE_CLOUD_PROJECT', 'VERTEXAI_LOCATION', 'OPENCODE_CONFIG', 'AWS_PROFILE', 'GITHUB_TOKEN', 'XDG_CONFIG_HOME']) {
      expect(scrubbed(name), name).toBe(true);
    }
  });

  it('leaves what a program needs to run', () => {
    for (const name of ['PATH', 'LANG', 'TERM', 'TMPDIR', 'SHELL', 'XDG_RUNTIME_DIR', 'SWITCHBOARD_RPC_TOKEN']) expect(scrubbed(name), name).toBe(false);
  });
});

describe('envNameMatches', () => {
  it('matches exact names and prefixes ending in *', () => {
    expect(envNameMatches('GH_TOKEN', 'GH_TOKEN')).toBe(true);
    expect(envNameMatches('GH_TOKENS', 'GH_TOKEN')).toBe(false);
    expect(envNameMatches('OPENCODE', 'OPENCODE*')).toBe(true);
    expect(envNameMatches('OPENCODE_X', 'OPENCODE*')).toBe(true);
    expect(envNameMatches('MY_OPENCODE', 'OPENCODE*')).toBe(false);
  });
});
