import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';
import ESpeakNg from 'espeak-ng';
import { lowerThisThreadPriority } from '../../thread-priority.ts';

/*
 * An eSpeak NG thread (src/providers/speech/espeak-pool.ts): synthesises one sentence per message and replies with
 * its PCM. The WASM build is a command-line program, so each call runs it once, with the text in a file of its
 * in-memory file system (never on the command line, where a leading "-" would read as an option). Its WebAssembly
 * (18 MB, most of it voice data) is read and compiled once per thread, and each run only instantiates it: compiling
 * it for every sentence had cost ~0.4 s of CPU for a 78-character one, ~0.25 s now (`npm run bench:speech`).
 */
if (!parentPort) throw new Error('espeak-worker.ts runs only as a worker thread');
const port = parentPort;
// Synthesis is background work: requests on the event loop go first on a busy core (src/thread-priority.ts).
lowerThisThreadPriority();

export interface EspeakJob {
  readonly id: number;
  readonly text: string;
  /** An eSpeak voice, e.g. `en-us+f3`. */
  readonly voice: string;
  /** Words per minute, 80–450. */
  readonly rate: number;
  /** 0–99 (50 is the voice's own). */
  readonly pitch: number;
}

export type EspeakReply =
  | { readonly id: number; readonly ok: true; readonly pcm: Uint8Array }
  | { readonly id: number; readonly ok: false; readonly message: string };

interface EspeakModule {
  FS: { writeFile(path: string, data: string): void; readFile(path: string): Uint8Array };
}

/** The samples of a RIFF/WAVE file (its `data` chunk). */
function pcmOf(wav: Uint8Array): Uint8Array {
  const view = new DataView(wav.buffer, wav.byteOffset, wav.byteLength);
  for (let at = 12; at + 8 <= wav.byteLength;) {
    const id = String.fromCharCode(wav[at]!, wav[at + 1]!, wav[at + 2]!, wav[at + 3]!);
    const size = view.getUint32(at + 4, true);
    if (id === 'data') return wav.subarray(at + 8, Math.min(wav.byteLength, at + 8 + size));
    at += 8 + size + (size % 2);
  }
  return wav.subarray(Math.min(44, wav.byteLength));
}

/** The package's WebAssembly, beside its JavaScript (dist/espeak-ng.js). */
const ENGINE_FILE = createRequire(import.meta.url)
  .resolve('espeak-ng')
  .replace(/\.js$/, '.wasm');
let compiled: Promise<WebAssembly.Module> | undefined;

/** This thread's compiled engine (a failed read or compile is tried again on the next sentence: see synthesize). */
const compiledEngine = (): Promise<WebAssembly.Module> =>
  (compiled ??= readFile(ENGINE_FILE).then((bytes) => WebAssembly.compile(bytes)));

async function synthesize(job: EspeakJob): Promise<Uint8Array> {
  const errors: string[] = [];
  const engine = await compiledEngine().catch((error: unknown) => {
    compiled = undefined;
    throw new Error(`eSpeak NG failed to load: ${error instanceof Error ? error.message : String(error)}`);
  });
  const module = (await ESpeakNg({
    arguments: [
      '-b',
      '1',
      '-v',
      job.voice,
      '-s',
      String(job.rate),
      '-p',
      String(job.pitch),
      '-w',
      '/out.wav',
      '-f',
      '/in.txt',
    ],
    // Emscripten's hook for a module compiled elsewhere: a new instance (fresh memory and file system) per run.
    instantiateWasm: (imports: WebAssembly.Imports, receive: (instance: WebAssembly.Instance) => unknown) =>
      receive(new WebAssembly.Instance(engine, imports)),
    preRun: [(m: EspeakModule) => m.FS.writeFile('/in.txt', job.text)],
    print: () => undefined,
    printErr: (line: string) => {
      if (!line.startsWith('program exited')) errors.push(line);
    },
  }).catch((error: unknown) => {
    throw new Error(`eSpeak NG failed: ${error instanceof Error ? error.message : String(error)}`);
  })) as EspeakModule;
  try {
    return pcmOf(module.FS.readFile('/out.wav')).slice();
  } catch {
    throw new Error(`eSpeak NG wrote no audio${errors.length > 0 ? `: ${errors.join('; ').slice(0, 200)}` : ''}`);
  }
}

port.on('message', (job: EspeakJob) => {
  synthesize(job).then(
    (pcm) => port.postMessage({ id: job.id, ok: true, pcm } satisfies EspeakReply, [pcm.buffer as ArrayBuffer]),
    (error: unknown) =>
      port.postMessage({
        id: job.id,
        ok: false,
        message: error instanceof Error ? error.message : String(error),
      } satisfies EspeakReply),
  );
});
