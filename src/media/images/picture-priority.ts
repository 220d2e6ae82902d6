import type { Logger } from '../../logger.ts';
import { pictureThreadId, setPictureThreadPriority } from '../../providers/image/picture-thread.ts';
import { CLOCK_TICK_MS, NamedThreadPriority, threadCpuTicks, type BackgroundPriority } from '../../thread-priority.ts';

/*
 * Pictures on idle cycles only (SCHED_IDLE, src/thread-priority.ts) give way at once to requests, but on a host whose
 * cores other processes keep busy they get no cycles at all: a paid picture would wait without end. So while
 * picture work is in flight, the CPU time of its threads (libvips' workers and the picture thread) is looked at once
 * per window; a whole window in flight in which they got almost none means they are starved, and they move to
 * nice 10 (`low`: a share of a busy core) for a hold time, then back to idle cycles. A starved picture is late by
 * about one window; a host that stays busy costs one such window per hold time.
 */

export interface StarvationRule {
  /** How long picture work may be in flight with its threads getting almost no CPU. */
  readonly windowMs: number;
  /** How long the threads stay at nice 10 once they were found starved. */
  readonly holdMs: number;
}

export const DEFAULT_STARVATION_RULE: StarvationRule = { windowMs: 1_000, holdMs: 60_000 };

/** Below this share of one core over a window, with work in flight, the threads are starved. */
const STARVED_SHARE = 0.05;

type CpuSample = { readonly at: number; readonly ticks: ReadonlyMap<string, number> };

/** The scheduling of picture work's threads in this process: the operator's choice, raised while pictures starve. */
export class PicturePriority {
  private readonly vips: NamedThreadPriority;
  private inFlight = 0;
  private watch: NodeJS.Timeout | undefined;
  private sample: CpuSample | undefined;
  private hold: NodeJS.Timeout | undefined;
  /** The picture thread that was raised (a thread started later is raised on the next look). */
  private raisedPictureThread: string | undefined;
  /** How many times the threads were found starved since the process started. */
  raises = 0;

  constructor(
    private readonly configured: BackgroundPriority,
    private readonly logger?: Logger,
    private readonly rule: StarvationRule = DEFAULT_STARVATION_RULE,
  ) {
    this.vips = new NamedThreadPriority('libvips worker', configured);
  }

  /** A call started its pixel work. */
  started(): void {
    this.vips.lower();
    this.inFlight += 1;
    // Only idle cycles can be withheld without end: at nice 10 the threads always get a share.
    if (this.inFlight === 1 && this.configured === 'idle' && process.platform === 'linux') {
      this.sample = this.measure();
      this.watch = setInterval(() => this.look(), this.rule.windowMs);
      this.watch.unref();
    }
  }

  /** A call's pixel work ended. */
  ended(): void {
    this.vips.lower();
    this.inFlight -= 1;
    if (this.inFlight > 0) return;
    clearInterval(this.watch);
    this.watch = undefined;
    this.sample = undefined;
  }

  private look(): void {
    // Threads libvips started during the window are placed, and measured, from now on.
    this.vips.lower();
    const before = this.sample;
    const now = this.measure();
    this.sample = now;
    if (this.hold) {
      const pictureThread = pictureThreadId();
      if (pictureThread !== this.raisedPictureThread) this.raisePictureThread();
      return;
    }
    if (!before) return;
    let cpuMs = 0;
    // A thread first measured now started, or was first seen, during the window: its time counts whole.
    for (const [tid, ticks] of now.ticks) cpuMs += (ticks - (before.ticks.get(tid) ?? 0)) * CLOCK_TICK_MS;
    if (cpuMs < (now.at - before.at) * STARVED_SHARE) this.raise();
  }

  private raise(): void {
    this.raises += 1;
    this.vips.setPriority('low');
    this.raisePictureThread();
    const context = { raises: this.raises, windowMs: this.rule.windowMs, holdMs: this.rule.holdMs };
    const message =
      'picture work got no CPU on idle cycles (other processes keep the cores busy): it runs at nice 10 for a while';
    if (this.raises === 1) this.logger?.warn(context, `${message}; LAGOON_IMAGE_PRIORITY=low keeps it there`);
    else this.logger?.info(context, message);
    this.hold = setTimeout(() => this.lowerAgain(), this.rule.holdMs);
    this.hold.unref();
  }

  private raisePictureThread(): void {
    this.raisedPictureThread = pictureThreadId();
    setPictureThreadPriority('low');
  }

  private lowerAgain(): void {
    this.hold = undefined;
    this.raisedPictureThread = undefined;
    this.vips.setPriority('idle');
    setPictureThreadPriority('idle');
    // The next window starts now: CPU the threads had at nice 10 says nothing about idle cycles.
    if (this.inFlight > 0) this.sample = this.measure();
  }

  private measure(): CpuSample {
    const ticks = new Map<string, number>();
    for (const tid of [...this.vips.threadIds(), pictureThreadId()]) {
      const value = tid === undefined ? undefined : threadCpuTicks(tid);
      if (tid !== undefined && value !== undefined) ticks.set(tid, value);
    }
    return { at: performance.now(), ticks };
  }
}
