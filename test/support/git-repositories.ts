/**
 * Git repositories for tests, made with the real git in a scratch folder of the test file's own,
 * removed after its tests.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

/** A name and address for commits a test makes itself (the machine's git may have none configured). */
const TEST_IDENTITY = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' };

/** What a test repository's first commit holds: a README, a file in a folder, and a .gitignore that ignores build/. */
const FIRST_COMMIT: Readonly<Record<string, string>> = { 'README.md': 'hello\n', 'src/old.txt': 'old\n', '.gitignore': 'build/\n' };

/** Runs the real git in `cwd` as the test's own user: its output. For setting a scene and reading it back, never for the code under test. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...TEST_IDENTITY } });
}

export interface TestRepositories {
  /** The scratch folder (removed after the file's tests). */
  scratch: string;
  /** A new repository `<scratch>/<name>` on `main`, with one commit of `files` (a README, src/old.txt and a .gitignore unless given): its folder. */
  repository: (name: string, files?: Readonly<Record<string, string>>) => string;
}

/** A scratch folder for a test file's repositories, named from `prefix`, removed after its tests. */
export function useTestRepositories(prefix: string): TestRepositories {
  const scratch = mkdtempSync(path.join(tmpdir(), prefix));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  return {
    scratch,
    repository: (name, files = FIRST_COMMIT) => {
      const repo = path.join(scratch, name);
      mkdirSync(repo, { recursive: true });
      git(repo, 'init', '--quiet', '-b', 'main');
      for (const [file, text] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
        writeFileSync(path.join(repo, file), text);
      }
      git(repo, 'add', '.');
      git(repo, 'commit', '--quiet', '-m', 'first');
      return repo;
    },
  };
}
