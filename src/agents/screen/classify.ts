/**
 * From a screen classification (detect.ts) to an agent state, with its evidence. Shared by the live
 * state tracker, which adds timing (idle must hold still; errors must be new this turn), and by
 * `switchboard detect`, which classifies one saved capture.
 */
import { detectScreen, lowestMatchOf, type Detection, type Evidence, type ScreenRows } from './detect.js';
import type { Screens } from '../profiles/schema.js';
import { errorText } from './screen-text.js';

/** The states a single screen can show (starting and exited come from the process, not the screen). */
export type ScreenState = 'idle' | 'thinking' | 'executing' | 'waiting_approval' | 'waiting_input' | 'error';

export interface Classification {
  /** null when no pattern of the profile matches (a screen mid-redraw, or an unknown CLI version). */
  state: ScreenState | null;
  evidence: Evidence | null;
  /** The error line, for `error`. */
  error?: string;
  /** The dialog or question line, for `waiting_input`. */
  question?: string;
  detection: Detection;
}

/**
 * Classifies a screen. `isCurrentError` says whether an error line on an idle screen belongs to the
 * turn in progress; by default, an error counts when it is below the last reply on screen.
 */
/** The evidence rule of an idle screen whose latest turn was stopped by a refusal (see `interrupted`). */
export const INTERRUPTED_RULE = 'interrupted';

export function classifyScreen(screens: Screens, screen: ScreenRows, isCurrentError?: (error: Evidence) => boolean): Classification {
  const detection = detectScreen(screens, screen);
  const question = (): Classification | undefined => {
    const m = lowestMatchOf(screens.question, screen);
    return m ? { state: 'waiting_input', evidence: { rule: 'question', ...m }, question: m.line, detection } : undefined;
  };
  switch (detection.kind) {
    case 'dialog':
      return { state: 'waiting_input', evidence: detection.evidence ?? null, question: detection.evidence?.line, detection };
    case 'approval':
      return { state: 'waiting_approval', evidence: detection.evidence ?? null, detection };
    case 'busy': {
      const asked = question();
      if (asked) return asked;
      const failing = retryingAgain(screens, screen);
      if (failing) return { state: 'error', evidence: failing, error: errorText(screens, { lines: screen.lines, ansiLines: screen.ansiLines ?? [] }, failing.row, failing.line), detection };
      const executing = lowestMatchOf(screens.executing, screen);
      if (executing) return { state: 'executing', evidence: { rule: 'executing', ...executing }, detection };
      return { state: 'thinking', evidence: detection.evidence ?? null, detection };
    }
    case 'idle':
    case 'unknown': {
      const asked = question();
      if (asked) return asked;
      if (detection.kind === 'unknown') return { state: null, evidence: null, detection };
      const error = detection.error;
      const current = error && (isCurrentError ? isCurrentError(error) : belowLastReply(screens, screen, error));
      // A refusal's notice (Codex's "■ Conversation interrupted") is drawn like an error, but the
      // agent is back at its prompt waiting for what to do instead: idle, said so by its evidence.
      if (error && current && lowestMatchOf(screens.interrupted, { lines: [error.line] })) return { state: 'idle', evidence: { ...error, rule: INTERRUPTED_RULE }, detection };
      // The message around the row that showed it: OpenCode marks an error only by a red bar, and
      // the lowest barred row may hold nothing but the bar.
      if (error && current) return { state: 'error', evidence: error, error: errorText(screens, { lines: screen.lines, ansiLines: screen.ansiLines ?? [] }, error.row, error.line), detection };
      return { state: 'idle', evidence: detection.evidence ?? null, detection };
    }
  }
}

/** The evidence rule of an error read from a CLI retrying a failed request a second time or more. */
export const RETRYING_RULE = 'retrying';

/**
 * A retry notice from the second attempt on: the CLI keeps failing the same way, and backs off
 * (or not) for as long as it likes; the agent's state is that error, not work.
 */
function retryingAgain(screens: Screens, screen: ScreenRows): Evidence | undefined {
  if (screens.retrying.length === 0) return undefined;
  const m = lowestMatchOf(screens.retrying, screen);
  if (!m) return undefined;
  // The number may have wrapped onto the next row.
  const attempt = /attempt\s*#\s*(\d+)/.exec(`${m.line} ${(screen.lines[m.row + 1] ?? '').trim()}`);
  return attempt && Number(attempt[1]) >= 2 ? { rule: RETRYING_RULE, ...m } : undefined;
}

/** For a lone capture: an error nothing has been said after is the latest event on screen. */
function belowLastReply(screens: Screens, screen: ScreenRows, error: Evidence): boolean {
  const reply = lowestMatchOf(screens.reply, screen);
  return reply === undefined || reply.row <= error.row;
}
