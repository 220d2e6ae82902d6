/* The Playground's operations (web/src/pages/Playground.tsx and its parts here). */
import { graphql } from '../../gql/index.ts';

export const PLAYGROUND_MODELS = graphql(`
  query PlaygroundModels {
    models {
      id
      type
      offline
    }
  }
`);

export const PLAYGROUND_CHAT = graphql(`
  subscription PlaygroundChat($input: ChatCompletionInput!) {
    chatCompletionStream(input: $input) {
      model
      choices {
        delta {
          content
        }
        finishReason
      }
      usage {
        promptTokens
        completionTokens
      }
    }
  }
`);

/** The charges of a call, found in the account's usage after it settled (entries of `modelId` since `startDate`). */
export const PLAYGROUND_CHARGES = graphql(`
  query PlaygroundCharges($filter: UsageFilter) {
    usage(filter: $filter, first: 50) {
      edges {
        node {
          id
          amount
          currency
        }
      }
    }
  }
`);

export const PLAYGROUND_IMAGE = graphql(`
  mutation PlaygroundImage($input: GenerateImageInput!) {
    generateImage(input: $input) {
      __typename
      ... on MutationGenerateImageSuccess {
        data {
          charged
          currency
          width
          height
          images {
            url
            contentType
          }
        }
      }
      ... on Error {
        code
        message
      }
    }
  }
`);

export const PLAYGROUND_SPEECH = graphql(`
  mutation PlaygroundSpeech($input: SpeechInput!) {
    synthesizeSpeech(input: $input) {
      __typename
      ... on MutationSynthesizeSpeechSuccess {
        data {
          charged
          currency
          characters
          voice
          file {
            url
            contentType
          }
        }
      }
      ... on Error {
        code
        message
      }
    }
  }
`);
