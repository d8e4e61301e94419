/**
 * What `switchboard doctor` asks of an agent CLI, and what the scripted model answers: three tasks
 * whose prompts name their rule, so each reply is known in advance and the request log shows
 * whether the model received the prompt (whole, for the long one).
 */
import type { Scenario } from '../model-server/index.js';

/** The steps of a live check, in order. */
export const DOCTOR_STEPS = ['start', 'prompt', 'long_prompt', 'approval', 'idle'] as const;
export type DoctorStep = (typeof DOCTOR_STEPS)[number];

/** Default size of the long prompt: past the 1 KB where Codex and Gemini start to treat typing as a paste. */
export const LONG_PROMPT_BYTES = 20 * 1024;

export const SHORT_PROMPT = 'doctor check one: say hello';
export const SHORT_REPLY = 'Doctor reply one: hello.';
export const LONG_REPLY = 'Doctor reply two: the long prompt arrived.';
export const APPROVAL_PROMPT = 'doctor check three: write the check file';
/** The file the approval's command writes in the workdir, and what it writes. */
export const APPROVAL_FILE = 'doctor_check.txt';
const APPROVAL_CONTENT = 'doctor-approval-ok';
/** `echo` with a redirect reads the same in POSIX shells, cmd and PowerShell. */
export const APPROVAL_COMMAND = `echo ${APPROVAL_CONTENT} > ${APPROVAL_FILE}`;
export const APPROVAL_REPLY = `Doctor reply three: wrote ${APPROVAL_FILE}.`;

const LONG_HEAD = 'doctor check two: a long prompt follows on one line; reply once you have read it all.';
const LONG_TAIL = 'doctor end of the long prompt.';

/**
 * One line of about `bytes` bytes (ASCII): numbered words, so a prompt cut anywhere, or with a
 * piece missing, is not equal to the one sent.
 */
export function longPrompt(bytes: number = LONG_PROMPT_BYTES): string {
  const words: string[] = [LONG_HEAD];
  let length = LONG_HEAD.length + LONG_TAIL.length + 1;
  for (let i = 1; length < bytes; i++) {
    const word = `w${String(i).padStart(5, '0')}`;
    words.push(word);
    length += word.length + 1;
  }
  words.push(LONG_TAIL);
  return words.join(' ');
}

/** The scripted model's answers to the doctor's prompts. */
export const DOCTOR_SCENARIO: Scenario = {
  name: 'doctor',
  title: 'Doctor check',
  rules: [
    { match: 'doctor check one', steps: [{ text: SHORT_REPLY }] },
    { match: 'doctor check two', steps: [{ text: LONG_REPLY }] },
    {
      match: 'doctor check three',
      steps: [
        // escalate: Codex asks for approval only for a command that leaves its sandbox.
        { tool: 'shell', command: APPROVAL_COMMAND, description: `Write ${APPROVAL_FILE}`, escalate: true },
        { text: APPROVAL_REPLY },
      ],
    },
    { steps: [{ text: 'Doctor: this prompt was not expected.' }] },
  ],
};

/** Text compared without its whitespace: CLIs wrap lines and indent replies. */
export function squeeze(text: string): string {
  return text.replace(/\s+/g, '');
}
