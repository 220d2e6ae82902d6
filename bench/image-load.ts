import { Pool } from 'undici';

/**
 * Image load for bench/image-media.ts's chat part, in a process of its own so that reading the pictures does not
 * delay the chat load generator's own event loop (which would count against Lagoon):
 *   node --import tsx bench/image-load.ts <origin> <key> <workers> <body>
 * Runs <workers> back-to-back POST /api/v1/image/generate until SIGTERM, each answer read and dropped, then prints
 * `done <generated> <failed>`. Prints `ready` once its first generation has been answered.
 */
const [origin = '', key = '', workerCount = '8', body = '{}'] = process.argv.slice(2);
const pool = new Pool(origin, { connections: Number(workerCount), keepAliveTimeout: 60_000 });
let running = true;
let generated = 0;
let failed = 0;
let announced = false;

/** Counts a failed generation; the first one's reason goes to stderr, so a run that fails throughout says why. */
function fail(reason: string): void {
  if (failed === 0) process.stderr.write(`image load: the first failed generation: ${reason}\n`);
  failed += 1;
}

async function generate(): Promise<void> {
  try {
    const response = await pool.request({
      method: 'POST',
      path: '/api/v1/image/generate',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body,
    });
    if (response.statusCode === 200) {
      await response.body.dump({ limit: Number.POSITIVE_INFINITY });
      generated += 1;
    } else {
      fail(`HTTP ${response.statusCode} ${(await response.body.text()).slice(0, 300)}`);
    }
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
  if (!announced) {
    announced = true;
    process.stdout.write('ready\n');
  }
}

const workers = Array.from({ length: Number(workerCount) }, async () => {
  while (running) await generate();
});
process.on('SIGTERM', () => {
  running = false;
  void Promise.all(workers).then(async () => {
    process.stdout.write(`done ${generated} ${failed}\n`);
    await pool.close();
    process.exit(0);
  });
});
