import type { TestApp } from './app.ts';
import { createAccountWithKey } from './services.ts';

/** A funded INFERENCE key and readers for what its account was charged. */
export async function fundedAccount(t: TestApp, usd = '1') {
  const { secret, accountId } = await createAccountWithKey(t.app.services, {
    credit: usd === '0' ? {} : { USD: usd },
    type: 'INFERENCE',
  });
  const usd$ = async () => (await t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD')!;
  const usage = () =>
    t.app.database.db
      .selectFrom('usage_entries')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .execute();
  return { secret, accountId, balance: usd$, usage };
}

/**
 * A multipart/form-data body of `fileBytes` bytes generated on demand (never held in memory), counting how much
 * the server pulled, to prove an oversized upload is refused while it streams.
 */
export function streamingMultipart(fileBytes: number, field = 'file', extra: Record<string, string> = {}) {
  const boundary = '----lagoon-test-boundary-7d1f';
  const encoder = new TextEncoder();
  const fields = Object.entries(extra)
    .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
    .join('');
  const head = encoder.encode(
    `${fields}--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`);
  const chunk = new Uint8Array(64 * 1024).fill(0x41);
  const stats = { pulled: 0, cancelled: false };
  let remaining = fileBytes;
  let stage: 'head' | 'file' | 'tail' | 'done' = 'head';
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      let next: Uint8Array;
      if (stage === 'head') {
        next = head;
        stage = 'file';
      } else if (stage === 'file') {
        next = chunk.subarray(0, Math.min(chunk.length, remaining));
        remaining -= next.length;
        if (remaining === 0) stage = 'tail';
      } else if (stage === 'tail') {
        next = tail;
        stage = 'done';
      } else {
        controller.close();
        return;
      }
      stats.pulled += next.length;
      controller.enqueue(next.slice());
    },
    cancel() {
      stats.cancelled = true;
    },
  });
  return {
    body,
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: head.length + fileBytes + tail.length,
    stats,
  };
}

/** A Request with a streamed body (fetch needs `duplex: 'half'` for those). */
export function streamingRequest(
  url: string,
  init: { headers: Record<string, string>; body: ReadableStream<Uint8Array> },
): Request {
  return new Request(url, { method: 'POST', headers: init.headers, body: init.body, duplex: 'half' } as RequestInit & {
    duplex: 'half';
  });
}
