// The logging port the core writes to: pino's call shape, so pino plugs in on Node and JSON lines on Workers.

export type LogFields = Record<string, unknown>;
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(fields: LogFields, msg: string): void;
  info(fields: LogFields, msg: string): void;
  warn(fields: LogFields, msg: string): void;
  error(fields: LogFields, msg: string): void;
  /** Whether a line at `level` would be written, so callers skip building (or hashing) what is dropped. Absent: assume yes. */
  enabled?(level: LogLevel): boolean;
  /**
   * Writes one line whose own fields come already serialised (`"name":value` pairs joined by commas, no braces), as
   * `info` and the others would write them: for the access log, whose fields have one fixed shape and no secrets,
   * so the hot path skips formatting an object per request. Absent: the caller passes an object.
   */
  json?(level: LogLevel, fieldsJson: string, msg: string): void;
  /** Writes out what is buffered; called before the process exits. */
  flush?(): void;
  /** Lines dropped since the start because the log's reader did not take them. Absent: none are. */
  dropped?(): number;
}

export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};

/**
 * `text` as a JSON string, as JSON.stringify writes it: printable ASCII without `"` or `\` needs no escape and is
 * only quoted (several times cheaper for the short names and ids of a log line); anything else goes to JSON.stringify.
 */
export function jsonString(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return JSON.stringify(text);
  }
  return `"${text}"`;
}
