import { InvalidOptionError } from '../errors.js';
import type { Logger } from '../types.js';

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/**
 * The user's logger, with whatever it throws contained: a logger that throws (a closed
 * stream, a serializer that chokes on a value) must not stop a supervisor from starting,
 * stopping or ending a job. What a throwing logger could not say is lost; that it threw is
 * said once, as a process warning, since the logger itself cannot say it.
 */
export function containedLogger(logger: Logger): Logger {
  for (const level of LEVELS) {
    let method: unknown;
    try {
      method = logger?.[level];
    } catch (error) {
      // A getter or a Proxy that throws: refused now, not at the first log line.
      throw new InvalidOptionError('logger', `reading its ${level}() method threw: ${String(error)}`, { cause: error });
    }
    if (typeof method !== 'function') {
      throw new InvalidOptionError('logger', `has no ${level}() method: pass a pino logger, or an object with debug, info, warn and error`);
    }
  }
  let warned = false;
  const contained = {} as Logger;
  for (const level of LEVELS) {
    contained[level] = (obj: object, msg?: string) => {
      try {
        if (msg === undefined) logger[level](obj);
        else logger[level](obj, msg);
      } catch (error) {
        if (warned) return;
        warned = true;
        process.emitWarning(`jobvisor: the logger threw on ${level}(); its entries are dropped where it throws: ${String(error)}`, 'JobvisorLoggerWarning');
      }
    };
  }
  return contained;
}
