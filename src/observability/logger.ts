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
}

export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};
