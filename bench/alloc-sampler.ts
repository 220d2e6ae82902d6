import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

/*
 * What a process allocates, dead objects included (V8's sampling heap profiler), between two SIGUSR2 signals:
 * the chat benchmark sends them around its measured run with BENCH_SIGNAL=1.
 *
 *   BENCH_SIGNAL=1 BENCH_LAGOON_NODE_ARGS="--import tsx --import ./bench/alloc-sampler.ts" npm run bench:chat
 *
 * The profile goes to ALLOC_PROFILE (default /tmp/alloc.heapprofile; opens in Chrome DevTools, Memory tab).
 * ALLOC_PROMOTED_ONLY=1 leaves out what the young-generation collector freed: what reached the old generation.
 */

const session = new Session();
session.connect();
session.post('HeapProfiler.enable');
let sampling = false;

process.on('SIGUSR2', () => {
  if (!sampling) {
    sampling = true;
    session.post('HeapProfiler.startSampling', {
      samplingInterval: Number(process.env.ALLOC_INTERVAL ?? 1024),
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: !process.env.ALLOC_PROMOTED_ONLY,
    });
    return;
  }
  sampling = false;
  session.post('HeapProfiler.stopSampling', (error, result) => {
    if (error) return console.error('[alloc-sampler]', error);
    const path = process.env.ALLOC_PROFILE ?? '/tmp/alloc.heapprofile';
    writeFileSync(path, JSON.stringify(result.profile));
    console.error(`[alloc-sampler] written to ${path}`);
  });
});
