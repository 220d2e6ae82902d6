/* The Operator page's operations (web/src/pages/Operator.tsx); every one needs an operator token. */
import { graphql } from '../../gql/index.ts';

export const OPERATOR_ACCOUNTS = graphql(`
  query OperatorAccountsList($search: String, $after: String) {
    operatorAccounts(first: 25, search: $search, after: $after) {
      edges {
        node {
          id
          name
          kind
          walletAddress
          activeKeyCount
          createdAt
          balances {
            currency
            amount
            available
          }
          spendToday {
            currency
            amount
          }
          spendLast30Days {
            currency
            amount
          }
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`);

export const OPERATOR_CREDIT = graphql(`
  mutation OperatorCreditAccount($accountId: ID!, $amount: Decimal!, $currency: Currency!, $reason: String!) {
    operatorCredit(accountId: $accountId, amount: $amount, currency: $currency, reason: $reason) {
      __typename
      ... on MutationOperatorCreditSuccess {
        data {
          ...OperatorAdjustmentFields
        }
      }
      ... on Error {
        code
        message
      }
    }
  }
`);

export const OPERATOR_DEBIT = graphql(`
  mutation OperatorDebitAccount($accountId: ID!, $amount: Decimal!, $currency: Currency!, $reason: String!) {
    operatorDebit(accountId: $accountId, amount: $amount, currency: $currency, reason: $reason) {
      __typename
      ... on MutationOperatorDebitSuccess {
        data {
          ...OperatorAdjustmentFields
        }
      }
      ... on Error {
        code
        message
      }
    }
  }
`);

export const ADJUSTMENT_FIELDS = graphql(`
  fragment OperatorAdjustmentFields on OperatorAdjustment {
    ledgerEntryId
    accountId
    amount
    currency
    balanceAfter
    reason
  }
`);

export const OPERATOR_STATUS = graphql(`
  query OperatorStatus {
    operatorUpstreamHealth {
      providerId
      state
      calls
      failures
      lastLatencyMs
      recentLatencyMs
      coolingDownUntil
      recentErrors {
        at
        operation
        outcome
        message
      }
    }
    operatorJobQueue {
      queued
      processing
      oldestWaitingSeconds
      depth {
        status
        kind
        modelId
        jobs
        oldestCreatedAt
      }
    }
    operatorUsage(lookback: "30d") {
      startDate
      endDate
      byDate {
        date
        usd
        diem
      }
      byModel {
        modelName
        totalUsd
        totalDiem
        totalUnits
        unitType
      }
    }
  }
`);
