/** The espeak-ng package (Emscripten build of the eSpeak NG command line) ships no types. */
declare module 'espeak-ng' {
  const factory: (options: Record<string, unknown>) => Promise<unknown>;
  export default factory;
}
