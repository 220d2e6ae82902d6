/*
 * The pixel size of a video job from its resolution and aspect ratio. A resolution names the short side (480p is
 * 480 lines whether the clip is 16:9 or 9:16); the long side is the short side times the ratio, rounded to an even
 * number (H.264 with 4:2:0 chroma needs even sides):
 *
 *   resolution   short side     16:9          9:16          1:1         21:9
 *   256p         256            456×256       256×456       256×256     598×256
 *   360p         360            640×360       360×640       360×360     840×360
 *   480p         480            854×480       480×854       480×480     1120×480
 *   540p / 580p  540 / 580      960×540 / 1032×580 …
 *   720p         720            1280×720      720×1280      720×720     1680×720
 *   1080p, true_1080p  1080     1920×1080     1080×1920     1080×1080   2520×1080
 *   1440p        1440           2560×1440     …
 *   2160p, 4k    2160           3840×2160     …
 *
 * `2x` / `4x` (and the upscale model's `upscale_factor`) multiply the input video's size, which is only known once
 * it is fetched and probed: until then the size is UPSCALE_BASE_LINES at the aspect ratio, times the factor.
 */

export const SHORT_SIDE: Readonly<Record<string, number>> = {
  '256p': 256,
  '360p': 360,
  '480p': 480,
  '540p': 540,
  '580p': 580,
  '720p': 720,
  '1080p': 1080,
  true_1080p: 1080,
  '1440p': 1440,
  '2160p': 2160,
  '4k': 2160,
};

/** The short side assumed for an upscale before the input video is probed. */
export const UPSCALE_BASE_LINES = 360;
export const DEFAULT_VIDEO_LINES = 720;

export function parseAspectRatio(ratio: string): { w: number; h: number } | undefined {
  const match = /^(\d{1,3}):(\d{1,3})$/.exec(ratio);
  if (!match) return undefined;
  const [w, h] = [Number(match[1]), Number(match[2])];
  return w > 0 && h > 0 ? { w, h } : undefined;
}

const even = (value: number) => Math.max(2, Math.round(value / 2) * 2);

/** Width and height of `lines` (the short side) at an aspect ratio ("16:9"; anything unreadable is 16:9). */
export function sizeOf(lines: number, aspectRatio: string | undefined): { width: number; height: number } {
  const ratio = (aspectRatio && parseAspectRatio(aspectRatio)) || { w: 16, h: 9 };
  if (ratio.w >= ratio.h) return { width: even((lines * ratio.w) / ratio.h), height: even(lines) };
  return { width: even(lines), height: even((lines * ratio.h) / ratio.w) };
}

/** The size of a resolution tier, or of an upscale by `factor` (2x, 4x) of a not-yet-probed input. */
export function videoSize(
  resolution: string | undefined,
  aspectRatio: string | undefined,
  upscaleFactor?: number,
): { width: number; height: number } {
  const multiple = upscaleFactor ?? (resolution === '2x' ? 2 : resolution === '4x' ? 4 : undefined);
  if (multiple !== undefined) return sizeOf(UPSCALE_BASE_LINES * multiple, aspectRatio);
  return sizeOf((resolution && SHORT_SIDE[resolution]) || DEFAULT_VIDEO_LINES, aspectRatio);
}

/** Seconds of a `duration` value: "5s" is 5; "Auto" and "1 gen" (the model decides) count as `fallback`. */
export function durationSecondsOf(duration: string, fallback = 5): number {
  const match = /^(\d+)s$/.exec(duration);
  return match ? Number(match[1]) : fallback;
}
