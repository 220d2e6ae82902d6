/** How balance leases are sized, timed and written (leased-holds.ts). */
export interface LeaseOptions {
  /** A new lease aims at this many of the opening call's worst case (a lease that runs dry grows, doubling). */
  readonly callsPerLease: number;
  /**
   * The lease row's expiry, moved forward by the updates (in steps over 10 s, see claimAndLock); the sweeper frees
   * the leases of a dead process.
   */
  readonly ttlMs: number;
  /** A lease unused for this long is given back. */
  readonly idleMs: number;
  /** A lease is renewed this often, so that the charging order and the sharing between processes are revisited. */
  readonly maxAgeMs: number;
  /** How often leases are looked after (idle, age, expiry, draws past their timeout). */
  readonly tickMs: number;
  /**
   * Settled charges wait up to this long before they are written, so that one transaction writes many of them
   * (the caller has its answer already). Reads that need them write them at once.
   */
  readonly writeDelayMs: number;
}

export const DEFAULT_LEASE_OPTIONS: LeaseOptions = {
  callsPerLease: 32,
  ttlMs: 60_000,
  idleMs: 2_000,
  maxAgeMs: 30_000,
  tickMs: 500,
  writeDelayMs: 10,
};
