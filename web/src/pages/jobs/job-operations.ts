/* The Jobs page's operations (web/src/pages/Jobs.tsx): its list, live updates, queueing and completing. */
import { graphql } from '../../gql/index.ts';

export const JOB_FIELDS = graphql(`
  fragment JobFields on Job {
    id
    kind
    model
    status
    progress
    quote
    error
    createdAt
    finishedAt
    downloadUrl
    media {
      url
      contentType
      byteSize
    }
  }
`);

export const JOBS_PAGE = graphql(`
  query JobsPage {
    jobs(first: 50) {
      edges {
        node {
          ...JobFields
        }
      }
    }
    models {
      id
      name
      type
    }
  }
`);

export const JOB_LIVE = graphql(`
  subscription JobLive($id: ID!) {
    jobUpdated(id: $id) {
      ...JobFields
    }
  }
`);

export const QUEUE_VIDEO = graphql(`
  mutation JobQueueVideo($input: JSONObject!) {
    queueVideo(input: $input) {
      __typename
      ... on MutationQueueVideoSuccess {
        data {
          ...JobFields
        }
      }
      ... on Error {
        code
        message
      }
    }
  }
`);

export const QUEUE_AUDIO = graphql(`
  mutation JobQueueAudio($input: JSONObject!) {
    queueAudio(input: $input) {
      __typename
      ... on MutationQueueAudioSuccess {
        data {
          ...JobFields
        }
      }
      ... on Error {
        code
        message
      }
    }
  }
`);

export const COMPLETE_JOB = graphql(`
  mutation JobComplete($id: ID!) {
    completeJob(id: $id) {
      __typename
      ... on MutationCompleteJobSuccess {
        data {
          id
          success
        }
      }
      ... on Error {
        code
        message
      }
    }
  }
`);
