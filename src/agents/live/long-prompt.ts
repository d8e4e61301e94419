/**
 * Long prompts for CLIs that cannot take one typed or pasted (see `input.long_prompt` in the
 * schema): a folder per pane, inside the agent's private temporary folder, handed to the CLI at
 * launch, where a prompt is written as a file the CLI is pointed at. The folder goes with the pane.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Pane } from '../../pane/index.js';
import type { ProfileData } from '../profiles/schema.js';

type LongPrompt = NonNullable<ProfileData['input']['long_prompt']>;

const folders = new WeakMap<Pane, { dir: string; spec: LongPrompt; written: number }>();

/** A folder in `parent` for a pane about to start, and the launch arguments that give it to the CLI; none when the profile needs none. */
export function prepareLongPromptFolder(data: ProfileData, parent: string): { dir: string; args: string[] } | undefined {
  const spec = data.input.long_prompt;
  if (!spec) return undefined;
  const dir = mkdtempSync(path.join(parent, 'prompts-'));
  return { dir, args: spec.launch_args.map((a) => a.replaceAll('{dir}', dir)) };
}

/** Ties the folder to the pane: prompts are written there, and it is removed when the pane ends. */
export function attachLongPromptFolder(pane: Pane, data: ProfileData, dir: string): void {
  const spec = data.input.long_prompt;
  if (!spec) return;
  folders.set(pane, { dir, spec, written: 0 });
  pane.onExit(() => releaseLongPromptFolder(dir));
}

/** Removes a folder made for a pane that did not start. */
function releaseLongPromptFolder(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * What to send for `text`: the text itself, or, for a prompt past the profile's bound on a pane
 * with a folder, a reference to the file it was written to (the previous one removed).
 */
export function longPromptReference(pane: Pane, text: string): string {
  const folder = folders.get(pane);
  if (!folder || text.length <= folder.spec.above_chars) return text;
  if (folder.written > 0) rmSync(path.join(folder.dir, `prompt-${folder.written}.md`), { force: true });
  folder.written += 1;
  const file = path.join(folder.dir, `prompt-${folder.written}.md`);
  writeFileSync(file, folder.spec.max_line_chars ? foldLines(text, folder.spec.max_line_chars) : text, { mode: 0o600 });
  return folder.spec.template.replaceAll('{path}', file);
}

/**
 * Lines longer than `max` folded at the last space before it (a run with no space that long is
 * left whole: no whitespace to trade, and the CLI says it cut the line).
 */
export function foldLines(text: string, max: number): string {
  return text
    .split('\n')
    .map((line) => {
      const out: string[] = [];
      let rest = line;
      while (rest.length > max) {
        const cut = rest.lastIndexOf(' ', max);
        if (cut <= 0) break;
        out.push(rest.slice(0, cut));
        rest = rest.slice(cut + 1);
      }
      out.push(rest);
      return out.join('\n');
    })
    .join('\n');
}
