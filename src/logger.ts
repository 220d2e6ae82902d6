import { pino, type Logger as PinoLogger, type DestinationStream } from 'pino';

export type Logger = PinoLogger;

/** JSON logs. Secrets and request bodies are never logged; callers pass the request id as `reqId`. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'lagoon' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: ['authorization', 'headers.authorization', 'apiKey', 'secret'], censor: '[redacted]' },
    },
    destination,
  );
}
