import { createServer, type ServerResponse } from 'node:http';

/**
 * A minimal OpenAI-compatible upstream for the gateway benchmark, run as its own process:
 *   node --import tsx bench/chat-upstream.ts <latencyMs>
 * It answers every POST /chat/completions after a fixed latency with a fixed body (usage included), streams
 * when asked (the first chunk after the latency, then `chunks` more every `chunkIntervalMs`), and prints
 * `ready <port>` once listening. The model `slow-stream` streams 20 chunks one second apart (for the
 * concurrent-streams measurement).
 */
const latencyMs = Number(process.argv[2] ?? 20);
const CONTENT = 'The quick brown fox jumps over the lazy dog. '.repeat(4).trim();
const usage = { prompt_tokens: 24, completion_tokens: 40, total_tokens: 64 };

const completion = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1_795_000_000,
  model: 'bench',
  choices: [{ index: 0, message: { role: 'assistant', content: CONTENT }, finish_reason: 'stop' }],
  usage,
});

const chunk = (delta: object, finish: string | null, extra: object = {}) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_795_000_000, model: 'bench', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;

async function stream(response: ServerResponse, chunks: number, intervalMs: number): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const words = CONTENT.split(' ');
  for (let i = 0; i < chunks && !response.destroyed; i += 1) {
    if (i > 0) await sleep(intervalMs);
    response.write(
      chunk(
        i === 0 ? { role: 'assistant', content: words[i % words.length] } : { content: ` ${words[i % words.length]}` },
        null,
      ),
    );
  }
  response.write(chunk({}, 'stop'));
  response.write(
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_795_000_000, model: 'bench', choices: [], usage })}\n\n`,
  );
  response.end('data: [DONE]\n\n');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const server = createServer((request, response) => {
  const parts: Buffer[] = [];
  request.on('data', (part: Buffer) => parts.push(part));
  request.on('end', () => {
    if (request.method === 'GET' && request.url?.endsWith('/models')) {
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data: [{ id: 'bench', object: 'model' }] }));
      return;
    }
    const body = JSON.parse(Buffer.concat(parts).toString('utf8') || '{}') as { stream?: boolean; model?: string };
    setTimeout(() => {
      if (body.model === 'slow-stream') void stream(response, 20, 1000);
      else if (body.stream) void stream(response, 8, 2);
      else
        response
          .writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(completion) })
          .end(completion);
    }, latencyMs);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`ready ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
