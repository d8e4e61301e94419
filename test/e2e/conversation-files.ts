/**
 * Where a CLI keeps a conversation it can resume: its own files under its HOME (Claude Code's
 * transcript, Codex's rollout, each named by the conversation's id). Both write the prompt there
 * moments after the model request goes out (Claude Code 2.1.332: up to tens of ms after it said
 * its id), and a process killed before that leaves no conversation to resume: a test that kills
 * one mid-turn to resume it waits for this first.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** Every file under `dir`, at any depth (none when it is not there). */
export function filesUnder(dir: string): string[] {
  try {
    return readdirSync(dir).flatMap((name) => {
      const file = path.join(dir, name);
      return statSync(file).isDirectory() ? filesUnder(file) : [file];
    });
  } catch {
    return [];
  }
}

/**
 * True once `tool` has saved `prompt` in conversation `id`'s file under `home`: Claude's and Codex's
 * JSONL named by the id; for the others (Gemini CLI's chat JSON, OpenCode's own store), any file
 * under the home but a log that holds the prompt.
 */
export function conversationSaved(tool: string, home: string, id: string, prompt: string): boolean {
  const named = tool === 'claude' || tool === 'codex';
  return filesUnder(home).some((f) => (named ? path.basename(f).includes(id) && f.endsWith('.jsonl') : !/log/i.test(path.basename(f))) && readFileSync(f).includes(prompt));
}
