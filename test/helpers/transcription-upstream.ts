import { createServer } from 'node:http';
import busboy from 'busboy';
import { listenLocally } from './local-server.ts';

/*
 * A fake OpenAI-compatible transcription server (faster-whisper-server / speaches, whisper.cpp server) on
 * 127.0.0.1:<port 0>: POST {url}/audio/transcriptions (multipart) answers a fixed verbose_json transcript, with
 * words when `timestamp_granularities[]` asks for them. Each request's fields (all values) and file size are
 * recorded; `queue` answers the next requests with an HTTP status instead. `url` ends in `/v1`.
 */

export const FAKE_TRANSCRIPT = 'Hello from the fake whisper server.';

export interface FakeTranscriptionRequest {
  readonly fields: Record<string, string[]>;
  readonly fileBytes: number;
  readonly filename: string | undefined;
}

export interface FakeTranscriptionUpstream {
  readonly url: string;
  readonly requests: FakeTranscriptionRequest[];
  queue(...statuses: number[]): void;
  close(): Promise<void>;
}

export async function startTranscriptionUpstream(): Promise<FakeTranscriptionUpstream> {
  const requests: FakeTranscriptionRequest[] = [];
  const queued: number[] = [];
  const server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/audio/transcriptions') {
      res.writeHead(404).end();
      return;
    }
    const fields: Record<string, string[]> = {};
    let fileBytes = 0;
    let filename: string | undefined;
    const parser = busboy({ headers: req.headers });
    parser.on('field', (name, value) => (fields[name] ??= []).push(value));
    parser.on('file', (_name, stream, info) => {
      filename = info.filename;
      stream.on('data', (chunk: Buffer) => (fileBytes += chunk.length));
    });
    parser.on('close', () => {
      requests.push({ fields, fileBytes, filename });
      const status = queued.shift();
      if (status !== undefined) {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `fake failure ${status}` } }));
        return;
      }
      const words = fields['timestamp_granularities[]']?.includes('word');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          task: 'transcribe',
          language: fields.language?.[0] ?? 'en',
          duration: 1.5,
          text: ` ${FAKE_TRANSCRIPT}`,
          segments: [
            { id: 0, start: 0, end: 0.8, text: ' Hello from the' },
            { id: 1, start: 0.8, end: 1.5, text: ' fake whisper server.' },
          ],
          ...(words && {
            words: FAKE_TRANSCRIPT.split(' ').map((word, i) => ({ word, start: i * 0.25, end: i * 0.25 + 0.2 })),
          }),
        }),
      );
    });
    req.pipe(parser);
  });
  const listening = await listenLocally(server);
  return {
    url: `${listening.url}/v1`,
    requests,
    queue: (...statuses) => queued.push(...statuses),
    close: listening.close,
  };
}
