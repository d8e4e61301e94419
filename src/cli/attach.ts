import { StringDecoder } from 'node:string_decoder';
import { SwitchboardError } from '../core/errors.js';
import { encodeKey } from '../pane/keys.js';
import type { ClientSubscription } from '../client/index.js';
import type { Notifications } from '../protocol/methods.js';
import { inputModeSequences } from '../protocol/terminal-modes.js';
import { parseCommandArgs, UsageError } from './args.js';
import type { CliContext } from './context.js';
import { resolvePane } from './pane-ref.js';

type Frame = Notifications['screen'];
type Modes = Frame['modes'];

const CSI = '\x1b[';

const RESTORE = `${CSI}?2004l${CSI}?1l${CSI}?1004l${CSI}?1000l${CSI}?1002l${CSI}?1003l${CSI}?1006l${CSI}?7h${CSI}0m${CSI}?25h${CSI}?1049l`;

/**
 * Draws frames of a pane's screen on this terminal, like tmux: only changed rows are redrawn, in
 * a synchronized update, with autowrap off so a row wider than this terminal is clipped.
 */
class FramePainter {
  private modes: Modes | undefined;

  constructor(private readonly write: (s: string) => void) {}

  start(): void {
    this.write(`${CSI}?1049h${CSI}?7l${CSI}H${CSI}2J`);
  }

  paint(frame: Frame): void {
    let s = `${CSI}?2026h${CSI}?25l`;
    if (frame.full) s += `${CSI}0m${CSI}H${CSI}2J`;
    for (const [row, line] of frame.changed) s += `${CSI}${row + 1};1H${CSI}0m${CSI}2K${line}`;
    s += `${CSI}0m${CSI}${frame.cursor.y + 1};${frame.cursor.x + 1}H`;
    // The input modes the pane asked for, so the keys we forward match them (the same encoding as the dashboard's).
    s += inputModeSequences(frame.modes, { previous: this.modes, mouse: 'sgr' });
    this.modes = frame.modes;
    if (frame.cursor.visible) s += `${CSI}?25h`;
    s += `${CSI}?2026l`;
    this.write(s);
  }

  restore(): void {
    this.write(RESTORE);
  }
}

/** `attach PANE [--detach-key KEY] [--no-resize]`: this terminal becomes the pane until detached. */
export async function attachCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    'detach-key': { type: 'string' },
    'no-resize': { type: 'boolean' },
  });
  const ref = positionals[0];
  if (ref === undefined) throw new UsageError('missing PANE');
  const stdin = ctx.stdin;
  const stdout = ctx.stdout;
  if (!stdin.isTTY || !stdout.isTTY) throw new SwitchboardError('INVALID_PARAMS', 'attach needs a terminal (stdin and stdout must be a TTY)');
  const detachName = (values['detach-key'] as string | undefined) ?? 'C-]';
  const detachKey = encodeKey(detachName, { applicationCursorKeys: false });
  if (detachKey.length !== 1) throw new UsageError(`--detach-key must be a single control key such as C-] or C-\\, not '${detachName}'`);

  const client = await ctx.connect();
  let subscription: ClientSubscription | undefined;
  const painter = new FramePainter((s) => stdout.write(s));
  const decoder = new StringDecoder('utf8');
  let finish: (message: string, code: number) => void = () => undefined;
  const done = new Promise<{ message: string; code: number }>((resolve) => {
    finish = (message, code) => resolve({ message, code });
  });

  try {
    const paneId = await resolvePane(client, ref);
    const alive = await client.isAlive(paneId);
    if (!alive.alive) throw new SwitchboardError('PANE_EXITED', `pane ${paneId} has exited`, { pane_id: paneId });
    const resize = (): void => {
      if (values['no-resize']) return;
      client.resize(paneId, Math.max(2, stdout.columns), Math.max(1, stdout.rows)).catch(() => undefined);
    };
    resize();
    stdin.setRawMode(true);
    stdin.resume();
    painter.start();
    subscription = await client.subscribe(
      { paneId, events: ['screen', 'exit'] },
      {
        screen: (frame) => painter.paint(frame),
        exit: (exit) => finish(`[pane ${paneId} ${exit.signal ? `killed (${exit.signal})` : `exited ${exit.exit_code ?? ''}`}]`, 0),
        // A pane on another host whose node lost it or stopped answering.
        subscription_ended: (ended) => finish(`[pane ${paneId}: ${ended.message} (${ended.code})]`, 1),
      },
    );
    const onInput = (chunk: Buffer): void => {
      const at = chunk.indexOf(detachKey.charCodeAt(0));
      const forward = at === -1 ? chunk : chunk.subarray(0, at);
      const text = decoder.write(forward);
      if (text.length > 0) client.sendText(paneId, text).catch(() => undefined);
      if (at !== -1) finish(`[detached from ${paneId}]`, 0);
    };
    stdin.on('data', onInput);
    stdout.on('resize', resize);
    client.onClose((err) => {
      if (err) finish(`[connection to the daemon lost: ${err.message}]`, 1);
    });
    const result = await done;
    stdin.off('data', onInput);
    stdout.off('resize', resize);
    painter.restore();
    stdin.setRawMode(false);
    stdin.pause();
    ctx.stderr.write(`${result.message}\n`);
    return result.code;
  } catch (err) {
    if (stdin.isRaw) {
      painter.restore();
      stdin.setRawMode(false);
    }
    throw err;
  } finally {
    await subscription?.unsubscribe().catch(() => undefined);
    client.close();
  }
}
