import { describe, expect, it } from 'vitest';
import type { VideoJobRequest } from '../../src/providers/jobs/job-engine.ts';
import { upstreamBody } from '../../src/providers/jobs/queue-api.fields.ts';

const bytes = (text: string) => Buffer.from(text);
const b64 = (text: string) => Buffer.from(text).toString('base64');

describe('queue API request body', () => {
  it('forwards a video job’s fetched media as data URLs under the request’s field names', () => {
    const request: VideoJobRequest = {
      kind: 'video',
      prompt: '@Element1 walks into @Image1',
      durationSeconds: 5,
      width: 1280,
      height: 720,
      audio: true,
      inputs: [
        { role: 'image', bytes: bytes('first'), contentType: 'image/png' },
        { role: 'reference_image', bytes: bytes('ref1'), contentType: 'image/jpeg' },
        { role: 'reference_image', bytes: bytes('ref2'), contentType: 'image/webp' },
        { role: 'element_frontal_image', element: 1, bytes: bytes('face'), contentType: 'image/png' },
        { role: 'element_reference_image', element: 1, bytes: bytes('side'), contentType: 'image/png' },
        { role: 'scene_image', bytes: bytes('scene'), contentType: 'image/png' },
        { role: 'audio', bytes: bytes('tune'), contentType: 'audio/mpeg', durationSeconds: 3 },
      ],
    };
    expect(upstreamBody(request)).toEqual({
      prompt: '@Element1 walks into @Image1',
      duration: 5,
      width: 1280,
      height: 720,
      generate_audio: true,
      image_url: `data:image/png;base64,${b64('first')}`,
      reference_image_urls: [`data:image/jpeg;base64,${b64('ref1')}`, `data:image/webp;base64,${b64('ref2')}`],
      elements: [
        {
          frontal_image_url: `data:image/png;base64,${b64('face')}`,
          reference_image_urls: [`data:image/png;base64,${b64('side')}`],
        },
      ],
      scene_image_urls: [`data:image/png;base64,${b64('scene')}`],
      audio_url: `data:audio/mpeg;base64,${b64('tune')}`,
    });
  });

  it('sends a text-to-video job without media fields', () => {
    const body = upstreamBody({
      kind: 'video',
      prompt: 'a lagoon',
      durationSeconds: 5,
      width: 854,
      height: 480,
      audio: false,
      inputs: [],
    });
    expect(Object.keys(body).sort()).toEqual(['duration', 'generate_audio', 'height', 'prompt', 'width']);
  });
});
