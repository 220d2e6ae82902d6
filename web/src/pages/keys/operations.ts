/* The Keys page's operations (web/src/pages/Keys.tsx). */
import { graphql } from '../../gql/index.ts';

export const KEYS_LIST = graphql(`
  query KeysList {
    apiKeys {
      id
      description
      apiKeyType
      last6Chars
      createdAt
      expiresAt
      lastUsedAt
      limitPeriod
      consumptionLimits {
        usd
        diem
      }
      usage {
        currentPeriod {
          usd
          diem
        }
        trailingSevenDays {
          usd
          diem
        }
      }
    }
    rateLimits {
      tierId
      models {
        modelId
        rateLimits {
          type
          amount
        }
      }
    }
  }
`);

export const KEYS_CREATE = graphql(`
  mutation KeysCreate($input: CreateApiKeyInput!) {
    createApiKey(input: $input) {
      __typename
      ... on MutationCreateApiKeySuccess {
        data {
          secret
          apiKey {
            id
            description
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

export const KEYS_UPDATE = graphql(`
  mutation KeysUpdate($input: UpdateApiKeyInput!) {
    updateApiKey(input: $input) {
      __typename
      ... on MutationUpdateApiKeySuccess {
        data {
          id
        }
      }
      ... on Error {
        code
        message
      }
    }
  }
`);

export const KEYS_REVOKE = graphql(`
  mutation KeysRevoke($id: ID!) {
    deleteApiKey(id: $id) {
      __typename
      ... on MutationDeleteApiKeySuccess {
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
