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
    "\n  query Models($type: ModelType) {\n    models(type: $type) {\n      id\n      name\n      type\n      description\n      traits\n      capabilities\n      pricing\n      contextLength\n      offline\n      privacy\n    }\n  }\n": typeof types.ModelsDocument,
    "\n  query Overview {\n    balance {\n      balances {\n        usd\n        diem\n      }\n      consumptionCurrency\n      canConsume\n    }\n    usageAnalytics(lookback: \"30d\") {\n      startDate\n      endDate\n      byDate {\n        date\n        usd\n        diem\n      }\n      byModel {\n        modelName\n        modelType\n        totalUsd\n        totalDiem\n        totalUnits\n        unitType\n      }\n      topModels\n      byModelDaily {\n        date\n        values {\n          name\n          usd\n          diem\n        }\n      }\n      topKeyNames\n      byKeyDaily {\n        date\n        values {\n          name\n          usd\n          diem\n        }\n      }\n    }\n  }\n": typeof types.OverviewDocument,
    "\n  query SignInAccount {\n    account {\n      id\n      name\n    }\n  }\n": typeof types.SignInAccountDocument,
    "\n  query SignInOperator {\n    operatorJobQueue {\n      queued\n    }\n  }\n": typeof types.SignInOperatorDocument,
    "\n  query KeysList {\n    apiKeys {\n      id\n      description\n      apiKeyType\n      last6Chars\n      createdAt\n      expiresAt\n      lastUsedAt\n      limitPeriod\n      consumptionLimits {\n        usd\n        diem\n      }\n      usage {\n        currentPeriod {\n          usd\n          diem\n        }\n        trailingSevenDays {\n          usd\n          diem\n        }\n      }\n    }\n    rateLimits {\n      tierId\n      models {\n        modelId\n        rateLimits {\n          type\n          amount\n        }\n      }\n    }\n  }\n": typeof types.KeysListDocument,
    "\n  mutation KeysCreate($input: CreateApiKeyInput!) {\n    createApiKey(input: $input) {\n      __typename\n      ... on MutationCreateApiKeySuccess {\n        data {\n          secret\n          apiKey {\n            id\n            description\n          }\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n": typeof types.KeysCreateDocument,
    "\n  mutation KeysUpdate($input: UpdateApiKeyInput!) {\n    updateApiKey(input: $input) {\n      __typename\n      ... on MutationUpdateApiKeySuccess {\n        data {\n          id\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n": typeof types.KeysUpdateDocument,
    "\n  mutation KeysRevoke($id: ID!) {\n    deleteApiKey(id: $id) {\n      __typename\n      ... on MutationDeleteApiKeySuccess {\n        data {\n          id\n          success\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n": typeof types.KeysRevokeDocument,
    "\n  subscription OverviewLive {\n    usageUpdated {\n      id\n      amount\n      currency\n      modelId\n      sku\n      lineType\n      timestamp\n      apiKeyId\n    }\n  }\n": typeof types.OverviewLiveDocument,
    "\n  query PlaygroundModels {\n    models {\n      id\n      type\n      offline\n    }\n  }\n": typeof types.PlaygroundModelsDocument,
    "\n  subscription PlaygroundChat($input: ChatCompletionInput!) {\n    chatCompletionStream(input: $input) {\n      model\n      choices {\n        delta {\n          content\n        }\n        finishReason\n      }\n      usage {\n        promptTokens\n        completionTokens\n      }\n    }\n  }\n": typeof types.PlaygroundChatDocument,
    "\n  query PlaygroundCharges($filter: UsageFilter) {\n    usage(filter: $filter, first: 50) {\n      edges {\n        node {\n          id\n          amount\n          currency\n        }\n      }\n    }\n  }\n": typeof types.PlaygroundChargesDocument,
    "\n  mutation PlaygroundImage($input: GenerateImageInput!) {\n    generateImage(input: $input) {\n      __typename\n      ... on MutationGenerateImageSuccess {\n        data {\n          charged\n          currency\n          width\n          height\n          images {\n            url\n            contentType\n          }\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n": typeof types.PlaygroundImageDocument,
    "\n  mutation PlaygroundSpeech($input: SpeechInput!) {\n    synthesizeSpeech(input: $input) {\n      __typename\n      ... on MutationSynthesizeSpeechSuccess {\n        data {\n          charged\n          currency\n          characters\n          voice\n          file {\n            url\n            contentType\n          }\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n": typeof types.PlaygroundSpeechDocument,
    "\n  query UsagePage($filter: UsageFilter, $first: Int, $after: String) {\n    usage(filter: $filter, first: $first, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          timestamp\n          modelId\n          modelType\n          sku\n          lineType\n          units\n          amount\n          currency\n          apiKeyId\n          apiKey {\n            description\n          }\n        }\n      }\n    }\n  }\n": typeof types.UsagePageDocument,
    "\n  query UsageFilterChoices {\n    apiKeys {\n      id\n      description\n    }\n    models {\n      id\n      type\n    }\n  }\n": typeof types.UsageFilterChoicesDocument,
};
const documents: Documents = {
    "\n  query Models($type: ModelType) {\n    models(type: $type) {\n      id\n      name\n      type\n      description\n      traits\n      capabilities\n      pricing\n      contextLength\n      offline\n      privacy\n    }\n  }\n": types.ModelsDocument,
    "\n  query Overview {\n    balance {\n      balances {\n        usd\n        diem\n      }\n      consumptionCurrency\n      canConsume\n    }\n    usageAnalytics(lookback: \"30d\") {\n      startDate\n      endDate\n      byDate {\n        date\n        usd\n        diem\n      }\n      byModel {\n        modelName\n        modelType\n        totalUsd\n        totalDiem\n        totalUnits\n        unitType\n      }\n      topModels\n      byModelDaily {\n        date\n        values {\n          name\n          usd\n          diem\n        }\n      }\n      topKeyNames\n      byKeyDaily {\n        date\n        values {\n          name\n          usd\n          diem\n        }\n      }\n    }\n  }\n": types.OverviewDocument,
    "\n  query SignInAccount {\n    account {\n      id\n      name\n    }\n  }\n": types.SignInAccountDocument,
    "\n  query SignInOperator {\n    operatorJobQueue {\n      queued\n    }\n  }\n": types.SignInOperatorDocument,
    "\n  query KeysList {\n    apiKeys {\n      id\n      description\n      apiKeyType\n      last6Chars\n      createdAt\n      expiresAt\n      lastUsedAt\n      limitPeriod\n      consumptionLimits {\n        usd\n        diem\n      }\n      usage {\n        currentPeriod {\n          usd\n          diem\n        }\n        trailingSevenDays {\n          usd\n          diem\n        }\n      }\n    }\n    rateLimits {\n      tierId\n      models {\n        modelId\n        rateLimits {\n          type\n          amount\n        }\n      }\n    }\n  }\n": types.KeysListDocument,
    "\n  mutation KeysCreate($input: CreateApiKeyInput!) {\n    createApiKey(input: $input) {\n      __typename\n      ... on MutationCreateApiKeySuccess {\n        data {\n          secret\n          apiKey {\n            id\n            description\n          }\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n": types.KeysCreateDocument,
    "\n  mutation KeysUpdate($input: UpdateApiKeyInput!) {\n    updateApiKey(input: $input) {\n      __typename\n      ... on MutationUpdateApiKeySuccess {\n        data {\n          id\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n": types.KeysUpdateDocument,
    "\n  mutation KeysRevoke($id: ID!) {\n    deleteApiKey(id: $id) {\n      __typename\n      ... on MutationDeleteApiKeySuccess {\n        data {\n          id\n          success\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n": types.KeysRevokeDocument,
    "\n  subscription OverviewLive {\n    usageUpdated {\n      id\n      amount\n      currency\n      modelId\n      sku\n      lineType\n      timestamp\n      apiKeyId\n    }\n  }\n": types.OverviewLiveDocument,
    "\n  query PlaygroundModels {\n    models {\n      id\n      type\n      offline\n    }\n  }\n": types.PlaygroundModelsDocument,
    "\n  subscription PlaygroundChat($input: ChatCompletionInput!) {\n    chatCompletionStream(input: $input) {\n      model\n      choices {\n        delta {\n          content\n        }\n        finishReason\n      }\n      usage {\n        promptTokens\n        completionTokens\n      }\n    }\n  }\n": types.PlaygroundChatDocument,
    "\n  query PlaygroundCharges($filter: UsageFilter) {\n    usage(filter: $filter, first: 50) {\n      edges {\n        node {\n          id\n          amount\n          currency\n        }\n      }\n    }\n  }\n": types.PlaygroundChargesDocument,
    "\n  mutation PlaygroundImage($input: GenerateImageInput!) {\n    generateImage(input: $input) {\n      __typename\n      ... on MutationGenerateImageSuccess {\n        data {\n          charged\n          currency\n          width\n          height\n          images {\n            url\n            contentType\n          }\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n": types.PlaygroundImageDocument,
    "\n  mutation PlaygroundSpeech($input: SpeechInput!) {\n    synthesizeSpeech(input: $input) {\n      __typename\n      ... on MutationSynthesizeSpeechSuccess {\n        data {\n          charged\n          currency\n          characters\n          voice\n          file {\n            url\n            contentType\n          }\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n": types.PlaygroundSpeechDocument,
    "\n  query UsagePage($filter: UsageFilter, $first: Int, $after: String) {\n    usage(filter: $filter, first: $first, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          timestamp\n          modelId\n          modelType\n          sku\n          lineType\n          units\n          amount\n          currency\n          apiKeyId\n          apiKey {\n            description\n          }\n        }\n      }\n    }\n  }\n": types.UsagePageDocument,
    "\n  query UsageFilterChoices {\n    apiKeys {\n      id\n      description\n    }\n    models {\n      id\n      type\n    }\n  }\n": types.UsageFilterChoicesDocument,
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
export function graphql(source: "\n  query Models($type: ModelType) {\n    models(type: $type) {\n      id\n      name\n      type\n      description\n      traits\n      capabilities\n      pricing\n      contextLength\n      offline\n      privacy\n    }\n  }\n"): (typeof documents)["\n  query Models($type: ModelType) {\n    models(type: $type) {\n      id\n      name\n      type\n      description\n      traits\n      capabilities\n      pricing\n      contextLength\n      offline\n      privacy\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Overview {\n    balance {\n      balances {\n        usd\n        diem\n      }\n      consumptionCurrency\n      canConsume\n    }\n    usageAnalytics(lookback: \"30d\") {\n      startDate\n      endDate\n      byDate {\n        date\n        usd\n        diem\n      }\n      byModel {\n        modelName\n        modelType\n        totalUsd\n        totalDiem\n        totalUnits\n        unitType\n      }\n      topModels\n      byModelDaily {\n        date\n        values {\n          name\n          usd\n          diem\n        }\n      }\n      topKeyNames\n      byKeyDaily {\n        date\n        values {\n          name\n          usd\n          diem\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query Overview {\n    balance {\n      balances {\n        usd\n        diem\n      }\n      consumptionCurrency\n      canConsume\n    }\n    usageAnalytics(lookback: \"30d\") {\n      startDate\n      endDate\n      byDate {\n        date\n        usd\n        diem\n      }\n      byModel {\n        modelName\n        modelType\n        totalUsd\n        totalDiem\n        totalUnits\n        unitType\n      }\n      topModels\n      byModelDaily {\n        date\n        values {\n          name\n          usd\n          diem\n        }\n      }\n      topKeyNames\n      byKeyDaily {\n        date\n        values {\n          name\n          usd\n          diem\n        }\n      }\n    }\n  }\n"];
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
export function graphql(source: "\n  query KeysList {\n    apiKeys {\n      id\n      description\n      apiKeyType\n      last6Chars\n      createdAt\n      expiresAt\n      lastUsedAt\n      limitPeriod\n      consumptionLimits {\n        usd\n        diem\n      }\n      usage {\n        currentPeriod {\n          usd\n          diem\n        }\n        trailingSevenDays {\n          usd\n          diem\n        }\n      }\n    }\n    rateLimits {\n      tierId\n      models {\n        modelId\n        rateLimits {\n          type\n          amount\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query KeysList {\n    apiKeys {\n      id\n      description\n      apiKeyType\n      last6Chars\n      createdAt\n      expiresAt\n      lastUsedAt\n      limitPeriod\n      consumptionLimits {\n        usd\n        diem\n      }\n      usage {\n        currentPeriod {\n          usd\n          diem\n        }\n        trailingSevenDays {\n          usd\n          diem\n        }\n      }\n    }\n    rateLimits {\n      tierId\n      models {\n        modelId\n        rateLimits {\n          type\n          amount\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation KeysCreate($input: CreateApiKeyInput!) {\n    createApiKey(input: $input) {\n      __typename\n      ... on MutationCreateApiKeySuccess {\n        data {\n          secret\n          apiKey {\n            id\n            description\n          }\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation KeysCreate($input: CreateApiKeyInput!) {\n    createApiKey(input: $input) {\n      __typename\n      ... on MutationCreateApiKeySuccess {\n        data {\n          secret\n          apiKey {\n            id\n            description\n          }\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation KeysUpdate($input: UpdateApiKeyInput!) {\n    updateApiKey(input: $input) {\n      __typename\n      ... on MutationUpdateApiKeySuccess {\n        data {\n          id\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation KeysUpdate($input: UpdateApiKeyInput!) {\n    updateApiKey(input: $input) {\n      __typename\n      ... on MutationUpdateApiKeySuccess {\n        data {\n          id\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation KeysRevoke($id: ID!) {\n    deleteApiKey(id: $id) {\n      __typename\n      ... on MutationDeleteApiKeySuccess {\n        data {\n          id\n          success\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation KeysRevoke($id: ID!) {\n    deleteApiKey(id: $id) {\n      __typename\n      ... on MutationDeleteApiKeySuccess {\n        data {\n          id\n          success\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription OverviewLive {\n    usageUpdated {\n      id\n      amount\n      currency\n      modelId\n      sku\n      lineType\n      timestamp\n      apiKeyId\n    }\n  }\n"): (typeof documents)["\n  subscription OverviewLive {\n    usageUpdated {\n      id\n      amount\n      currency\n      modelId\n      sku\n      lineType\n      timestamp\n      apiKeyId\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PlaygroundModels {\n    models {\n      id\n      type\n      offline\n    }\n  }\n"): (typeof documents)["\n  query PlaygroundModels {\n    models {\n      id\n      type\n      offline\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription PlaygroundChat($input: ChatCompletionInput!) {\n    chatCompletionStream(input: $input) {\n      model\n      choices {\n        delta {\n          content\n        }\n        finishReason\n      }\n      usage {\n        promptTokens\n        completionTokens\n      }\n    }\n  }\n"): (typeof documents)["\n  subscription PlaygroundChat($input: ChatCompletionInput!) {\n    chatCompletionStream(input: $input) {\n      model\n      choices {\n        delta {\n          content\n        }\n        finishReason\n      }\n      usage {\n        promptTokens\n        completionTokens\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PlaygroundCharges($filter: UsageFilter) {\n    usage(filter: $filter, first: 50) {\n      edges {\n        node {\n          id\n          amount\n          currency\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query PlaygroundCharges($filter: UsageFilter) {\n    usage(filter: $filter, first: 50) {\n      edges {\n        node {\n          id\n          amount\n          currency\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation PlaygroundImage($input: GenerateImageInput!) {\n    generateImage(input: $input) {\n      __typename\n      ... on MutationGenerateImageSuccess {\n        data {\n          charged\n          currency\n          width\n          height\n          images {\n            url\n            contentType\n          }\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation PlaygroundImage($input: GenerateImageInput!) {\n    generateImage(input: $input) {\n      __typename\n      ... on MutationGenerateImageSuccess {\n        data {\n          charged\n          currency\n          width\n          height\n          images {\n            url\n            contentType\n          }\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation PlaygroundSpeech($input: SpeechInput!) {\n    synthesizeSpeech(input: $input) {\n      __typename\n      ... on MutationSynthesizeSpeechSuccess {\n        data {\n          charged\n          currency\n          characters\n          voice\n          file {\n            url\n            contentType\n          }\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation PlaygroundSpeech($input: SpeechInput!) {\n    synthesizeSpeech(input: $input) {\n      __typename\n      ... on MutationSynthesizeSpeechSuccess {\n        data {\n          charged\n          currency\n          characters\n          voice\n          file {\n            url\n            contentType\n          }\n        }\n      }\n      ... on Error {\n        code\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query UsagePage($filter: UsageFilter, $first: Int, $after: String) {\n    usage(filter: $filter, first: $first, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          timestamp\n          modelId\n          modelType\n          sku\n          lineType\n          units\n          amount\n          currency\n          apiKeyId\n          apiKey {\n            description\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query UsagePage($filter: UsageFilter, $first: Int, $after: String) {\n    usage(filter: $filter, first: $first, after: $after) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          timestamp\n          modelId\n          modelType\n          sku\n          lineType\n          units\n          amount\n          currency\n          apiKeyId\n          apiKey {\n            description\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query UsageFilterChoices {\n    apiKeys {\n      id\n      description\n    }\n    models {\n      id\n      type\n    }\n  }\n"): (typeof documents)["\n  query UsageFilterChoices {\n    apiKeys {\n      id\n      description\n    }\n    models {\n      id\n      type\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;