/**
 * Output with no structure (Aider's --message mode, any shell program): each non-empty line, its
 * ANSI sequences dropped, is an assistant message. Nothing can fail to parse.
 */
import { ansiToSpans } from './ansi-spans.js';
import { EntryFactory, type NormalizedEntry, type Normalizer } from './entry.js';

export class PlainTextNormalizer implements Normalizer {
  readonly format = 'plain-text';
  private readonly entries: EntryFactory;

  constructor(prefix = 'plain', now?: () => number) {
    this.entries = new EntryFactory(prefix, now);
  }

  get unparsed(): number {
    return 0;
  }

  line(text: string): NormalizedEntry[] {
    const plain = ansiToSpans(text)
      .map((s) => s.text)
      .join('')
      .trimEnd();
    return plain.trim() === '' ? [] : [this.entries.make('assistant_message', plain)];
  }
}
