/*
 * What a streamed chat cost: the stream's chunks carry tokens, not money, so the charge is read from the account's
 * usage once it settles (ADMIN keys; other keys see the tokens only). Entries of the answering model since the
 * call began; another call to that model at the same moment would be counted too.
 */
import type { Client } from '@urql/core';
import { sumDecimals } from '../../lib/format.ts';
import { PLAYGROUND_CHARGES } from './operations.ts';

export interface Charge {
  readonly amount: string;
  readonly currency: string;
}

const ATTEMPTS = 20;
const INTERVAL_MS = 250;

export async function chargeSince(client: Client, modelId: string, startDate: string): Promise<Charge | undefined> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const result = await client
      .query(PLAYGROUND_CHARGES, { filter: { modelId, startDate } }, { requestPolicy: 'network-only' })
      .toPromise();
    if (result.error) throw result.error;
    const entries = result.data?.usage.edges.map((edge) => edge.node) ?? [];
    if (entries.length > 0) {
      const total = sumDecimals(entries.map((entry) => entry.amount));
      return { amount: total.replace(/^-/, ''), currency: entries[0]!.currency };
    }
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS));
  }
  return undefined;
}
