import type Sharp from 'sharp';

/** sharp's default export: the constructor, with the process-wide settings (cache, concurrency) on it. */
export type SharpModule = typeof Sharp;

/*
 * sharp (libvips, a native addon) costs about 0.3 s of CPU to load, which a start that serves no picture need not
 * pay (docs/performance.md "Start-up"): it loads with the first picture. libvips' settings are process-wide; the ones
 * asked for before it loaded are applied as it loads.
 */
let loading: Promise<SharpModule> | undefined;
let settings: { readonly concurrency: number } | undefined;

/** sharp, loaded on first use (once; every later call answers the same module). */
export function loadSharp(): Promise<SharpModule> {
  loading ??= import('sharp').then(({ default: sharp }) => {
    if (settings) apply(sharp, settings.concurrency);
    return sharp;
  });
  return loading;
}

/** Operation cache off and `concurrency` libvips threads per picture: now if sharp is loaded, else as it loads. */
export function configureSharp(concurrency: number): void {
  settings = { concurrency };
  void loading?.then((sharp) => apply(sharp, concurrency));
}

function apply(sharp: SharpModule, concurrency: number): void {
  sharp.cache(false);
  sharp.concurrency(concurrency);
}
