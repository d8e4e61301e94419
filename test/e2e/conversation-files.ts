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

/** True once `tool` has saved `prompt` in conversation `id`'s file under `home` (always, for a CLI that keeps no such file). */
export function conversationSaved(tool: string, home: string, id: string, prompt: string): boolean {
  if (tool !== 'claude' && tool !== 'codex') return true;
  return filesUnder(home).some((f) => path.basename(f).includes(id) && f.endsWith('.jsonl') && readFileSync(f, 'utf8').includes(prompt));
}
