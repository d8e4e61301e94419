/**
 * The data that describes an agent CLI: how to find and start it, what its screens look like in
 * each state, how to get past its first-run dialogs, how to type into it, and where it keeps its
 * transcript. Built-in profiles and user-defined ones (from a config file) share this schema, so a
 * new CLI (Cursor agent, Amp, Goose, …) needs a config entry, not code.
 */
import { z } from 'zod';

/** A pattern tested against the rendered screen (all rows, or only the last `rows` non-empty ones). */
const screenPatternSchema = z.union([
  z.string().min(1),
  z.strictObject({
    pattern: z.string().min(1),
    /** i, m and s (patterns always run multi-line; `i` folds ASCII letters). */
    flags: z.string().regex(/^[ims]*$/, 'flags are i, m and s').optional(),
    /** Only the last N non-empty rows (where prompts and footers live). */
    rows: z.number().int().min(1).max(500).optional(),
    /**
     * Match the rows with their colours (SGR sequences, each written as ESC[0;…m), for CLIs that
     * mark a state only by colour.
     */
    ansi: z.boolean().optional(),
  }),
]);

// What a chosen answer means, whatever keys the CLI wants for it; and what kind of thing a tool
// approval asks to do: the shared vocabulary (src/contract/approval.ts).
import { ANSWER_MEANINGS, TOOL_KINDS, type AnswerMeaning, type ToolKind } from '../../contract/approval.js';
export { TOOL_KINDS, type AnswerMeaning, type ToolKind };

/** A pattern tested against one piece of text (a row of the screen, an option's label). */
const textPatternSchema = z.union([
  z.string().min(1),
  z.strictObject({
    pattern: z.string().min(1),
    flags: z.string().regex(/^[ims]*$/, 'flags are i, m and s').optional(),
  }),
]);

/**
 * One kind of approval prompt a CLI shows. The pattern matches the prompt's first rows; its named
 * groups `tool`, `command` and `path` (each optional) say what is asked, and the row where the match
 * begins is where the prompt begins. Kind `other` is a catch-all: used only when no other kind matches.
 */
const approvalKindSchema = z.strictObject({
  kind: z.enum(TOOL_KINDS),
  pattern: screenPatternSchema,
  /** The tool's name when the prompt does not show it (Claude Code's "Create file" is its Write tool). */
  tool_name: z.string().min(1).optional(),
  /**
   * What the CLI draws before each row of a multi-row command or path (Claude Code's " │ " gutter,
   * an indent), removed from every row the groups captured.
   */
  gutter: textPatternSchema.optional(),
  /**
   * How the CLI breaks a command longer than its box: `lines` (default), each captured row is a line
   * of the command; `word`, one line is word-wrapped at the box's edge (Gemini CLI, OpenCode), so a
   * break where the next word could not fit stands for a space. A break there cannot be told from a
   * line break in the command by the box alone: the read is sure only when a witness shows the
   * same command whole (wrapped at the screen's edge, character by character).
   */
  wrap: z.enum(['lines', 'word']).default('lines'),
});

/** How the answers of an approval prompt are laid out on screen. */
const approvalOptionsSchema = z.strictObject({
  /** `list`: one option per row (a numbered menu); `inline`: all options on one row. */
  layout: z.enum(['list', 'inline']),
  /**
   * list: an option's row, with groups `label` (required), `number` and `selected` (matches only on
   * the highlighted option). inline: the row holding the options, with group `options` (their text,
   * split by `separator`) and `selected` (the text of the highlighted or default option).
   */
  pattern: textPatternSchema,
  /** list: a row that continues the option above it (a wrapped label), with group `label`. */
  continuation: textPatternSchema.optional(),
  /** inline: what separates the options in the `options` group (default: two or more spaces). */
  separator: textPatternSchema.optional(),
  /**
   * A key shown in an option's label, in group `key`: "(y)", "(esc)", "(Y)es". With `strip`, the
   * matched text is cut from the label (a trailing hint, not a mnemonic inside a word).
   */
  shortcut: z.strictObject({ pattern: textPatternSchema, strip: z.boolean().default(true) }).optional(),
  /**
   * For CLIs that mark the highlighted option only by colour: a pattern on an option row with its
   * colours (SGR sequences, each written as ESC[0;…m), with group `label` on inline rows.
   */
  highlight: textPatternSchema.optional(),
});

/**
 * How to read a tool approval prompt (issue 4: `waiting_approval` carries the parsed request): what
 * it asks, the answers it offers, and the keys that choose each from the screen as it is.
 */
const approvalRequestSchema = z.strictObject({
  kinds: z.array(approvalKindSchema).default([]),
  options: approvalOptionsSchema,
  /**
   * How an option is chosen, in order of preference: the key shown beside it (`shortcut`), its
   * number (`number`), or arrows from the highlighted option and Enter (`arrows`).
   */
  select: z.array(z.enum(['shortcut', 'number', 'arrows'])).min(1),
  /** Keys pressed after a shortcut or a number (a CLI that reads a line: "y" then Enter). */
  submit: z.array(z.string()).default([]),
  /**
   * What options mean, where the built-in reading of labels ("Yes", "Allow always", "No, …") is
   * wrong, tried first: a pattern on the label and its meaning (null: never chosen by a policy).
   */
  meanings: z.array(z.strictObject({ pattern: textPatternSchema, meaning: z.enum(ANSWER_MEANINGS).nullable() })).default([]),
  /**
   * Rows a prompt may hold that say nothing about what it asks (a tip, the model's reason, a hint
   * on how to auto-accept), tested on a row's text without its box sides. Every row between the
   * kind's match and the options must be blank, a rule, the question (an `approval` pattern) or one
   * of these: any other row means the parse cannot be sure, and a policy then asks instead of allowing.
   */
  decorations: z.array(textPatternSchema).default([]),
  /**
   * Where the CLI shows the same call a second time, above the prompt (Claude Code's
   * "● Bash(rm -r dir)"), with group `command` or `path` (a trailing … marks a cut). When it is on
   * screen and disagrees with what the prompt was read to say, the parse is not sure.
   */
  witnesses: z.array(screenPatternSchema).default([]),
});

const dialogSchema = z.strictObject({
  /** A stable name for the dialog: trust_folder, use_api_key, model_migration, … */
  id: z.string().min(1),
  /** The dialog is on screen when every one of these matches. */
  when: z.array(screenPatternSchema).min(1),
  /** The first-run policy decision this dialog asks for. */
  decides: z.enum(['trust_folder', 'use_env_api_key', 'keep_current_model', 'try_new_feature', 'keep_retrying', 'continue']),
  /**
   * What to do when the policy says yes, and when it says no: keys to press (named keys, as
   * send_keys takes them), or `{ choose: pattern }`, the option whose label matches, reached by
   * moving the highlight one step at a time, each step checked on screen, then Enter. Choosing by
   * label is what holds under load: keys sent blind ("Down, Enter") can land before the menu reads
   * them, and pick the default.
   */
  accept: z.union([z.array(z.string()).min(1), z.strictObject({ choose: textPatternSchema })]),
  decline: z.union([z.array(z.string()).min(1), z.strictObject({ choose: textPatternSchema })]),
  /**
   * The dialog's menu, for `choose`: a row per option, with groups `label` and `selected` (only on
   * the highlighted one). Without it, the menu is read by its shape (option rows, one highlighted).
   */
  options: z.strictObject({ pattern: textPatternSchema }).optional(),
});

const screensSchema = z.strictObject({
  /** The CLI versions these patterns hold for, as a range: ">=2.1.300 <2.2". */
  versions: z.string().min(1),
  /**
   * The versions whose real screens these patterns were checked against (recorded fixtures): the
   * ones Switchboard knows exactly. Others in the range, or outside every range, are read with the
   * nearest set and the structural rules, and say so.
   */
  recorded: z.array(z.string().regex(/^\d+\.\d+\.\d+$/, 'a version x.y.z')).default([]),
  /** Ready for the next instruction. */
  idle: z.array(screenPatternSchema).min(1),
  /** Working on a turn (thinking or running a tool). */
  busy: z.array(screenPatternSchema).default([]),
  /** Running a tool right now (a subset of busy: tells `executing` from `thinking`). */
  executing: z.array(screenPatternSchema).default([]),
  /** Asking the user something that is not a tool approval (a question tool, a choice to make). */
  question: z.array(screenPatternSchema).default([]),
  /** The first line of an agent's reply (its marker, such as "● "): where the final message is read. */
  reply: z.array(screenPatternSchema).default([]),
  /**
   * The line right after a reply (OpenCode's "▣ Build · model", Aider's "Tokens:" line), for CLIs
   * that mark a reply's end rather than its start: the final message is the block above it.
   */
  reply_end: z.array(screenPatternSchema).default([]),
  /**
   * How the CLI says a turn stopped because the user refused or interrupted (Codex's "■ Conversation
   * interrupted"): an end of turn waiting for the next instruction, not a model error.
   */
  interrupted: z.array(screenPatternSchema).default([]),
  /** Status lines a CLI draws among replies (Codex's "Worked for 2s"): never part of a message. */
  chrome: z.array(screenPatternSchema).default([]),
  /**
   * For a CLI that draws no sign of work while its reply streams (Codex 0.171: no spinner once text
   * flows) but closes every finished turn with a row under its reply ("Worked for 3s"): a reply
   * (`reply`, or a `continued` row at the top once its first row scrolled away) below the latest
   * prompt given (`prompt`, or the top of the screen) with no `end` row, error or refusal notice
   * after it is a turn still open: busy, whatever the idle prompt below it says.
   */
  turn: z
    .strictObject({
      end: z.array(screenPatternSchema).min(1),
      /** A prompt the user gave, as the conversation shows it (not the input box below it). */
      prompt: z.array(screenPatternSchema).default([]),
      /** A row that continues a reply under its first row (its indent). */
      continued: z.array(screenPatternSchema).default([]),
    })
    .optional(),
  /**
   * How the CLI says it is retrying a failed request (OpenCode's "… [retrying in 4s attempt #2]"),
   * the attempt's number as "attempt #N" on the matched row or the next: from the second attempt on, the CLI keeps failing the same way, and the
   * agent's state is `error` with its message, not work going on.
   */
  retrying: z.array(screenPatternSchema).default([]),
  /** Asking to approve a tool call. */
  approval: z.array(screenPatternSchema).default([]),
  /** An error from the model API as the CLI shows it. */
  error: z.array(screenPatternSchema).default([]),
  /** First-run and other blocking dialogs. */
  dialogs: z.array(dialogSchema).default([]),
  /** How to read an approval prompt into the request and its answers. */
  approval_request: approvalRequestSchema.optional(),
});

export const profileSchema = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, 'a lower-case name of letters, digits, - and _'),
  display_name: z.string().optional(),
  /** How to find the program: these names on PATH (or in node_modules/.bin), unless $<env> names a path. */
  binary: z.strictObject({
    names: z.array(z.string().min(1)).min(1),
    env: z.string().optional(),
    /** The npm package the CLI is published as: an install of it says its version without being started. */
    npm_package: z.string().min(1).optional(),
  }),
  /** Arguments for the interactive (TUI) mode, before any the caller adds. */
  interactive_args: z.array(z.string()).default([]),
  /** Arguments for the headless mode; `{prompt}` is replaced by the prompt. */
  headless_args: z.array(z.string()).optional(),
  /** Arguments that make the program an ACP (Agent Client Protocol) agent on stdio. */
  acp_args: z.array(z.string()).optional(),
  /** Variables set for the program (on top of the daemon's environment). */
  env: z.record(z.string(), z.string()).default({}),
  /**
   * Variables (names, or prefixes ending in *) not passed on when the agent runs from an isolated
   * HOME, beyond the built-in list of vendors' keys, base URLs and config overrides.
   */
  sandbox_unset: z.array(z.string().min(1)).default([]),
  /**
   * Variables of the program's own that name its temporary folder, beyond TMPDIR, TMP and TEMP
   * (Claude Code keeps /tmp/claude-<uid> and its sockets in /tmp/cc-socks unless CLAUDE_CODE_TMPDIR
   * moves them): each is pointed at the agent's private temporary folder too.
   */
  temp_env: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name')).default([]),
  /**
   * Variables that settle folder trust before the program starts, by the first-run policy's
   * trust_folder answer, so it never asks: Gemini CLI draws a whole idle screen before its trust
   * dialog opens, and restarts itself after the answer, so a start that asks reads a first frame
   * as ready and types into a program about to ask and restart. Nothing is remembered: the next
   * start outside Switchboard asks as before. A dialog the variables did not prevent is still
   * answered by the policy.
   */
  trust_env: z.strictObject({ accept: z.record(z.string(), z.string()).default({}), decline: z.record(z.string(), z.string()).default({}) }).default({ accept: {}, decline: {} }),
  /** Arguments that make the program print its version and exit; null when it has none. */
  version_args: z.array(z.string()).nullable().default(['--version']),
  screens: z.array(screensSchema).min(1),
  /** Keys that answer an approval prompt, by meaning. */
  approval_keys: z.strictObject({
    allow_once: z.array(z.string()).min(1),
    allow_always: z.array(z.string()).optional(),
    deny: z.array(z.string()).min(1),
  }),
  input: z
    .strictObject({
      /** Send Enter as its own write once the typed text shows (Codex and Gemini treat text+Enter as a paste). */
      separate_enter: z.boolean().default(true),
      /** Longest wait for the typed text to show before pressing Enter anyway. */
      echo_timeout_ms: z.number().int().min(0).max(10_000).default(1_000),
      /** Pause between the text showing and Enter. */
      enter_delay_ms: z.number().int().min(0).max(5_000).default(50),
      /** Paste multi-line prompts (bracketed) instead of typing them. */
      paste_multiline: z.boolean().default(true),
      /**
       * How long in all to keep pressing Enter while the prompt still sits in the input box (a
       * swallowed Enter). A CLI may hold its first prompt until it has finished starting: OpenCode
       * 1.18 clears its home screen's box only once its own server has made a session, and drops
       * the Enters pressed meanwhile, which took longer than 15 s on a loaded machine.
       */
      submit_patience_ms: z.number().int().min(1_000).max(300_000).default(15_000),
      /**
       * Keys that erase one line of the input box with the cursor at its end, pressed once per
       * line to take back a prompt typed but not sent (a cancelled ask). Default: Ctrl+E, Ctrl+U,
       * Backspace, which do it in every built-in CLI (withdraw-prompt.ts); keys that act on an
       * empty box (Ctrl+C quits some CLIs) do not belong here.
       */
      clear_keys: z.array(z.string().min(1)).min(1).optional(),
      /**
       * For a CLI that chokes on a long prompt typed or pasted (Gemini CLI 0.61.0 takes a 200 KB
       * paste and never sends it): prompts longer than `above_chars` are written to a file in a
       * folder of Switchboard's, given to the CLI at launch by `launch_args` ({dir}), and the CLI
       * is sent `template` ({path}) instead, a reference it reads the whole prompt from.
       */
      long_prompt: z
        .strictObject({
          above_chars: z.number().int().min(1),
          template: z.string().min(1),
          launch_args: z.array(z.string()).default([]),
          /**
           * The longest line the CLI reads whole from such a file (Gemini CLI cuts longer ones):
           * longer lines are folded at spaces, so the words are the same and some spaces become
           * line breaks.
           */
          max_line_chars: z.number().int().min(80).optional(),
        })
        .optional(),
    })
    .default({ separate_enter: true, echo_timeout_ms: 1_000, enter_delay_ms: 50, paste_multiline: true, submit_patience_ms: 15_000 }),
  /** Where the CLI writes its transcript: a directory under HOME ({cwd_dashed}, {project} expand) and a file pattern. */
  transcript: z
    .strictObject({
      format: z.enum(['claude-jsonl', 'codex-rollout', 'gemini-chat', 'opencode-sqlite', 'aider-markdown', 'none']),
      dir: z.string(),
      pattern: z.string(),
    })
    .optional(),
  /**
   * A file in which the CLI reports its own state while it runs (Claude Code's
   * ~/.claude/sessions/<pid>.json): a JSON object whose `field` holds one of the listed values.
   * Turn completion then also needs the CLI to say it is idle, once the file has been written
   * during the turn (a file that never changes says nothing).
   */
  status_file: z
    .strictObject({
      /** Under the agent's HOME; {pid} is the CLI's process id. */
      path: z.string().min(1),
      field: z.string().min(1),
      idle: z.array(z.string().min(1)).min(1),
      busy: z.array(z.string().min(1)).default([]),
      waiting: z.array(z.string().min(1)).default([]),
    })
    .optional(),
  /** Files written into an isolated HOME before start (user profiles; templates with {cwd} and {model_url}). */
  home_files: z.record(z.string(), z.string()).default({}),
});

export type ScreenPattern = z.infer<typeof screenPatternSchema>;
export type Dialog = z.infer<typeof dialogSchema>;
export type Screens = z.infer<typeof screensSchema>;
export type ScreensInput = z.input<typeof screensSchema>;
export type ProfileData = z.infer<typeof profileSchema>;
export type ProfileInput = z.input<typeof profileSchema>;
export type ApprovalRequestSpec = z.infer<typeof approvalRequestSchema>;
