import { useQuery } from '@urql/preact';
import { useMemo, useState } from 'preact/hooks';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import type { JobFieldsFragment } from '../gql/graphql.ts';
import { JobCard } from './jobs/JobCard.tsx';
import { JOBS_PAGE } from './jobs/job-operations.ts';
import { QueueJobForm } from './jobs/QueueJobForm.tsx';
import '../components/forms.css';
import './jobs/jobs.css';

/** Queued music and video: queue one, watch each live until it finishes, play the result, complete it. */
export function Jobs() {
  const [{ data, error, fetching }, refetch] = useQuery({ query: JOBS_PAGE });
  // Jobs queued in this visit come first until the list is fetched again; completed ones disappear at once.
  const [queued, setQueued] = useState<JobFieldsFragment[]>([]);
  const [gone, setGone] = useState<ReadonlySet<string>>(new Set());
  const models = useMemo(
    () => (data?.models ?? []).filter((model) => model.type === 'VIDEO' || model.type === 'MUSIC'),
    [data],
  );
  const listed = data?.jobs.edges.map((edge) => edge.node) ?? [];
  const known = new Set(listed.map((job) => job.id));
  const jobs = [...queued.filter((job) => !known.has(job.id)), ...listed].filter((job) => !gone.has(job.id));

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Jobs</h1>
      <ErrorNotice error={error} />
      {!data && fetching && <p class="muted">Loading…</p>}
      {data && (
        <>
          <h2>Queue a job</h2>
          <QueueJobForm models={models} onQueued={(job) => setQueued((list) => [job, ...list])} />
          <h2>
            Your jobs{' '}
            <button type="button" class="link" onClick={() => refetch({ requestPolicy: 'network-only' })}>
              Refresh
            </button>
          </h2>
          {jobs.length === 0 && <p class="muted">No jobs yet.</p>}
          <ul class="jobs">
            {jobs.map((job) => (
              <JobCard key={job.id} job={job} onGone={(id) => setGone((ids) => new Set([...ids, id]))} />
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
