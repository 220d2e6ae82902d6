/* eslint-disable */
import * as types from './graphql';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  query Models {\n    models {\n      id\n      name\n      type\n    }\n  }\n": typeof types.ModelsDocument,
    "\n  query Overview {\n    balance {\n      balances {\n        usd\n        diem\n      }\n      consumptionCurrency\n      canConsume\n    }\n    usageAnalytics(lookback: \"30d\") {\n      startDate\n      endDate\n      byDate {\n        date\n        usd\n        diem\n      }\n    }\n  }\n": typeof types.OverviewDocument,
    "\n  query SignInAccount {\n    account {\n      id\n      name\n    }\n  }\n": typeof types.SignInAccountDocument,
    "\n  query SignInOperator {\n    operatorJobQueue {\n      queued\n    }\n  }\n": typeof types.SignInOperatorDocument,
    "\n  query WalletPage($signedIn: Boolean!) {\n    wallet @include(if: $signedIn) {\n      address\n      balance {\n        balanceUsd\n        canConsume\n        minimumTopUpUsd\n        suggestedTopUpUsd\n      }\n      ledger(first: 50) {\n        edges {\n          node {\n            id\n            type\n            amount\n            balanceAfter\n            createdAt\n            modelId\n          }\n        }\n      }\n    }\n    topUpRequirements {\n      scheme\n      network\n      amount\n      amountUsd\n      asset\n      payTo\n      maxTimeoutSeconds\n    }\n  }\n": typeof types.WalletPageDocument,
    "\n  subscription WalletBalanceLive {\n    walletBalance {\n      balanceUsd\n      canConsume\n      minimumTopUpUsd\n      suggestedTopUpUsd\n    }\n  }\n": typeof types.WalletBalanceLiveDocument,
    "\n  query WalletSignInChallenge {\n    walletSignInChallenge {\n      domain\n      uri\n      version\n      nonce\n      issuedAt\n      expirationTime\n      statement\n      chainId\n    }\n  }\n": typeof types.WalletSignInChallengeDocument,
    "\n  query WalletSignInCheck {\n    wallet {\n      address\n    }\n  }\n": typeof types.WalletSignInCheckDocument,
    "\n  fragment JobFields on Job {\n    id\n    kind\n    model\n    status\n    progress\n    quote\n    error\n    createdAt\n    finishedAt\n    downloadUrl\n    media {\n      url\n      contentType\n      byteSize\n    }\n  }\n": typeof types.JobFieldsFragmentDoc,
    "\n  query JobsPage {\n    jobs(first: 50) {\n      edges {\n        node {\n          ...JobFields\n        }\n      }\n    }\n    models {\n      id\n      name\n      type\n    }\n  }\n": typeof types.JobsPageDocument,
    "\n  subscription JobLive($id: ID!) {\n    jobUpdated(id: $id) {\n      ...JobFields\n    }\n  }\n": typeof types.JobLiveDocument,
    "\n  mutation JobQueueVideo($input: JSONObject!) {\n    queueVideo(input: $input) {\n      __typename\n      ... on MutationQueueVideoSuccess {\n        data {\n          ...JobFields\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n": typeof types.JobQueueVideoDocument,
    "\n  mutation JobQueueAudio($input: JSONObject!) {\n    queueAudio(input: $input) {\n      __typename\n      ... on MutationQueueAudioSuccess {\n        data {\n          ...JobFields\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n": typeof types.JobQueueAudioDocument,
    "\n  mutation JobComplete($id: ID!) {\n    completeJob(id: $id) {\n      __typename\n      ... on MutationCompleteJobSuccess {\n        data {\n          id\n          success\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n": typeof types.JobCompleteDocument,
    "\n  query OperatorAccountsList($search: String, $after: String) {\n    operatorAccounts(first: 25, search: $search, after: $after) {\n      edges {\n        node {\n          id\n          name\n          kind\n          walletAddress\n          activeKeyCount\n          createdAt\n          balances {\n            currency\n            amount\n            available\n          }\n          spendToday {\n            currency\n            amount\n          }\n          spendLast30Days {\n            currency\n            amount\n          }\n        }\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n  }\n": typeof types.OperatorAccountsListDocument,
    "\n  mutation OperatorCreditAccount($accountId: ID!, $amount: Decimal!, $currency: Currency!, $reason: String!) {\n    operatorCredit(accountId: $accountId, amount: $amount, currency: $currency, reason: $reason) {\n      __typename\n      ... on MutationOperatorCreditSuccess {\n        data {\n          ...OperatorAdjustmentFields\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n": typeof types.OperatorCreditAccountDocument,
    "\n  mutation OperatorDebitAccount($accountId: ID!, $amount: Decimal!, $currency: Currency!, $reason: String!) {\n    operatorDebit(accountId: $accountId, amount: $amount, currency: $currency, reason: $reason) {\n      __typename\n      ... on MutationOperatorDebitSuccess {\n        data {\n          ...OperatorAdjustmentFields\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n": typeof types.OperatorDebitAccountDocument,
    "\n  fragment OperatorAdjustmentFields on OperatorAdjustment {\n    ledgerEntryId\n    accountId\n    amount\n    currency\n    balanceAfter\n    reason\n  }\n": typeof types.OperatorAdjustmentFieldsFragmentDoc,
    "\n  query OperatorStatus {\n    operatorUpstreamHealth {\n      providerId\n      state\n      calls\n      failures\n      lastLatencyMs\n      recentLatencyMs\n      coolingDownUntil\n      recentErrors {\n        at\n        operation\n        outcome\n        message\n      }\n    }\n    operatorJobQueue {\n      queued\n      processing\n      oldestWaitingSeconds\n      depth {\n        status\n        kind\n        modelId\n        jobs\n        oldestCreatedAt\n      }\n    }\n    operatorUsage(lookback: \"30d\") {\n      startDate\n      endDate\n      byDate {\n        date\n        usd\n        diem\n      }\n      byModel {\n        modelName\n        totalUsd\n        totalDiem\n        totalUnits\n        unitType\n      }\n    }\n  }\n": typeof types.OperatorStatusDocument,
};
const documents: Documents = {
    "\n  query Models {\n    models {\n      id\n      name\n      type\n    }\n  }\n": types.ModelsDocument,
    "\n  query Overview {\n    balance {\n      balances {\n        usd\n        diem\n      }\n      consumptionCurrency\n      canConsume\n    }\n    usageAnalytics(lookback: \"30d\") {\n      startDate\n      endDate\n      byDate {\n        date\n        usd\n        diem\n      }\n    }\n  }\n": types.OverviewDocument,
    "\n  query SignInAccount {\n    account {\n      id\n      name\n    }\n  }\n": types.SignInAccountDocument,
    "\n  query SignInOperator {\n    operatorJobQueue {\n      queued\n    }\n  }\n": types.SignInOperatorDocument,
    "\n  query WalletPage($signedIn: Boolean!) {\n    wallet @include(if: $signedIn) {\n      address\n      balance {\n        balanceUsd\n        canConsume\n        minimumTopUpUsd\n        suggestedTopUpUsd\n      }\n      ledger(first: 50) {\n        edges {\n          node {\n            id\n            type\n            amount\n            balanceAfter\n            createdAt\n            modelId\n          }\n        }\n      }\n    }\n    topUpRequirements {\n      scheme\n      network\n      amount\n      amountUsd\n      asset\n      payTo\n      maxTimeoutSeconds\n    }\n  }\n": types.WalletPageDocument,
    "\n  subscription WalletBalanceLive {\n    walletBalance {\n      balanceUsd\n      canConsume\n      minimumTopUpUsd\n      suggestedTopUpUsd\n    }\n  }\n": types.WalletBalanceLiveDocument,
    "\n  query WalletSignInChallenge {\n    walletSignInChallenge {\n      domain\n      uri\n      version\n      nonce\n      issuedAt\n      expirationTime\n      statement\n      chainId\n    }\n  }\n": types.WalletSignInChallengeDocument,
    "\n  query WalletSignInCheck {\n    wallet {\n      address\n    }\n  }\n": types.WalletSignInCheckDocument,
    "\n  fragment JobFields on Job {\n    id\n    kind\n    model\n    status\n    progress\n    quote\n    error\n    createdAt\n    finishedAt\n    downloadUrl\n    media {\n      url\n      contentType\n      byteSize\n    }\n  }\n": types.JobFieldsFragmentDoc,
    "\n  query JobsPage {\n    jobs(first: 50) {\n      edges {\n        node {\n          ...JobFields\n        }\n      }\n    }\n    models {\n      id\n      name\n      type\n    }\n  }\n": types.JobsPageDocument,
    "\n  subscription JobLive($id: ID!) {\n    jobUpdated(id: $id) {\n      ...JobFields\n    }\n  }\n": types.JobLiveDocument,
    "\n  mutation JobQueueVideo($input: JSONObject!) {\n    queueVideo(input: $input) {\n      __typename\n      ... on MutationQueueVideoSuccess {\n        data {\n          ...JobFields\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n": types.JobQueueVideoDocument,
    "\n  mutation JobQueueAudio($input: JSONObject!) {\n    queueAudio(input: $input) {\n      __typename\n      ... on MutationQueueAudioSuccess {\n        data {\n          ...JobFields\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n": types.JobQueueAudioDocument,
    "\n  mutation JobComplete($id: ID!) {\n    completeJob(id: $id) {\n      __typename\n      ... on MutationCompleteJobSuccess {\n        data {\n          id\n          success\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n": types.JobCompleteDocument,
    "\n  query OperatorAccountsList($search: String, $after: String) {\n    operatorAccounts(first: 25, search: $search, after: $after) {\n      edges {\n        node {\n          id\n          name\n          kind\n          walletAddress\n          activeKeyCount\n          createdAt\n          balances {\n            currency\n            amount\n            available\n          }\n          spendToday {\n            currency\n            amount\n          }\n          spendLast30Days {\n            currency\n            amount\n          }\n        }\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n  }\n": types.OperatorAccountsListDocument,
    "\n  mutation OperatorCreditAccount($accountId: ID!, $amount: Decimal!, $currency: Currency!, $reason: String!) {\n    operatorCredit(accountId: $accountId, amount: $amount, currency: $currency, reason: $reason) {\n      __typename\n      ... on MutationOperatorCreditSuccess {\n        data {\n          ...OperatorAdjustmentFields\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n": types.OperatorCreditAccountDocument,
    "\n  mutation OperatorDebitAccount($accountId: ID!, $amount: Decimal!, $currency: Currency!, $reason: String!) {\n    operatorDebit(accountId: $accountId, amount: $amount, currency: $currency, reason: $reason) {\n      __typename\n      ... on MutationOperatorDebitSuccess {\n        data {\n          ...OperatorAdjustmentFields\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n": types.OperatorDebitAccountDocument,
    "\n  fragment OperatorAdjustmentFields on OperatorAdjustment {\n    ledgerEntryId\n    accountId\n    amount\n    currency\n    balanceAfter\n    reason\n  }\n": types.OperatorAdjustmentFieldsFragmentDoc,
    "\n  query OperatorStatus {\n    operatorUpstreamHealth {\n      providerId\n      state\n      calls\n      failures\n      lastLatencyMs\n      recentLatencyMs\n      coolingDownUntil\n      recentErrors {\n        at\n        operation\n        outcome\n        message\n      }\n    }\n    operatorJobQueue {\n      queued\n      processing\n      oldestWaitingSeconds\n      depth {\n        status\n        kind\n        modelId\n        jobs\n        oldestCreatedAt\n      }\n    }\n    operatorUsage(lookback: \"30d\") {\n      startDate\n      endDate\n      byDate {\n        date\n        usd\n        diem\n      }\n      byModel {\n        modelName\n        totalUsd\n        totalDiem\n        totalUnits\n        unitType\n      }\n    }\n  }\n": types.OperatorStatusDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Models {\n    models {\n      id\n      name\n      type\n    }\n  }\n"): (typeof documents)["\n  query Models {\n    models {\n      id\n      name\n      type\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Overview {\n    balance {\n      balances {\n        usd\n        diem\n      }\n      consumptionCurrency\n      canConsume\n    }\n    usageAnalytics(lookback: \"30d\") {\n      startDate\n      endDate\n      byDate {\n        date\n        usd\n        diem\n      }\n    }\n  }\n"): (typeof documents)["\n  query Overview {\n    balance {\n      balances {\n        usd\n        diem\n      }\n      consumptionCurrency\n      canConsume\n    }\n    usageAnalytics(lookback: \"30d\") {\n      startDate\n      endDate\n      byDate {\n        date\n        usd\n        diem\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query SignInAccount {\n    account {\n      id\n      name\n    }\n  }\n"): (typeof documents)["\n  query SignInAccount {\n    account {\n      id\n      name\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query SignInOperator {\n    operatorJobQueue {\n      queued\n    }\n  }\n"): (typeof documents)["\n  query SignInOperator {\n    operatorJobQueue {\n      queued\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WalletPage($signedIn: Boolean!) {\n    wallet @include(if: $signedIn) {\n      address\n      balance {\n        balanceUsd\n        canConsume\n        minimumTopUpUsd\n        suggestedTopUpUsd\n      }\n      ledger(first: 50) {\n        edges {\n          node {\n            id\n            type\n            amount\n            balanceAfter\n            createdAt\n            modelId\n          }\n        }\n      }\n    }\n    topUpRequirements {\n      scheme\n      network\n      amount\n      amountUsd\n      asset\n      payTo\n      maxTimeoutSeconds\n    }\n  }\n"): (typeof documents)["\n  query WalletPage($signedIn: Boolean!) {\n    wallet @include(if: $signedIn) {\n      address\n      balance {\n        balanceUsd\n        canConsume\n        minimumTopUpUsd\n        suggestedTopUpUsd\n      }\n      ledger(first: 50) {\n        edges {\n          node {\n            id\n            type\n            amount\n            balanceAfter\n            createdAt\n            modelId\n          }\n        }\n      }\n    }\n    topUpRequirements {\n      scheme\n      network\n      amount\n      amountUsd\n      asset\n      payTo\n      maxTimeoutSeconds\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription WalletBalanceLive {\n    walletBalance {\n      balanceUsd\n      canConsume\n      minimumTopUpUsd\n      suggestedTopUpUsd\n    }\n  }\n"): (typeof documents)["\n  subscription WalletBalanceLive {\n    walletBalance {\n      balanceUsd\n      canConsume\n      minimumTopUpUsd\n      suggestedTopUpUsd\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WalletSignInChallenge {\n    walletSignInChallenge {\n      domain\n      uri\n      version\n      nonce\n      issuedAt\n      expirationTime\n      statement\n      chainId\n    }\n  }\n"): (typeof documents)["\n  query WalletSignInChallenge {\n    walletSignInChallenge {\n      domain\n      uri\n      version\n      nonce\n      issuedAt\n      expirationTime\n      statement\n      chainId\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WalletSignInCheck {\n    wallet {\n      address\n    }\n  }\n"): (typeof documents)["\n  query WalletSignInCheck {\n    wallet {\n      address\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment JobFields on Job {\n    id\n    kind\n    model\n    status\n    progress\n    quote\n    error\n    createdAt\n    finishedAt\n    downloadUrl\n    media {\n      url\n      contentType\n      byteSize\n    }\n  }\n"): (typeof documents)["\n  fragment JobFields on Job {\n    id\n    kind\n    model\n    status\n    progress\n    quote\n    error\n    createdAt\n    finishedAt\n    downloadUrl\n    media {\n      url\n      contentType\n      byteSize\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query JobsPage {\n    jobs(first: 50) {\n      edges {\n        node {\n          ...JobFields\n        }\n      }\n    }\n    models {\n      id\n      name\n      type\n    }\n  }\n"): (typeof documents)["\n  query JobsPage {\n    jobs(first: 50) {\n      edges {\n        node {\n          ...JobFields\n        }\n      }\n    }\n    models {\n      id\n      name\n      type\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription JobLive($id: ID!) {\n    jobUpdated(id: $id) {\n      ...JobFields\n    }\n  }\n"): (typeof documents)["\n  subscription JobLive($id: ID!) {\n    jobUpdated(id: $id) {\n      ...JobFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation JobQueueVideo($input: JSONObject!) {\n    queueVideo(input: $input) {\n      __typename\n      ... on MutationQueueVideoSuccess {\n        data {\n          ...JobFields\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation JobQueueVideo($input: JSONObject!) {\n    queueVideo(input: $input) {\n      __typename\n      ... on MutationQueueVideoSuccess {\n        data {\n          ...JobFields\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation JobQueueAudio($input: JSONObject!) {\n    queueAudio(input: $input) {\n      __typename\n      ... on MutationQueueAudioSuccess {\n        data {\n          ...JobFields\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation JobQueueAudio($input: JSONObject!) {\n    queueAudio(input: $input) {\n      __typename\n      ... on MutationQueueAudioSuccess {\n        data {\n          ...JobFields\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation JobComplete($id: ID!) {\n    completeJob(id: $id) {\n      __typename\n      ... on MutationCompleteJobSuccess {\n        data {\n          id\n          success\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation JobComplete($id: ID!) {\n    completeJob(id: $id) {\n      __typename\n      ... on MutationCompleteJobSuccess {\n        data {\n          id\n          success\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query OperatorAccountsList($search: String, $after: String) {\n    operatorAccounts(first: 25, search: $search, after: $after) {\n      edges {\n        node {\n          id\n          name\n          kind\n          walletAddress\n          activeKeyCount\n          createdAt\n          balances {\n            currency\n            amount\n            available\n          }\n          spendToday {\n            currency\n            amount\n          }\n          spendLast30Days {\n            currency\n            amount\n          }\n        }\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n  }\n"): (typeof documents)["\n  query OperatorAccountsList($search: String, $after: String) {\n    operatorAccounts(first: 25, search: $search, after: $after) {\n      edges {\n        node {\n          id\n          name\n          kind\n          walletAddress\n          activeKeyCount\n          createdAt\n          balances {\n            currency\n            amount\n            available\n          }\n          spendToday {\n            currency\n            amount\n          }\n          spendLast30Days {\n            currency\n            amount\n          }\n        }\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation OperatorCreditAccount($accountId: ID!, $amount: Decimal!, $currency: Currency!, $reason: String!) {\n    operatorCredit(accountId: $accountId, amount: $amount, currency: $currency, reason: $reason) {\n      __typename\n      ... on MutationOperatorCreditSuccess {\n        data {\n          ...OperatorAdjustmentFields\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation OperatorCreditAccount($accountId: ID!, $amount: Decimal!, $currency: Currency!, $reason: String!) {\n    operatorCredit(accountId: $accountId, amount: $amount, currency: $currency, reason: $reason) {\n      __typename\n      ... on MutationOperatorCreditSuccess {\n        data {\n          ...OperatorAdjustmentFields\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation OperatorDebitAccount($accountId: ID!, $amount: Decimal!, $currency: Currency!, $reason: String!) {\n    operatorDebit(accountId: $accountId, amount: $amount, currency: $currency, reason: $reason) {\n      __typename\n      ... on MutationOperatorDebitSuccess {\n        data {\n          ...OperatorAdjustmentFields\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation OperatorDebitAccount($accountId: ID!, $amount: Decimal!, $currency: Currency!, $reason: String!) {\n    operatorDebit(accountId: $accountId, amount: $amount, currency: $currency, reason: $reason) {\n      __typename\n      ... on MutationOperatorDebitSuccess {\n        data {\n          ...OperatorAdjustmentFields\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment OperatorAdjustmentFields on OperatorAdjustment {\n    ledgerEntryId\n    accountId\n    amount\n    currency\n    balanceAfter\n    reason\n  }\n"): (typeof documents)["\n  fragment OperatorAdjustmentFields on OperatorAdjustment {\n    ledgerEntryId\n    accountId\n    amount\n    currency\n    balanceAfter\n    reason\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query OperatorStatus {\n    operatorUpstreamHealth {\n      providerId\n      state\n      calls\n      failures\n      lastLatencyMs\n      recentLatencyMs\n      coolingDownUntil\n      recentErrors {\n        at\n        operation\n        outcome\n        message\n      }\n    }\n    operatorJobQueue {\n      queued\n      processing\n      oldestWaitingSeconds\n      depth {\n        status\n        kind\n        modelId\n        jobs\n        oldestCreatedAt\n      }\n    }\n    operatorUsage(lookback: \"30d\") {\n      startDate\n      endDate\n      byDate {\n        date\n        usd\n        diem\n      }\n      byModel {\n        modelName\n        totalUsd\n        totalDiem\n        totalUnits\n        unitType\n      }\n    }\n  }\n"): (typeof documents)["\n  query OperatorStatus {\n    operatorUpstreamHealth {\n      providerId\n      state\n      calls\n      failures\n      lastLatencyMs\n      recentLatencyMs\n      coolingDownUntil\n      recentErrors {\n        at\n        operation\n        outcome\n        message\n      }\n    }\n    operatorJobQueue {\n      queued\n      processing\n      oldestWaitingSeconds\n      depth {\n        status\n        kind\n        modelId\n        jobs\n        oldestCreatedAt\n      }\n    }\n    operatorUsage(lookback: \"30d\") {\n      startDate\n      endDate\n      byDate {\n        date\n        usd\n        diem\n      }\n      byModel {\n        modelName\n        totalUsd\n        totalDiem\n        totalUnits\n        unitType\n      }\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;