import type { Transcript } from '../../providers/transcription/transcription-engine.ts';
import type { TranscriptFormat } from './transcription.inputs.ts';

/* A transcript in each response_format: OpenAI's json, text, srt, vtt and verbose_json, and the original
 * service's json with `duration` and `timestamps`. */

const pad = (value: number, width = 2) => String(value).padStart(width, '0');

function clock(seconds: number, separator: ',' | '.'): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  return `${pad(h)}:${pad(m)}:${pad(s)}${separator}${pad(ms % 1000, 3)}`;
}

/** Segments to show as cues: the transcript's, or the whole text as one cue over the whole audio. */
const cues = (transcript: Transcript, seconds: number) =>
  transcript.segments.length > 0 ? transcript.segments : [{ start: 0, end: seconds, text: transcript.text }];

export function renderTranscript(
  transcript: Transcript,
  format: TranscriptFormat,
  options: { seconds: number; timestamps: boolean; simulated: boolean },
): { contentType: string; body: string } {
  const seconds = Math.round(options.seconds * 1000) / 1000;
  switch (format) {
    case 'text':
      return { contentType: 'text/plain; charset=utf-8', body: transcript.text };
    case 'srt':
      return {
        contentType: 'text/plain; charset=utf-8',
        body: cues(transcript, seconds)
          .map((cue, i) => `${i + 1}\n${clock(cue.start, ',')} --> ${clock(cue.end, ',')}\n${cue.text}\n`)
          .join('\n'),
      };
    case 'vtt':
      return {
        contentType: 'text/vtt; charset=utf-8',
        body: `WEBVTT\n\n${cues(transcript, seconds)
          .map((cue) => `${clock(cue.start, '.')} --> ${clock(cue.end, '.')}\n${cue.text}\n`)
          .join('\n')}`,
      };
    case 'verbose_json':
      return json({
        task: 'transcribe',
        language: transcript.language ?? 'unknown',
        duration: seconds,
        text: transcript.text,
        segments: transcript.segments.map((segment, id) => ({
          id,
          seek: 0,
          start: segment.start,
          end: segment.end,
          text: segment.text,
          tokens: [],
          temperature: 0,
          avg_logprob: 0,
          compression_ratio: 1,
          no_speech_prob: 0,
        })),
        ...(transcript.words && { words: transcript.words }),
        usage: { type: 'duration', seconds: Math.ceil(seconds) },
        ...(options.simulated && { simulated: true }),
      });
    case 'json':
      return json({
        text: transcript.text,
        duration: seconds,
        ...(options.timestamps && {
          timestamps: {
            segment: transcript.segments.map(({ text, start, end }) => ({ text, start, end })),
            ...(transcript.words && { word: transcript.words }),
          },
        }),
        usage: { type: 'duration', seconds: Math.ceil(seconds) },
        ...(options.simulated && { simulated: true }),
      });
  }
}

const json = (body: unknown) => ({ contentType: 'application/json; charset=utf-8', body: JSON.stringify(body) });
