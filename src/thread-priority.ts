import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import type { Writable } from 'node:stream';

/*
 * Background CPU work (libvips' picture threads, eSpeak's synthesis threads) runs at a lower scheduling priority
 * than the event loop. On a host with few cores a burst of pictures otherwise takes the cores the requests around
 * it need, and chat's tail latency grows by tens of milliseconds; at a lower priority the pictures get every idle
 * cycle and yield when a request is ready to run. Linux keeps a nice value per thread; on other systems these
 * functions do nothing.
 *
 * A nice value alone is not enough on Linux 6.6 and later (the EEVDF scheduler): a running thread keeps its core
 * for the rest of its time slice (about a millisecond) whatever its nice value, so an event loop woken by a request
 * or a database answer waits behind picture work, and the waits add up to several ms of chat's p99
 * (bench/RESULTS.md). Under the SCHED_IDLE policy a thread yields at once to any normal one. Node cannot set a
 * policy itself, so util-linux's `chrt` does it, once per thread; without it the nice value stays.
 */

/**
 * How background threads are scheduled: `idle` (SCHED_IDLE: only on cycles no normal thread wants, at nice 10 where
 * that cannot be set), `low` (nice 10: a share of a busy core, as 1 to 10 against a request's thread).
 */
export type BackgroundPriority = 'idle' | 'low';

/** The least time between two looks at the process's threads. */
const RESCAN_MS = 250;
/** How long after a thread is first seen its name is read again (it names itself just after it starts). */
const NAMING_GRACE_MS = 1000;

/** The nice value of background threads: well below the event loop (0), far from starved (19). */
export const BACKGROUND_NICE = 10;

/** Never above the calling thread's own priority: a process started with `nice` keeps its setting. */
function backgroundNice(nice: number): number {
  return Math.max(nice, getPriority());
}

/** Lowers the calling thread's priority (Linux applies setpriority to the calling thread alone). */
export function lowerThisThreadPriority(nice = BACKGROUND_NICE): void {
  try {
    setPriority(backgroundNice(nice));
  } catch {
    // Not permitted or not supported: the work runs at normal priority.
  }
}

/** Puts the calling thread (a worker thread of background work) at `priority`. */
export function backgroundThisThread(priority: BackgroundPriority): void {
  lowerThisThreadPriority();
  const tid = thisThreadId();
  if (priority === 'idle' && tid !== undefined) scheduleThread(tid, 'idle', false);
}

/** The calling thread's id on Linux (what chrt and /proc/self/task take); undefined elsewhere. */
export function thisThreadId(): string | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    // "<pid>/task/<tid>".
    return readlinkSync('/proc/thread-self').split('/').pop() || undefined;
  } catch {
    return undefined;
  }
}

/** The fields of a /proc stat file after the name, which may hold spaces: field 3 (state) is the first. */
function statFields(statPath: string): string[] | undefined {
  try {
    const stat = readFileSync(statPath, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** CPU time in clock ticks (utime + stime, fields 14 and 15) of a /proc stat file: a thread's or a process's. */
export function cpuTicksIn(statPath: string): number | undefined {
  const fields = statFields(statPath);
  return fields && Number(fields[11]) + Number(fields[12]);
}

/** CPU time a thread of this process has had, in clock ticks. */
export function threadCpuTicks(tid: string): number | undefined {
  return cpuTicksIn(`/proc/self/task/${tid}/stat`);
}

/** Linux's number for the SCHED_IDLE policy (field 41 of a stat file). */
const SCHED_IDLE = '5';

/** Whether a thread of this process is under SCHED_IDLE. */
function underIdlePolicy(tid: string): boolean {
  return statFields(`/proc/self/task/${tid}/stat`)?.[38] === SCHED_IDLE;
}

/** The length of a clock tick in /proc's CPU times: USER_HZ, 100 on every Linux. */
export const CLOCK_TICK_MS = 10;

/**
 * Lowers the priority of this process's threads of one name (libvips names its workers `libvips worker`), each once.
 * libvips keeps its threads for later pictures, so after a few calls there is nothing new to renice and a call
 * costs one directory read.
 */
export class NamedThreadPriority {
  /** Thread id → when it was first looked at. */
  private readonly seen = new Map<string, number>();
  /** The threads of that name it has placed. */
  private readonly placed = new Set<string>();
  private scannedAt = 0;
  /** The last look found a thread it had not seen, or one still young. */
  private fresh = false;
  private readonly enabled = process.platform === 'linux';

  constructor(
    private readonly threadName: string,
    private priority: BackgroundPriority = 'idle',
  ) {
    // The helper's one fork happens now, as the server starts, not while it serves.
    if (this.enabled && priority === 'idle') policyHelper ??= startPolicyHelper();
  }

  /** The ids of the threads it has placed that were alive at its last look. */
  threadIds(): readonly string[] {
    return [...this.placed];
  }

  /** Moves the threads placed so far, and those found later, to `priority`. */
  setPriority(priority: BackgroundPriority): void {
    if (priority === this.priority) return;
    this.priority = priority;
    if (!this.enabled) return;
    for (const tid of this.placed) scheduleThread(tid, priority);
  }

  lower(): void {
    if (!this.enabled) return;
    // A directory read costs ~0.1 ms of the event loop; pictures come many a second, new threads rarely. While
    // threads are new it looks at every call.
    const now = Date.now();
    if (!this.fresh && now - this.scannedAt < RESCAN_MS) return;
    this.scannedAt = now;
    this.fresh = false;
    let tasks: string[];
    try {
      tasks = readdirSync('/proc/self/task');
    } catch {
      return;
    }
    for (const tid of tasks) {
      const firstSeen = this.seen.get(tid);
      // A new thread carries its creator's name until it sets its own: a young one is looked at again.
      if (firstSeen !== undefined && now - firstSeen > NAMING_GRACE_MS) continue;
      if (firstSeen === undefined) this.seen.set(tid, now);
      this.fresh = true;
      try {
        if (readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trimEnd() === this.threadName) {
          setPriority(Number(tid), backgroundNice(BACKGROUND_NICE));
          // libvips' threads are the process's: one an earlier configuration put on idle cycles follows this one.
          if (this.priority === 'idle') scheduleThread(tid, 'idle');
          else if (underIdlePolicy(tid)) scheduleThread(tid, 'low');
          this.seen.set(tid, 0);
          this.placed.add(tid);
        }
      } catch {
        // The thread ended meanwhile, or the system refused: nothing to do.
      }
    }
    if (this.seen.size > tasks.length * 2) this.forgetEnded(new Set(tasks));
  }

  /** Thread ids are reused: forget the ended ones so a new thread with an old id is looked at again. */
  private forgetEnded(alive: ReadonlySet<string>): void {
    for (const tid of this.seen.keys()) if (!alive.has(tid)) this.seen.delete(tid);
    for (const tid of this.placed) if (!alive.has(tid)) this.placed.delete(tid);
  }
}

/**
 * A shell that runs `chrt` for each "<policy> <thread id>" line written to it, started once. Starting a program forks
 * the process, and forking a process of a few hundred megabytes holds the calling thread for 15–20 ms
 * (bench/RESULTS.md): done on the event loop for each new libvips thread, that showed in chat's tail. The shell is
 * small, so its own forks are cheap, and it ends when its input closes, with this process. null: it could not be
 * started (execFile per thread then).
 */
let policyHelper: ChildProcess | null | undefined;

function startPolicyHelper(): ChildProcess | null {
  try {
    const helper = spawn(
      'sh',
      ['-c', 'while read -r policy tid; do chrt "--$policy" --pid 0 "$tid" 2>/dev/null; done'],
      {
        stdio: ['pipe', 'ignore', 'ignore'],
      },
    );
    const gone = () => {
      if (policyHelper === helper) policyHelper = null;
    };
    helper.on('error', gone);
    helper.on('exit', gone);
    helper.stdin?.on('error', gone);
    // Neither the helper nor its pipe keeps the process alive.
    helper.unref();
    (helper.stdin as (Writable & { unref?: () => void }) | null)?.unref?.();
    return helper;
  } catch {
    return null;
  }
}

/**
 * Schedules one thread in the background: `idle` under SCHED_IDLE, `low` back under the normal policy, where its nice
 * value (10) rules again. On failure (no `chrt`, refused) the thread keeps what it had.
 */
export function scheduleThread(tid: string, priority: BackgroundPriority, viaHelper = true): void {
  if (process.platform !== 'linux') return;
  const policy = priority === 'idle' ? 'idle' : 'other';
  if (viaHelper) policyHelper ??= startPolicyHelper();
  const input = viaHelper ? policyHelper?.stdin : undefined;
  if (input?.writable) input.write(`${policy} ${tid}\n`);
  else execFile('chrt', [`--${policy}`, '--pid', '0', tid], { timeout: 5_000 }, () => undefined);
}
