import { Agent, request } from 'node:http';
import { promisify } from 'node:util';
import { gunzip, inflate } from 'node:zlib';

/*
 * A request over node:http for the tests that send thousands (the fuzz suites): Node 20's fetch (undici) costs some
 * 1 ms of CPU a request on top, a third of test/rest/fuzz.test.ts's CPU. Sent as fetch sends it: its default accept
 * and accept-encoding unless `headers` says otherwise, a FormData body encoded by Request, the answer decompressed.
 */

const agent = new Agent({ keepAlive: true });
const decoders: Record<string, (body: Buffer) => Promise<Buffer>> = {
  gzip: promisify(gunzip),
  deflate: promisify(inflate),
};

export interface PlainResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
}

export async function send(
  url: string,
  init: { method: string; headers?: Record<string, string>; body?: string | FormData | undefined },
): Promise<PlainResponse> {
  const headers: Record<string, string> = { accept: '*/*', 'accept-encoding': 'gzip, deflate', ...init.headers };
  let body: Buffer | undefined;
  if (typeof init.body === 'string') body = Buffer.from(init.body);
  else if (init.body) {
    const encoded = new Request(url, { method: 'POST', body: init.body });
    headers['content-type'] = encoded.headers.get('content-type') ?? '';
    body = Buffer.from(await encoded.arrayBuffer());
  }
  if (body) headers['content-length'] = String(body.length);
  const { status, responseHeaders, raw } = await new Promise<{
    status: number;
    responseHeaders: PlainResponse['headers'];
    raw: Buffer;
  }>((resolve, reject) => {
    const outgoing = request(url, { method: init.method, headers, agent }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('error', reject);
      incoming.on('end', () =>
        resolve({ status: incoming.statusCode ?? 0, responseHeaders: incoming.headers, raw: Buffer.concat(chunks) }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
  const decode = decoders[String(responseHeaders['content-encoding'] ?? '')];
  return { status, headers: responseHeaders, text: (decode ? await decode(raw) : raw).toString() };
}
