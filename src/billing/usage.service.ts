import { requireAdmin } from '../auth/permissions.ts';
import type { AuthContext } from '../auth/auth-context.ts';
import type { Database } from '../db/database.ts';
import { ValidationError } from '../errors.ts';
import type { EventBus } from '../events/event-bus.ts';
import type { Logger } from '../logger.ts';
import { parseInput } from '../validation.ts';
import { USAGE_TOPIC, usageEntryFromEvent } from './usage-events.ts';
import {
  UsageConnectionArgs,
  UsageExportQuery,
  UsageFilterInput,
  USAGE_PAGE_SIZE,
  windowBounds,
} from './usage.inputs.ts';
import { isEmptyWindow, locatePage, mergeDayCounts, microsOf, planCount, type DayCount } from './usage-range.ts';
import * as repo from './usage.repository.ts';
import type { SettledCharges, SortOrder, UsageCursor, UsageEntry, UsagePage, UsageWindow } from './usage.types.ts';

type Db = Parameters<typeof repo.countWindow>[0];

export interface UsageConnection {
  readonly entries: readonly UsageEntry[];
  readonly hasNextPage: boolean;
  readonly hasPreviousPage: boolean;
  /** Entries matching the filter (computed only when asked). */
  totalCount(): Promise<number>;
}

export interface UsageStream {
  readonly warningMessage?: string;
  /** Batches of entries in export order, read by keyset pagination as the consumer pulls them. */
  readonly batches: AsyncIterableIterator<readonly UsageEntry[]>;
}

/**
 * The usage export of an account (ADMIN keys only): pages with exact totals, a keyset-streamed full export,
 * a cursor connection for GraphQL, and live entries as they settle. Talks to the usage repository and the event
 * bus; never returns another account's entries.
 */
export class UsageService {
  constructor(
    private readonly deps: {
      db: Database;
      events: EventBus;
      logger: Logger;
      diemCutoverDate: Date;
      streamBatchSize?: number;
      settled?: SettledCharges;
    },
  ) {}

  /** One page (`page` ≥ 1, `limit` 1–500) with totals, read in one snapshot so both agree. */
  async page(auth: AuthContext, input: unknown): Promise<UsagePage> {
    const { accountId } = requireAdmin(auth);
    await this.deps.settled?.flush(accountId);
    const query = parseInput(UsageExportQuery, input);
    const window = windowOf(query);
    const order = query.sortOrder ?? 'desc';
    const limit = query.limit ?? USAGE_PAGE_SIZE.default;
    const page = query.page ?? 1;
    return this.deps.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const days = await this.dayCounts(trx, accountId, window);
        const total = days.reduce((sum, day) => sum + day.total, 0);
        const at = locatePage(window, days, order, (page - 1) * limit);
        const entries = at ? await repo.pageOfWindow(trx, accountId, at.window, order, at.skip, limit) : [];
        const warningMessage = this.warningFor(window, days);
        return {
          entries,
          pagination: { limit, page, total, totalPages: pagesFor(total, limit) },
          ...(warningMessage && { warningMessage }),
        };
      });
  }

  /**
   * Every matching entry (`limit` and `page` are ignored), in batches fetched only as the consumer asks for
   * them, so memory stays flat whatever the size. Entries settled after the export started are left out.
   */
  async stream(auth: AuthContext, input: unknown): Promise<UsageStream> {
    const { accountId } = requireAdmin(auth);
    await this.deps.settled?.flush(accountId);
    const query = parseInput(UsageExportQuery, input);
    const started = microsOf(new Date()) + 1n;
    const bounded = windowOf(query);
    const window: UsageWindow = {
      ...bounded,
      until: bounded.until === undefined || bounded.until > started ? started : bounded.until,
    };
    const order = query.sortOrder ?? 'desc';
    const warningMessage = this.warningFor(window, await this.dayCounts(this.deps.db, accountId, window));
    const { db, logger } = this.deps;
    const size = this.deps.streamBatchSize ?? 5000;
    const fetchAfter = (cursor: UsageCursor | undefined, sent: number) => {
      const batch = repo.entriesAfter(db, accountId, window, order, cursor, size);
      batch.catch((error: unknown) => logger.error({ err: error, accountId, sent }, 'usage export stream failed'));
      return batch;
    };
    // One batch is read ahead while the previous one is written out: at most two batches in memory.
    async function* batches(): AsyncGenerator<readonly UsageEntry[]> {
      let sent = 0;
      let next = fetchAfter(undefined, sent);
      for (;;) {
        const batch = await next;
        const last = batch.at(-1);
        const more = batch.length === size && last !== undefined;
        if (more) next = fetchAfter({ micros: last.createdAtMicros, id: last.id }, sent + batch.length);
        if (batch.length > 0) yield batch;
        sent += batch.length;
        if (!more) return;
      }
    }
    return { ...(warningMessage && { warningMessage }), batches: batches() };
  }

  /** A Relay-style slice: `first`/`after` in the filter's order, or `last`/`before` counting back from the end. */
  async connection(auth: AuthContext, filterInput: unknown, argsInput: unknown): Promise<UsageConnection> {
    const { accountId } = requireAdmin(auth);
    await this.deps.settled?.flush(accountId);
    const filter = parseInput(UsageFilterInput, filterInput ?? {});
    const args = parseInput(UsageConnectionArgs, argsInput ?? {});
    if (args.first !== undefined && args.last !== undefined)
      throw new ValidationError('Pass either first or last, not both', [
        { path: ['last'], message: 'Use either first or last' },
      ]);
    const window = windowOf(filter);
    const order = filter.sortOrder ?? 'desc';
    const backwards = args.last !== undefined || (args.before !== undefined && args.after === undefined);
    const size = (backwards ? args.last : args.first) ?? USAGE_PAGE_SIZE.default;
    const cursor = backwards ? decodeCursor(args.before, 'before') : decodeCursor(args.after, 'after');
    const fetched = await repo.entriesAfter(
      this.deps.db,
      accountId,
      window,
      backwards ? invert(order) : order,
      cursor,
      size + 1,
    );
    const more = fetched.length > size;
    const slice = fetched.slice(0, size);
    const entries = backwards ? slice.reverse() : slice;
    let total: Promise<number> | undefined;
    return {
      entries,
      hasNextPage: backwards ? cursor !== undefined : more,
      hasPreviousPage: backwards ? more : cursor !== undefined,
      totalCount: () =>
        (total ??= this.dayCounts(this.deps.db, accountId, window).then((days) =>
          days.reduce((sum, day) => sum + day.total, 0),
        )),
    };
  }

  /** New entries of the caller's account as they are settled, until the iterator is returned. */
  subscribe(auth: AuthContext): AsyncIterableIterator<UsageEntry> {
    const { accountId } = requireAdmin(auth);
    const events = this.deps.events.subscribe(USAGE_TOPIC, accountId);
    async function* entries(): AsyncGenerator<UsageEntry> {
      try {
        for await (const event of events) {
          for (const entry of event.entries) if (entry.accountId === accountId) yield usageEntryFromEvent(entry);
        }
      } finally {
        await events.return?.();
      }
    }
    return entries();
  }

  private async dayCounts(db: Db, accountId: string, window: UsageWindow): Promise<DayCount[]> {
    if (isEmptyWindow(window)) return [];
    const plan = planCount(window);
    const exact: DayCount[] = [];
    for (const { day, window: part } of plan.exact)
      exact.push({ day, ...(await repo.countWindow(db, accountId, part)) });
    const rollups = plan.rollupDays ? await repo.rollupDayCounts(db, accountId, window, plan.rollupDays) : [];
    return mergeDayCounts(exact, rollups).filter((day) => day.total > 0);
  }

  /** The cut-over warning: DIEM entries in range and a range that starts before the DIEM cut-over date. */
  private warningFor(window: UsageWindow, days: readonly DayCount[]): string | undefined {
    const cutover = microsOf(this.deps.diemCutoverDate);
    if (window.from !== undefined && window.from >= cutover) return undefined;
    if (!days.some((day) => day.diem > 0)) return undefined;
    const date = this.deps.diemCutoverDate.toISOString().slice(0, 10);
    return `This range starts before ${date}: entries in DIEM created before ${date} are the legacy VCU (the former name of DIEM) and are listed as DIEM.`;
  }
}

function windowOf(
  filter: Pick<UsageWindow, 'currency' | 'apiKeyId' | 'modelId' | 'modelType'> & {
    startDate?: string | undefined;
    endDate?: string | undefined;
  },
): UsageWindow {
  return {
    ...(filter.currency && { currency: filter.currency }),
    ...(filter.apiKeyId !== undefined && { apiKeyId: filter.apiKeyId }),
    ...(filter.modelId !== undefined && { modelId: filter.modelId }),
    ...(filter.modelType !== undefined && { modelType: filter.modelType }),
    ...windowBounds(filter.startDate, filter.endDate),
  };
}

const invert = (order: SortOrder): SortOrder => (order === 'asc' ? 'desc' : 'asc');

/** ⌈total / limit⌉ in integer arithmetic (the billing core takes no floating-point steps). */
const pagesFor = (total: number, limit: number): number => (total + limit - 1 - ((total + limit - 1) % limit)) / limit;

/** Opaque cursors: base64url of "<created_at µs>:<id>". */
export const encodeCursor = (entry: Pick<UsageEntry, 'createdAtMicros' | 'id'>): string =>
  Buffer.from(`${entry.createdAtMicros}:${entry.id}`).toString('base64url');

const CURSOR = /^(\d{1,17}):([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

function decodeCursor(value: string | undefined, field: string): UsageCursor | undefined {
  if (value === undefined) return undefined;
  const match = CURSOR.exec(Buffer.from(value, 'base64url').toString('utf8'));
  if (!match?.[1] || !match[2])
    throw new ValidationError(`Invalid request: ${field}: not a cursor from this connection`, [
      { path: [field], message: 'Not a cursor from this connection' },
    ]);
  return { micros: BigInt(match[1]), id: match[2] };
}
