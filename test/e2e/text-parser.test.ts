import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseKind } from '../helpers/db.ts';
import { firstOutOfOrder, makePdf, makePptx, words } from '../helpers/documents.ts';
import { runCliProcess, serverStorage, startServer, type ServerProcess } from '../helpers/server-process.ts';
import { scaled } from '../helpers/time-scale.ts';

const ADMIN = 'e2e-text-parser-admin-key';
const MB = 1024 * 1024;

/** Resident memory of a process in MB (Linux /proc). */
function rssMb(pid: number): number {
  const line =
    readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:')) ?? '0';
  return Number(/(\d+)/.exec(line)?.[1] ?? 0) / 1024;
}

/**
 * Sends `totalBytes` of multipart upload in chunked encoding (no Content-Length), as fast as the socket takes
 * it, and stops writing as soon as the response arrives. Resolves with the status and how much was sent.
 */
function chunkedUpload(
  url: string,
  path: string,
  totalBytes: number,
): Promise<{ status: number; body: string; sent: number; ms: number }> {
  const boundary = 'lagoon-e2e-boundary';
  const started = performance.now();
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = request(
      new URL(path, url),
      {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      },
      (res) => {
        answered = true;
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, body, sent, ms: performance.now() - started });
        });
      },
    );
    req.on('error', (error) => (answered ? undefined : reject(error)));
    req.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    const chunk = Buffer.alloc(256 * 1024, 0x42);
    const writeMore = () => {
      while (!answered && sent < totalBytes) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', writeMore);
      }
      if (!answered) req.end(`\r\n--${boundary}--\r\n`);
    };
    writeMore();
  });
}

describe(`text parser over HTTP on a real server process (${testDatabaseKind})`, () => {
  let server: ServerProcess;
  let removeStorage: () => Promise<void>;

  beforeAll(async () => {
    const storage = await serverStorage('lagoon-e2e-parser-');
    removeStorage = storage.remove;
    const env = { ...storage.env, LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN };
    server = await startServer(env);
    const credit = await runCliProcess(
      ['accounts', 'credit', '--key', ADMIN, '--currency', 'USD', '--amount', '1', '--json'],
      env,
    );
    expect(credit.code, credit.stderr).toBe(0);
  }, scaled(90_000));

  afterAll(async () => {
    if (server.child.exitCode === null) await server.stop();
    await removeStorage();
  });

  it('should parse documents in its worker threads under the production runtime', async () => {
    for (const [file, name, expected] of [
      [await makePdf([['e2eword1 e2eword2'], ['e2eword3']]), 'a.pdf', words('e2e', 3)],
      [await makePptx([{ title: 'e2eword1', body: 'e2eword2', notes: 'e2eword3' }]), 'b.pptx', words('e2e', 3)],
    ] as const) {
      const form = new FormData();
      form.append('file', new Blob([file.slice()]), name);
      const response = await fetch(`${server.url}/api/v1/augment/text-parser`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}` },
        body: form,
      });
      const body = (await response.json()) as { text: string; tokens: number };
      expect(response.status, JSON.stringify(body)).toBe(200);
      expect(firstOutOfOrder(body.text, expected)).toBeUndefined();
      expect(response.headers.get('x-balance-usd')).toMatch(/^0\.9/);
    }
  });

  it('should answer chunked oversized uploads with 413 while they stream, with memory staying flat', async () => {
    const pid = server.child.pid!;
    const before = rssMb(pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 10);
    try {
      // Node's default agent keeps connections alive: each refusal must leave the next request answerable.
      for (const path of ['/api/v1/augment/text-parser', '/graphql']) {
        const result = await chunkedUpload(server.url, path, 26 * MB);
        expect(result.status, result.body).toBe(413);
        expect(JSON.stringify(JSON.parse(result.body))).toContain('PAYLOAD_TOO_LARGE');
        expect(result.ms).toBeLessThan(scaled(10_000));
        // Of a 256 MB upload the server reads the limit, then drops at most 64 MB more while answering, then stops.
        const huge = await chunkedUpload(server.url, path, 256 * MB);
        expect(huge.status, huge.body).toBe(413);
        expect(huge.sent).toBeLessThan(26 * MB + 64 * MB + 24 * MB);
      }
    } finally {
      clearInterval(sampler);
    }
    // 564 MB were offered; the server never held more than about one 25 MB upload (plus GC slack) at a time.
    expect(peak - before).toBeLessThan(200);
  });
});
