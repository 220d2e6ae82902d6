import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AuthContext } from '../auth/auth-context.ts';
import { requireAdmin } from '../auth/permissions.ts';
import type { Database } from '../db/database.ts';
import { ValidationError } from '../errors.ts';
import { parseInput } from '../validation.ts';
import type { Currency } from './money.ts';
import { HISTORY_PAGE_SIZE, UsageHistoryQuery } from './usage-history.inputs.ts';
import { windowBounds } from './usage.inputs.ts';
import { microsOf } from './usage-range.ts';
import { entriesAfter } from './usage.repository.ts';
import type { SettledCharges, UsageCursor, UsageEntry, UsageWindow } from './usage.types.ts';

export interface UsageHistoryPage {
  readonly entries: readonly UsageEntry[];
  /** Null on the last page. */
  readonly nextCursor: string | null;
}

/** What a cursor carries: the first page's filters, a fixed end of the walk, and the position after its page. */
interface HistoryWalk {
  readonly currency?: Currency | undefined;
  /** Exclusive end in µs, fixed by the first page: entries that settle later never shift the pages. */
  readonly until: bigint;
  readonly pageSize: number;
  readonly after: UsageCursor;
  /** Unix seconds after which the cursor is refused. */
  readonly expires: number;
}

const CURSOR_LIFETIME_SECONDS = 24 * 3600;
const MAC_BYTES = 16;
const PURPOSE = 'lagoon usage-history cursor v1\n';

/**
 * The account's usage ledger walked by cursor in ascending time order (GET /billing/usage-history). The cursor is
 * signed with the instance secret and bound to the account, so a tampered, expired or another account's cursor is a
 * 400 and the client starts again. No totals: every page is one index range scan, whatever the ledger's size.
 */
export class UsageHistoryService {
  constructor(
    private readonly deps: {
      db: Database;
      secret: () => Promise<Buffer>;
      settled?: SettledCharges;
      now?: () => Date;
    },
  ) {}

  async page(auth: AuthContext, input: unknown): Promise<UsageHistoryPage> {
    const { accountId } = requireAdmin(auth);
    const query = parseInput(UsageHistoryQuery, input);
    const now = this.deps.now?.() ?? new Date();
    let walk: Omit<HistoryWalk, 'after' | 'expires'> & { after?: UsageCursor; from?: bigint };
    if (query.cursor !== undefined) {
      walk = await this.decode(accountId, query.cursor, now);
    } else {
      await this.deps.settled?.flush(accountId);
      const bounds = windowBounds(query.startTimestamp, undefined);
      const end = query.endTimestamp === undefined ? undefined : windowBounds(undefined, query.endTimestamp).until;
      const upToNow = microsOf(now) + 1n;
      // endTimestamp is exclusive here (windowBounds treats an end as inclusive, so take its instant itself).
      const until = end === undefined ? upToNow : min(end - 1n, upToNow);
      walk = {
        ...(query.currency && { currency: query.currency }),
        ...(bounds.from !== undefined && { from: bounds.from }),
        until,
        pageSize: query.pageSize ?? HISTORY_PAGE_SIZE.default,
      };
    }
    const window: UsageWindow = {
      ...(walk.currency && { currency: walk.currency }),
      ...(walk.from !== undefined && { from: walk.from }),
      until: walk.until,
    };
    const fetched = await entriesAfter(this.deps.db, accountId, window, 'asc', walk.after, walk.pageSize + 1);
    const entries = fetched.slice(0, walk.pageSize);
    const last = entries.at(-1);
    const nextCursor =
      fetched.length > walk.pageSize && last
        ? await this.encode(accountId, {
            ...(walk.currency && { currency: walk.currency }),
            until: walk.until,
            pageSize: walk.pageSize,
            after: { micros: last.createdAtMicros, id: last.id },
            expires: unixSeconds(now) + CURSOR_LIFETIME_SECONDS,
          })
        : null;
    return { entries, nextCursor };
  }

  private async mac(accountId: string, payload: Buffer): Promise<Buffer> {
    return createHmac('sha256', await this.deps.secret())
      .update(PURPOSE)
      .update(accountId)
      .update('\n')
      .update(payload)
      .digest()
      .subarray(0, MAC_BYTES);
  }

  private async encode(accountId: string, walk: HistoryWalk): Promise<string> {
    const payload = Buffer.from(
      JSON.stringify([
        walk.currency ?? '',
        `${walk.until}`,
        walk.pageSize,
        `${walk.after.micros}`,
        walk.after.id,
        walk.expires,
      ]),
    );
    return Buffer.concat([payload, await this.mac(accountId, payload)]).toString('base64url');
  }

  private async decode(accountId: string, cursor: string, now: Date): Promise<HistoryWalk> {
    const bytes = Buffer.from(cursor, 'base64url');
    const payload = bytes.subarray(0, Math.max(0, bytes.length - MAC_BYTES));
    const mac = bytes.subarray(payload.length);
    const expected = await this.mac(accountId, payload);
    const walk = mac.length === MAC_BYTES && timingSafeEqual(mac, expected) ? parseWalk(payload) : undefined;
    if (!walk) throw invalidCursor('is not a cursor of this account (start again without it)');
    if (walk.expires * 1000 < now.getTime()) throw invalidCursor('has expired (start again without it)');
    return walk;
  }
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);
/** Whole seconds since the epoch, in integer arithmetic (the billing code takes no floating-point steps). */
const unixSeconds = (date: Date) => Number(BigInt(date.getTime()) / 1000n);

function invalidCursor(reason: string): ValidationError {
  return new ValidationError(`Invalid request: cursor ${reason}`, [{ path: ['cursor'], message: `Cursor ${reason}` }]);
}

function parseWalk(payload: Buffer): HistoryWalk | undefined {
  try {
    const value: unknown = JSON.parse(payload.toString('utf8'));
    if (!Array.isArray(value) || value.length !== 6) return undefined;
    const [currency, until, pageSize, micros, id, expires] = value as unknown[];
    if (typeof currency !== 'string' || typeof until !== 'string' || typeof micros !== 'string') return undefined;
    if (typeof pageSize !== 'number' || typeof id !== 'string' || typeof expires !== 'number') return undefined;
    return {
      ...(currency && { currency: currency as Currency }),
      until: BigInt(until),
      pageSize,
      after: { micros: BigInt(micros), id },
      expires,
    };
  } catch {
    return undefined;
  }
}
