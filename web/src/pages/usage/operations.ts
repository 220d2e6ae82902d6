/* The Usage page's operations (web/src/pages/Usage.tsx). */
import { graphql } from '../../gql/index.ts';

export const USAGE_PAGE = graphql(`
  query UsagePage($filter: UsageFilter, $first: Int, $after: String) {
    usage(filter: $filter, first: $first, after: $after) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          id
          timestamp
          modelId
          modelType
          sku
          lineType
          units
          amount
          currency
          apiKeyId
          apiKey {
            description
          }
        }
      }
    }
  }
`);

export const USAGE_FILTER_CHOICES = graphql(`
  query UsageFilterChoices {
    apiKeys {
      id
      description
    }
    models {
      id
      type
    }
  }
`);
