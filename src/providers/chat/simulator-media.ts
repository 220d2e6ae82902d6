import { probeMedia } from '../../media/media-probe.ts';
import { loadSharp } from '../../media/images/sharp-module.ts';

/*
 * The chat simulator's reading of the media parts of a message (image_url, input_audio, video_url): each decoded
 * just enough to name it — an image's size and format (sharp), a clip's container and length (ffmpeg) — so a
 * reply says deterministically what it was sent, e.g. "1 image 64×64 png, 1 audio clip wav 1.2 s, 1 video mp4
 * 2.0 s". URLs other than data: URLs are not fetched.
 */

type Kind = 'image' | 'audio clip' | 'video';

const DATA_URL = /^data:[^,]*?;base64,/i;

const urlOf = (value: unknown): string | undefined => {
  if (typeof value === 'string') return value;
  const url = (value as { url?: unknown } | null)?.url;
  return typeof url === 'string' ? url : undefined;
};

/** The bytes of a base64 data: URL (undefined for any other URL). */
function dataUrlBytes(url: string | undefined): Buffer | undefined {
  const match = url === undefined ? null : DATA_URL.exec(url);
  return match && url ? Buffer.from(url.slice(match[0].length), 'base64') : undefined;
}

const seconds = (value: number | undefined) => (value === undefined ? '' : ` ${value.toFixed(1)} s`);
/** `audio/mpeg` → mp3, `video/quicktime` → mov, else the subtype. */
function containerOf(contentType: string, fallback: string): string {
  const subtype = contentType.split('/')[1] ?? '';
  const names: Record<string, string> = { mpeg: 'mp3', quicktime: 'mov', 'x-wav': 'wav' };
  return names[subtype] ?? (subtype.replace(/^x-/, '') || fallback);
}

async function describeImage(imageUrl: unknown): Promise<string> {
  const bytes = dataUrlBytes(urlOf(imageUrl));
  if (!bytes) return 'by URL, not fetched';
  const sharp = await loadSharp();
  try {
    const meta = await sharp(bytes).metadata();
    return `${meta.width}×${meta.height} ${meta.format}`;
  } catch {
    return 'unreadable';
  }
}

async function describeClip(bytes: Buffer | undefined, claimed: string): Promise<string> {
  if (!bytes) return 'by URL, not fetched';
  if (bytes.byteLength === 0) return 'empty';
  const probed = await probeMedia(bytes);
  if (!probed.contentType && probed.durationSeconds === undefined) return 'unreadable';
  return `${containerOf(probed.contentType, claimed)}${seconds(probed.durationSeconds)}`;
}

async function describePart(part: unknown): Promise<{ kind: Kind; detail: string } | undefined> {
  if (!part || typeof part !== 'object') return undefined;
  const typed = part as {
    type?: unknown;
    image_url?: unknown;
    input_audio?: { data?: unknown; format?: unknown };
    video_url?: unknown;
  };
  if (typed.type === 'image_url') return { kind: 'image', detail: await describeImage(typed.image_url) };
  if (typed.type === 'input_audio') {
    const data = typed.input_audio?.data;
    const claimed = String(typed.input_audio?.format ?? 'audio');
    const bytes = typeof data === 'string' ? Buffer.from(data, 'base64') : undefined;
    return { kind: 'audio clip', detail: await describeClip(bytes ?? Buffer.alloc(0), claimed) };
  }
  if (typed.type === 'video_url') {
    return { kind: 'video', detail: await describeClip(dataUrlBytes(urlOf(typed.video_url)), 'video') };
  }
  return undefined;
}

/** "1 image 64×64 png, 2 videos (mp4 2.0 s, webm 1.0 s)", or undefined when the content has no media. */
export async function describeMedia(content: unknown): Promise<string | undefined> {
  if (!Array.isArray(content)) return undefined;
  const found = (await Promise.all(content.map(describePart))).filter((item) => item !== undefined);
  if (found.length === 0) return undefined;
  const kinds: Kind[] = ['image', 'audio clip', 'video'];
  return kinds
    .flatMap((kind) => {
      const details = found.filter((item) => item.kind === kind).map((item) => item.detail);
      if (details.length === 0) return [];
      if (details.length === 1) return [`1 ${kind} ${details.join('')}`];
      return [`${details.length} ${kind}s (${details.join(', ')})`];
    })
    .join(', ');
}
