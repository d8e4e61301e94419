/** A structured logger, injected everywhere a library module needs to report something. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** A logger that adds `fields` to every line. */
  child(fields: Record<string, unknown>): Logger;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const LEVEL_RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** A logger that drops everything: the default for library use. */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger;
  },
};

interface WritableLike {
  write(chunk: string): unknown;
}

/** A logger writing one line per entry: `time level message key=value…`, or JSON lines. */
export function createStreamLogger(
  stream: WritableLike,
  options: { level?: LogLevel; json?: boolean; fields?: Record<string, unknown> } = {},
): Logger {
  const minRank = LEVEL_RANK[options.level ?? 'info'];
  const base = options.fields ?? {};
  const emit = (level: Exclude<LogLevel, 'silent'>, message: string, fields?: Record<string, unknown>): void => {
    if (LEVEL_RANK[level] < minRank) return;
    const all = { ...base, ...fields };
    const time = new Date().toISOString();
    if (options.json) {
      stream.write(`${JSON.stringify({ time, level, message, ...all })}\n`);
      return;
    }
    const tail = Object.entries(all)
      .map(([k, v]) => `${k}=${v === undefined ? 'undefined' : JSON.stringify(v)}`)
      .join(' ');
    stream.write(`${time} ${level.padEnd(5)} ${message}${tail ? ` ${tail}` : ''}\n`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createStreamLogger(stream, { ...options, fields: { ...base, ...fields } }),
  };
}
