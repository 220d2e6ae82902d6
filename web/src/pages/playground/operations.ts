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
      charged
      currency
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
