import type { AuthContext } from '../auth/auth-context.ts';
import type { Reservation, SettledCharge, Usage } from '../billing/billing.types.ts';
import { formatNano, type Currency, type Nano } from '../billing/money.ts';

/**
 * What one call's log line says beyond its route and status (docs/operations.md, Logs): who called, and what the
 * settlement of its paid call charged. Filled while the call runs: by the front door (caller, GraphQL operation)
 * and by BillingService.settle (model, units, cost, upstream), which finds it by the reservation's request id.
 * Never a secret, a header or a prompt.
 */
export interface CallRecord {
  accountId?: string;
  keyId?: string;
  /** The GraphQL operation's name (REST calls are named by their route). */
  operation?: string;
  model?: string;
  upstream?: string;
  /** The units of its usage lines (tokens, images, characters…), summed. */
  units?: number;
  costNano?: Nano;
  currency?: Currency;
}

/** The records of the calls running in this process, by request id. */
export class CallLog {
  private readonly running = new Map<string, CallRecord>();

  /** A record for a call; a second call under the same (caller-given) request id gets one that no settlement finds. */
  begin(requestId: string): CallRecord {
    const record: CallRecord = {};
    if (!this.running.has(requestId)) this.running.set(requestId, record);
    return record;
  }

  end(requestId: string, record: CallRecord): void {
    if (this.running.get(requestId) === record) this.running.delete(requestId);
  }

  /** A paid call of a running request settled (a job settled later by a worker has none: nothing is recorded). */
  settled(reservation: Reservation, usage: Usage, charge: SettledCharge): void {
    const record = this.running.get(reservation.requestId);
    if (!record) return;
    record.accountId ??= reservation.accountId;
    if (reservation.apiKeyId) record.keyId ??= reservation.apiKeyId;
    if (usage.modelId !== undefined) record.model = usage.modelId;
    if (usage.providerId !== undefined) record.upstream = usage.providerId;
    let units = record.units ?? 0;
    for (const line of usage.lines) units += Number(line.units);
    record.units = units;
    record.costNano = (record.costNano ?? 0n) + charge.charged;
    record.currency = charge.currency;
  }
}

/** The caller's account and key ids on a record (an operator or anonymous caller has none). */
export function recordCaller(record: CallRecord, auth: AuthContext): void {
  if (auth.kind === 'apiKey') {
    record.accountId = auth.accountId;
    record.keyId = auth.apiKey.id;
  } else if (auth.kind === 'wallet') record.accountId = auth.accountId;
}

/** The record's fields of the log line: the cost as a decimal string of its currency (USD: dollars). */
export function callFields(record: CallRecord): Record<string, string | number | undefined> {
  return {
    accountId: record.accountId,
    keyId: record.keyId,
    operation: record.operation,
    model: record.model,
    upstream: record.upstream,
    units: record.units,
    cost: record.costNano === undefined ? undefined : formatNano(record.costNano),
    currency: record.currency,
  };
}
