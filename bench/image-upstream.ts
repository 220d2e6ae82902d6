import { createServer } from 'node:http';
import { benchPng } from './image-profile.ts';

/**
 * A minimal OpenAI-compatible image upstream for the media benchmark, run as its own process:
 *   node --import tsx bench/image-upstream.ts <latencyMs>
 * Every POST …/images/generations is answered after a fixed latency with the same 1024×1024 PNG as `b64_json`
 * (`n` copies), made once at start; `ready <port> <png bytes>` is printed once listening. The picture is a smooth
 * gradient with fine noise, so it compresses about as badly as a real generated picture (about 2 MB as PNG), and the
 * benchmark pays for realistic decode and encode work.
 */
const latencyMs = Number(process.argv[2] ?? 0);
const png = await benchPng();
const b64 = png.toString('base64');

const server = createServer((request, response) => {
  const parts: Buffer[] = [];
  request.on('data', (part: Buffer) => parts.push(part));
  request.on('end', () => {
    if (request.method === 'GET' && request.url?.endsWith('/models')) {
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data: [{ id: 'bench-image', object: 'model' }] }));
      return;
    }
    const n = copies(Buffer.concat(parts).toString('utf8'));
    const body = JSON.stringify({ created: 1_795_000_000, data: Array.from({ length: n }, () => ({ b64_json: b64 })) });
    setTimeout(() => {
      response
        .writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
        .end(body);
    }, latencyMs);
  });
});
/** `n` of the request, 1–4 (1 when absent or unreadable). */
function copies(text: string): number {
  try {
    const n = Number((JSON.parse(text) as { n?: number }).n ?? 1);
    return Number.isInteger(n) ? Math.min(4, Math.max(1, n)) : 1;
  } catch {
    return 1;
  }
}

server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`ready ${typeof address === 'object' && address ? address.port : 0} ${png.byteLength}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
