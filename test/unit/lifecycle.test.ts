import { describe, expect, it } from 'vitest';
import { Lifecycle, periodic } from '../../src/lifecycle.ts';
import { createLogger } from '../../src/logger.ts';
import { eventually } from '../helpers/eventually.ts';

describe('Lifecycle', () => {
  it('should start parts in the order added and stop them in reverse, once', async () => {
    const seen: string[] = [];
    const lifecycle = new Lifecycle(createLogger('silent'));
    for (const name of ['events', 'billing', 'sweeper'])
      lifecycle.add(name, {
        start: () => void seen.push(`start ${name}`),
        stop: async () => void seen.push(`stop ${name}`),
      });
    await lifecycle.start();
    await Promise.all([lifecycle.stop(), lifecycle.stop()]);
    await lifecycle.stop();
    expect(seen).toEqual([
      'start events',
      'start billing',
      'start sweeper',
      'stop sweeper',
      'stop billing',
      'stop events',
    ]);
  });

  it('should stop the remaining parts when one fails to stop', async () => {
    const stopped: string[] = [];
    const lifecycle = new Lifecycle(createLogger('silent'));
    lifecycle.add('database user', { stop: () => void stopped.push('database user') });
    lifecycle.add('broken', {
      stop: () => {
        throw new Error('cannot close');
      },
    });
    await expect(lifecycle.stop()).resolves.toBeUndefined();
    expect(stopped).toEqual(['database user']);
  });

  it('should log a background start that fails, but not one that the stop cut short', async () => {
    const lines: string[] = [];
    const logger = createLogger('error', { write: (line: string) => void lines.push(line) });
    const failing = (lifecycle: Lifecycle, name: string) => {
      let fail: (error: Error) => void = () => undefined;
      lifecycle.add(name, {
        startInBackground: () => new Promise<void>((_resolve, reject) => (fail = reject)),
        stop: () => fail(new Error('closed while starting')),
      });
      return (error: Error) => fail(error);
    };

    const broken = new Lifecycle(logger);
    const failNow = failing(broken, 'the broken queue');
    await broken.start(); // not waiting for the background start
    failNow(new Error('schema not installed'));
    await eventually(async () => expect(lines.join('')).toContain('the broken queue failed to start'));

    lines.length = 0;
    const stoppedEarly = new Lifecycle(logger);
    failing(stoppedEarly, 'the early queue');
    await stoppedEarly.start();
    await stoppedEarly.stop(); // rejects the start in progress
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(lines).toEqual([]);
  });

  it('should run a periodic task only while started, and survive a failed run', async () => {
    let runs = 0;
    const part = periodic(
      async () => {
        runs += 1;
        if (runs === 1) throw new Error('first run fails');
      },
      5,
      createLogger('silent'),
      'test task',
    );
    part.start?.();
    await eventually(async () => expect(runs).toBeGreaterThanOrEqual(2));
    await part.stop?.();
    const atStop = runs;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(runs).toBe(atStop);
  });
});
