import { useMutation } from '@urql/preact';
import { useState } from 'preact/hooks';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import type { JobFieldsFragment } from '../../gql/graphql.ts';
import { typedErrorOf, type TypedError } from '../../lib/errors.ts';
import { QUEUE_AUDIO, QUEUE_VIDEO } from './job-operations.ts';

export interface JobModel {
  readonly id: string;
  readonly name: string;
  readonly type: string;
}

const DURATIONS = ['5s', '10s'] as const;
const RESOLUTIONS = ['480p', '720p', '1080p'] as const;

/** Queues a video or music job: the body is the REST /video|audio/queue body (the API validates it). */
export function QueueJobForm({
  models,
  onQueued,
}: {
  models: readonly JobModel[];
  onQueued: (job: JobFieldsFragment) => void;
}) {
  const [model, setModel] = useState(models[0]?.id ?? '');
  const [prompt, setPrompt] = useState('');
  const [duration, setDuration] = useState<string>(DURATIONS[0]);
  const [resolution, setResolution] = useState<string>(RESOLUTIONS[0]);
  const [problem, setProblem] = useState<TypedError>();
  const [video, queueVideo] = useMutation(QUEUE_VIDEO);
  const [audio, queueAudio] = useMutation(QUEUE_AUDIO);
  const chosen = models.find((candidate) => candidate.id === model) ?? models[0];
  const isVideo = chosen?.type === 'VIDEO';
  const busy = video.fetching || audio.fetching;

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!chosen) return;
    setProblem(undefined);
    if (isVideo) {
      const result = await queueVideo({ input: { model: chosen.id, prompt, duration, resolution } });
      const answer = result.data?.queueVideo;
      if (answer?.__typename === 'MutationQueueVideoSuccess') onQueued(answer.data);
      else setProblem(typedErrorOf(answer));
    } else {
      const result = await queueAudio({ input: { model: chosen.id, prompt } });
      const answer = result.data?.queueAudio;
      if (answer?.__typename === 'MutationQueueAudioSuccess') onQueued(answer.data);
      else setProblem(typedErrorOf(answer));
    }
  };

  if (models.length === 0) return <p class="muted">No video or music model is offered.</p>;
  return (
    <form class="card form-grid" onSubmit={submit} aria-label="Queue a job">
      <label for="job-model">Model</label>
      <select id="job-model" value={model} onChange={(event) => setModel(event.currentTarget.value)}>
        {models.map((candidate) => (
          <option key={candidate.id} value={candidate.id}>
            {candidate.name} ({candidate.type === 'VIDEO' ? 'video' : 'music'})
          </option>
        ))}
      </select>
      <label for="job-prompt">Prompt</label>
      <textarea id="job-prompt" rows={2} value={prompt} onInput={(event) => setPrompt(event.currentTarget.value)} />
      {isVideo && (
        <>
          <label for="job-duration">Duration</label>
          <select id="job-duration" value={duration} onChange={(event) => setDuration(event.currentTarget.value)}>
            {DURATIONS.map((value) => (
              <option key={value}>{value}</option>
            ))}
          </select>
          <label for="job-resolution">Resolution</label>
          <select id="job-resolution" value={resolution} onChange={(event) => setResolution(event.currentTarget.value)}>
            {RESOLUTIONS.map((value) => (
              <option key={value}>{value}</option>
            ))}
          </select>
        </>
      )}
      <button type="submit" disabled={busy}>
        {busy ? 'Queueing…' : 'Queue job'}
      </button>
      <ErrorNotice error={video.error ?? audio.error ?? problem} />
    </form>
  );
}
