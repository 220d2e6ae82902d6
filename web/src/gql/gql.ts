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
    "\n  subscription OverviewLive {\n    usageUpdated {\n      id\n      amount\n      currency\n      modelId\n      sku\n      lineType\n      timestamp\n      apiKeyId\n    }\n  }\n": typeof types.OverviewLiveDocument,
};
const documents: Documents = {
    "\n  query Models($type: ModelType) {\n    models(type: $type) {\n      id\n      name\n      type\n      description\n      traits\n      capabilities\n      pricing\n      contextLength\n      offline\n      privacy\n    }\n  }\n": types.ModelsDocument,
    "\n  query Overview {\n    balance {\n      balances {\n        usd\n        diem\n      }\n      consumptionCurrency\n      canConsume\n    }\n    usageAnalytics(lookback: \"30d\") {\n      startDate\n      endDate\n      byDate {\n        date\n        usd\n        diem\n      }\n      byModel {\n        modelName\n        modelType\n        totalUsd\n        totalDiem\n        totalUnits\n        unitType\n      }\n      topModels\n      byModelDaily {\n        date\n        values {\n          name\n          usd\n          diem\n        }\n      }\n      topKeyNames\n      byKeyDaily {\n        date\n        values {\n          name\n          usd\n          diem\n        }\n      }\n    }\n  }\n": types.OverviewDocument,
    "\n  query SignInAccount {\n    account {\n      id\n      name\n    }\n  }\n": types.SignInAccountDocument,
    "\n  query SignInOperator {\n    operatorJobQueue {\n      queued\n    }\n  }\n": types.SignInOperatorDocument,
    "\n  subscription OverviewLive {\n    usageUpdated {\n      id\n      amount\n      currency\n      modelId\n      sku\n      lineType\n      timestamp\n      apiKeyId\n    }\n  }\n": types.OverviewLiveDocument,
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
export function graphql(source: "\n  subscription OverviewLive {\n    usageUpdated {\n      id\n      amount\n      currency\n      modelId\n      sku\n      lineType\n      timestamp\n      apiKeyId\n    }\n  }\n"): (typeof documents)["\n  subscription OverviewLive {\n    usageUpdated {\n      id\n      amount\n      currency\n      modelId\n      sku\n      lineType\n      timestamp\n      apiKeyId\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;