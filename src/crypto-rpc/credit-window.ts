import type { Redis } from 'ioredis';

/**
 * Credits spent per account over a rolling 24 hours, as a sliding-window counter: 24 hourly buckets, the oldest
 * one counted by the share of it still inside the last 24 hours. Check-and-add is one atomic step (a Lua
 * script in Redis, a synchronous section in memory), so concurrent requests can never pass the cap together.
 * rate-limiter-flexible (used for requests per minute) only has fixed windows, hence this small counter.
 */
export interface CreditWindow {
  /** Adds `credits` unless that would pass `limit`; `used` is the total before this request. */
  tryAdd(key: string, credits: number, limit: number, nowMs: number): Promise<CreditWindowResult>;
  /** Gives back credits added in `bucket` (a request that was refused later or cost less than held). */
  remove(key: string, bucket: number, credits: number): Promise<void>;
  close(): Promise<void>;
}

export interface CreditWindowResult {
  readonly admitted: boolean;
  readonly used: number;
  readonly bucket: number;
  /** When the window next moves (the start of the next bucket), in ms since the epoch. */
  readonly nextShiftMs: number;
}

export const BUCKET_MS = 3_600_000;
export const BUCKETS = 24;

function shape(nowMs: number) {
  const bucket = Math.floor(nowMs / BUCKET_MS);
  const oldestShare = 1 - (nowMs - bucket * BUCKET_MS) / BUCKET_MS;
  return { bucket, oldest: bucket - BUCKETS, oldestShare, nextShiftMs: (bucket + 1) * BUCKET_MS };
}

export class MemoryCreditWindow implements CreditWindow {
  private readonly accounts = new Map<string, Map<number, number>>();
  private calls = 0;

  tryAdd(key: string, credits: number, limit: number, nowMs: number): Promise<CreditWindowResult> {
    const { bucket, oldest, oldestShare, nextShiftMs } = shape(nowMs);
    if (++this.calls % 10_000 === 0) this.prune(oldest);
    let buckets = this.accounts.get(key);
    if (!buckets) this.accounts.set(key, (buckets = new Map()));
    let used = 0;
    for (const [index, value] of buckets) {
      if (index < oldest) buckets.delete(index);
      else used += index === oldest ? value * oldestShare : value;
    }
    used = Math.floor(used);
    const admitted = used + credits <= limit;
    if (admitted) buckets.set(bucket, (buckets.get(bucket) ?? 0) + credits);
    return Promise.resolve({ admitted, used, bucket, nextShiftMs });
  }

  remove(key: string, bucket: number, credits: number): Promise<void> {
    const buckets = this.accounts.get(key);
    const value = buckets?.get(bucket);
    if (buckets && value !== undefined) {
      if (value - credits > 0) buckets.set(bucket, value - credits);
      else buckets.delete(bucket);
    }
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.accounts.clear();
    return Promise.resolve();
  }

  /** Forgets accounts idle for a whole window, so the map does not grow with every account ever seen. */
  private prune(oldest: number): void {
    for (const [key, buckets] of this.accounts) {
      if ([...buckets.keys()].every((index) => index < oldest)) this.accounts.delete(key);
    }
  }
}

// KEYS[1]: the account's hash of bucket → credits. ARGV: now ms, bucket ms, buckets, credits, limit.
const TRY_ADD = `
local now = tonumber(ARGV[1]) local size = tonumber(ARGV[2]) local count = tonumber(ARGV[3])
local add = tonumber(ARGV[4]) local limit = tonumber(ARGV[5])
local bucket = math.floor(now / size) local oldest = bucket - count
local share = 1 - (now - bucket * size) / size
local used = 0
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  local index = tonumber(fields[i]) local value = tonumber(fields[i + 1])
  if index < oldest then redis.call('HDEL', KEYS[1], fields[i])
  elseif index == oldest then used = used + value * share
  else used = used + value end
end
used = math.floor(used)
if used + add > limit then return {0, used, bucket} end
redis.call('HINCRBY', KEYS[1], tostring(bucket), add)
redis.call('PEXPIRE', KEYS[1], (count + 1) * size)
return {1, used, bucket}`;

// KEYS[1]: as above. ARGV: bucket, credits.
const REMOVE = `
local left = redis.call('HGET', KEYS[1], ARGV[1])
if not left then return 0 end
if tonumber(left) - tonumber(ARGV[2]) > 0 then redis.call('HINCRBY', KEYS[1], ARGV[1], -tonumber(ARGV[2]))
else redis.call('HDEL', KEYS[1], ARGV[1]) end
return 1`;

type RedisWithWindow = Redis & {
  rpcCreditsTryAdd(key: string, ...args: (string | number)[]): Promise<[number, number, number]>;
  rpcCreditsRemove(key: string, ...args: (string | number)[]): Promise<number>;
};

/** The same counter in Redis, shared by every API process. */
export class RedisCreditWindow implements CreditWindow {
  private readonly redis: RedisWithWindow;

  constructor(
    redis: Redis,
    private readonly prefix = 'lagoon:rpc:credits:',
  ) {
    redis.defineCommand('rpcCreditsTryAdd', { numberOfKeys: 1, lua: TRY_ADD });
    redis.defineCommand('rpcCreditsRemove', { numberOfKeys: 1, lua: REMOVE });
    this.redis = redis as RedisWithWindow;
  }

  async tryAdd(key: string, credits: number, limit: number, nowMs: number): Promise<CreditWindowResult> {
    const [admitted, used, bucket] = await this.redis.rpcCreditsTryAdd(
      this.prefix + key,
      nowMs,
      BUCKET_MS,
      BUCKETS,
      credits,
      limit,
    );
    return { admitted: admitted === 1, used, bucket, nextShiftMs: (bucket + 1) * BUCKET_MS };
  }

  async remove(key: string, bucket: number, credits: number): Promise<void> {
    await this.redis.rpcCreditsRemove(this.prefix + key, bucket, credits);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
