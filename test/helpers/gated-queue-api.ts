import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { writeFile } from 'node:fs/promises';
import { defaultOperatorConfig } from '../../src/operator-config/default-config.ts';
import { listenLocally } from './local-server.ts';

/*
 * A fal.ai-style queue API (docs/job-engines.md) whose one job stays in the phase the test sets, for tests with
 * separate worker processes that cannot be gated in-process: `waiting` (IN_QUEUE), `running` (IN_PROGRESS, progress
 * 40), `done` (COMPLETED, the result names a small MP4 it serves).
 */

export type QueuePhase = 'waiting' | 'running' | 'done';

const MP4 = Buffer.from('\u0000\u0000\u0000\u0018ftypmp42 a clip from the queue API');

/** The video model both the API and the worker processes serve through this queue API. */
export const GATED_MODEL = 'lagoon-gated-video';

export function gatedQueueApi() {
  const state = { phase: 'waiting' as QueuePhase, submits: 0 };
  let base = '';
  const json = (res: ServerResponse, body: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    for await (const _chunk of req); // drain the body
    const url = req.url ?? '';
    if (req.method === 'POST') {
      state.submits += 1;
      return json(res, { request_id: `r${state.submits}` });
    }
    if (url.endsWith('/status'))
      return json(
        res,
        state.phase === 'waiting'
          ? { status: 'IN_QUEUE' }
          : state.phase === 'running'
            ? { status: 'IN_PROGRESS', progress: 40 }
            : { status: 'COMPLETED' },
      );
    if (url.startsWith('/files/')) {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      return res.end(MP4);
    }
    return json(res, { video: { url: `${base}/files/clip.mp4` } });
  };
  const server = createServer((req, res) => void handle(req, res));
  return {
    state,
    /** Listens on a loopback port and writes the operator file (LAGOON_CONFIG) that routes GATED_MODEL here. */
    async start(configPath: string) {
      const listening = await listenLocally(server);
      base = listening.url;
      await writeFile(configPath, JSON.stringify(operatorConfig(listening.url)));
      return listening;
    },
  };
}

/** The simulator's video model (prices, constraints), made by the queue API at `baseUrl`. */
function operatorConfig(baseUrl: string) {
  const simulatorVideo = defaultOperatorConfig.models.find((model) => model.id === 'lagoon-sim-video')!;
  const { traits: _traits, ...model } = simulatorVideo as typeof simulatorVideo & { traits?: unknown };
  return {
    providers: [
      {
        id: 'gated-queue',
        type: 'queue',
        baseUrl,
        apiKey: 'upstream-key',
        timeoutMs: 5_000,
        options: { pollIntervalMs: 50, progressField: 'progress' },
      },
    ],
    models: [{ ...model, id: GATED_MODEL, provider: 'gated-queue' }],
  };
}
