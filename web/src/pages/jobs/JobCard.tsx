import { useMutation, useSubscription } from '@urql/preact';
import { useState } from 'preact/hooks';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import type { JobFieldsFragment } from '../../gql/graphql.ts';
import { typedErrorOf, type TypedError } from '../../lib/errors.ts';
import { formatAmount, formatDate } from '../../lib/format.ts';
import { COMPLETE_JOB, JOB_LIVE } from './job-operations.ts';

const FINISHED = new Set(['COMPLETED', 'FAILED']);

/** The finished media, played from its signed URL (or the model's download URL). */
function Player({ job }: { job: JobFieldsFragment }) {
  const url = job.media?.url ?? job.downloadUrl;
  if (!url) return null;
  const isVideo = job.kind === 'VIDEO' || job.media?.contentType.startsWith('video/');
  return isVideo ? (
    <video class="player" controls preload="metadata" src={url} data-testid="job-player" />
  ) : (
    <audio class="player" controls preload="metadata" src={url} data-testid="job-player" />
  );
}

/**
 * One job: live status and progress from `jobUpdated` while it runs (the subscription ends when the job does),
 * the player once COMPLETED, and "Complete and delete" (the media is deleted; REST /<kind>/complete).
 */
export function JobCard({ job: initial, onGone }: { job: JobFieldsFragment; onGone: (id: string) => void }) {
  const [live] = useSubscription({
    query: JOB_LIVE,
    variables: { id: initial.id },
    pause: FINISHED.has(initial.status),
  });
  const [completion, complete] = useMutation(COMPLETE_JOB);
  const [problem, setProblem] = useState<TypedError>();
  const job = live.data?.jobUpdated ?? initial;

  const remove = async () => {
    setProblem(undefined);
    const result = await complete({ id: job.id });
    const answer = result.data?.completeJob;
    if (answer?.__typename === 'MutationCompleteJobSuccess') onGone(job.id);
    else setProblem(typedErrorOf(answer));
  };

  return (
    <li class="card job" data-testid="job" data-job-id={job.id} data-status={job.status}>
      <p>
        <strong>{job.kind === 'VIDEO' ? 'Video' : 'Music'}</strong> · <code>{job.model}</code> ·{' '}
        <span data-testid="job-status">{job.status}</span>
      </p>
      {!FINISHED.has(job.status) && (
        <p>
          <progress max={100} value={job.progress} aria-label={`Progress of job ${job.id}`} /> {job.progress}%
        </p>
      )}
      {job.error && <p class="error">{job.error}</p>}
      <p class="muted">
        Queued {formatDate(job.createdAt)} · quote {formatAmount(job.quote, 'USD')}
        {job.finishedAt && ` · finished ${formatDate(job.finishedAt)}`}
      </p>
      {job.status === 'COMPLETED' && <Player job={job} />}
      <p>
        <button type="button" onClick={remove} disabled={completion.fetching}>
          Complete and delete
        </button>
      </p>
      <ErrorNotice error={live.error ?? completion.error ?? problem} />
    </li>
  );
}
