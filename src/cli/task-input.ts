/**
 * Where a command's long text comes from: the words given, standard input (`-`) or a file. Apart
 * from the commands that run agents, so a command that only talks to the daemon (`prompt`, `run`)
 * loads none of them.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SwitchboardError } from '../core/errors.js';
import { UsageError } from './args.js';
import type { CliContext } from './context.js';

/** A file's text, or standard input's for `-`. A missing file is INVALID_PARAMS, not a crash. */
export async function readInput(ctx: CliContext, file: string): Promise<string> {
  if (file !== '-') {
    try {
      return readFileSync(path.resolve(file), 'utf8');
    } catch (err) {
      throw new SwitchboardError('INVALID_PARAMS', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { file });
    }
  }
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The task: the words after AGENT, standard input for `-`, or the file of --task-file. Standard
 * input and files have no size limit of ours; one argument is limited by the OS (128 KiB on Linux).
 */
export async function taskArgument(ctx: CliContext, words: readonly string[], file: string | undefined): Promise<string> {
  if (file !== undefined && words.length > 0) throw new UsageError('give the task as words, as - (standard input) or with --task-file, not two of them');
  const task = file !== undefined ? await readInput(ctx, file) : words.length === 1 && words[0] === '-' ? await readInput(ctx, '-') : words.join(' ');
  if (task.trim() === '') throw new UsageError(file !== undefined || words[0] === '-' ? 'the task is empty' : 'missing the task');
  return task;
}
