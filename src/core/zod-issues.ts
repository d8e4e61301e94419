/**
 * How every surface words input that failed its schema, written once: one problem per zod issue,
 * each with where it is (`rules[0].command: Invalid input`), unknown keys named by what a key is
 * where the input came from (a call's parameter, a file's key, a body's field).
 */
import type { z } from 'zod';

export type KeyNoun = 'parameter' | 'key' | 'field';

/** A path as one would write it in code: `rules[0].steps[1].cwd`. */
function issuePath(parts: readonly PropertyKey[]): string {
  let out = '';
  for (const p of parts) out += typeof p === 'number' ? `[${p}]` : `${out === '' ? '' : '.'}${String(p)}`;
  return out;
}

/** Every problem, each with where it is. */
export function issueProblems(error: z.ZodError, noun: KeyNoun = 'parameter'): string[] {
  return error.issues.map((issue) => {
    const at = issuePath(issue.path);
    const what = issue.code === 'unrecognized_keys' ? `unknown ${noun}${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${k}'`).join(', ')}` : issue.message;
    return at === '' ? what : `${at}: ${what}`;
  });
}

/** The problems as one line: `lines: Too big: expected number to be <=1000000; unknown parameter 'x'`. */
export function describeIssues(error: z.ZodError, noun: KeyNoun = 'parameter'): string {
  return issueProblems(error, noun).join('; ');
}
