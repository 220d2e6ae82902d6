import { createServer, type IncomingHttpHeaders } from 'node:http';
import { listenLocally } from './local-server.ts';

/** What a webhook receiver does with the nth request (from 1) to a path: fail with 500, never answer, or accept. */
export type ReceiverAnswer = 'fail' | 'hang' | 'accept';

export interface ReceivedHook {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** performance.now() when the request arrived. */
  readonly at: number;
}

/** A local HTTP receiver (node:http) recording every request; `answer` decides each one's fate. */
export async function startWebhookReceiver(answer: (nth: number, path: string) => ReceiverAnswer = () => 'accept') {
  const received: ReceivedHook[] = [];
  const counts = new Map<string, number>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      const nth = (counts.get(path) ?? 0) + 1;
      counts.set(path, nth);
      received.push({
        path,
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: performance.now(),
      });
      const fate = answer(nth, path);
      if (fate === 'hang') return; // the sender's timeout ends it
      response.writeHead(fate === 'fail' ? 500 : 204).end();
    });
  });
  const listening = await listenLocally(server);
  return {
    url: listening.url,
    received,
    /** The requests to one path. */
    at: (path: string) => received.filter((hook) => hook.path === path),
    close: listening.close,
  };
}
