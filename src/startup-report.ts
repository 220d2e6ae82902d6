import type { Logger } from './logger.ts';

/*
 * What the start is doing and how long each part took, one concise line each: a first start that creates the
 * embedded database says so before it begins, instead of seconds of silence. Through the logger (JSON lines,
 * `phase` and `ms` fields) when stdout is a file or a pipe; plain lines when it is a terminal.
 */

export interface StartupReport {
  /** A line before a phase that may take a while (the first start's database creation, the migrations). */
  announce(message: string): void;
  /** Runs one phase and reports it with its duration; `done` words the line from the phase's result. */
  phase<T>(name: string, run: () => Promise<T>, done?: (result: T) => string): Promise<T>;
  /** The last line: the whole start from the process's own start, with each phase's share. */
  ready(fields?: Record<string, unknown>): void;
  /** Each phase's duration so far, in milliseconds. */
  readonly durations: Readonly<Record<string, number>>;
}

/** Tells nothing: an app made without a report (the in-process apps of the tests). */
export const quietReport: StartupReport = {
  announce: () => undefined,
  phase: (_name, run) => run(),
  ready: () => undefined,
  durations: {},
};

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;

export function startupReport(logger: Logger, plain = process.stdout.isTTY === true): StartupReport {
  const durations: Record<string, number> = {};
  const say = (fields: Record<string, unknown>, message: string) => {
    if (plain) process.stdout.write(`lagoon: ${message}\n`);
    else logger.info(fields, message);
  };
  return {
    durations,
    announce: (message) => say({ phase: 'announce' }, message),
    async phase(name, run, done) {
      const started = performance.now();
      const result = await run();
      const ms = Math.round(performance.now() - started);
      durations[name] = ms;
      say({ phase: name, ms }, `${done ? done(result) : name} in ${seconds(ms)}`);
      return result;
    },
    ready(fields = {}) {
      // performance.now() counts from the process's start: Node's own start and loading the modules included.
      const ms = Math.round(performance.now());
      const parts = Object.entries(durations).map(([name, took]) => `${name} ${seconds(took)}`);
      say({ phase: 'ready', ms, phases: durations, ...fields }, `ready in ${seconds(ms)} (${parts.join(', ')})`);
    },
  };
}
