/** Structured JSON logs: one object per line, always carrying the request id when there is one. */
import { platform } from "../platform/services";
export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  with(fields: Record<string, unknown>): Logger;
}

/**
 * One object per logger, its methods on the prototype: every request makes two (the request id,
 * then the user), so no closures are made per request.
 */
class JsonLogger implements Logger {
  constructor(
    private readonly min: number,
    private readonly base: Record<string, unknown>,
  ) {}

  debug(msg: string, fields?: Record<string, unknown>): void {
    this.write("debug", msg, fields);
  }
  info(msg: string, fields?: Record<string, unknown>): void {
    this.write("info", msg, fields);
  }
  warn(msg: string, fields?: Record<string, unknown>): void {
    this.write("warn", msg, fields);
  }
  error(msg: string, fields?: Record<string, unknown>): void {
    this.write("error", msg, fields);
  }
  with(fields: Record<string, unknown>): Logger {
    return new JsonLogger(this.min, { ...this.base, ...fields });
  }

  private write(lvl: LogLevel, msg: string, fields?: Record<string, unknown>): void {
    if (rank[lvl] < this.min) return;
    const line = JSON.stringify({ time: platform().clock.now().toISOString(), level: lvl, msg, ...this.base, ...fields });
    if (lvl === "error") console.error(line);
    else if (lvl === "warn") console.warn(line);
    else console.log(line);
  }
}

export function createLogger(level: string | undefined, base: Record<string, unknown> = {}): Logger {
  return new JsonLogger(rank[(level as LogLevel) in rank ? (level as LogLevel) : "info"], base);
}

/** An error as log fields: message and stack go to the log, never to the client. */
export function errorFields(error: unknown): Record<string, unknown> {
  if (error instanceof Error) return { error: error.message, errorName: error.name, stack: error.stack };
  return { error: String(error) };
}
