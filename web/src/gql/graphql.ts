/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
export type AnalyticsModelType =
  | 'ASR'
  | 'IMAGE'
  | 'LLM'
  | 'TTS'
  | 'VIDEO';

export type Currency =
  | 'BUNDLED_CREDITS'
  | 'DIEM'
  | 'USD'
  | 'VCU';

export type ModelType =
  | 'ASR'
  | 'EMBEDDING'
  | 'IMAGE'
  | 'INPAINT'
  | 'MUSIC'
  | 'TEXT'
  | 'TTS'
  | 'UPSCALE'
  | 'VIDEO';

export type ModelsQueryVariables = Exact<{
  type?: ModelType | null | undefined;
}>;


export type ModelsQuery = { models: Array<{ id: string, name: string, type: ModelType, description: string, traits: Array<string>, capabilities: Record<string, unknown> | null, pricing: Record<string, unknown>, contextLength: number | null, offline: boolean, privacy: string }> };

export type OverviewQueryVariables = Exact<{ [key: string]: never; }>;


export type OverviewQuery = { balance: { consumptionCurrency: Currency | null, canConsume: boolean, balances: { usd: string, diem: string } }, usageAnalytics: { startDate: string, endDate: string, topModels: Array<string>, topKeyNames: Array<string>, byDate: Array<{ date: string, usd: string, diem: string }>, byModel: Array<{ modelName: string, modelType: AnalyticsModelType, totalUsd: string, totalDiem: string, totalUnits: number, unitType: string }>, byModelDaily: Array<{ date: string, values: Array<{ name: string, usd: string, diem: string }> }>, byKeyDaily: Array<{ date: string, values: Array<{ name: string, usd: string, diem: string }> }> } };

export type SignInAccountQueryVariables = Exact<{ [key: string]: never; }>;


export type SignInAccountQuery = { account: { id: string, name: string } };

export type SignInOperatorQueryVariables = Exact<{ [key: string]: never; }>;


export type SignInOperatorQuery = { operatorJobQueue: { queued: number } };

export type OverviewLiveSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type OverviewLiveSubscription = { usageUpdated: { id: string, amount: string, currency: Currency, modelId: string | null, sku: string, lineType: string | null, timestamp: string, apiKeyId: string | null } };


export const ModelsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Models"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"type"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ModelType"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"models"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"type"},"value":{"kind":"Variable","name":{"kind":"Name","value":"type"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"type"}},{"kind":"Field","name":{"kind":"Name","value":"description"}},{"kind":"Field","name":{"kind":"Name","value":"traits"}},{"kind":"Field","name":{"kind":"Name","value":"capabilities"}},{"kind":"Field","name":{"kind":"Name","value":"pricing"}},{"kind":"Field","name":{"kind":"Name","value":"contextLength"}},{"kind":"Field","name":{"kind":"Name","value":"offline"}},{"kind":"Field","name":{"kind":"Name","value":"privacy"}}]}}]}}]} as unknown as DocumentNode<ModelsQuery, ModelsQueryVariables>;
export const OverviewDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Overview"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"balance"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"balances"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"usd"}},{"kind":"Field","name":{"kind":"Name","value":"diem"}}]}},{"kind":"Field","name":{"kind":"Name","value":"consumptionCurrency"}},{"kind":"Field","name":{"kind":"Name","value":"canConsume"}}]}},{"kind":"Field","name":{"kind":"Name","value":"usageAnalytics"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"lookback"},"value":{"kind":"StringValue","value":"30d","block":false}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"startDate"}},{"kind":"Field","name":{"kind":"Name","value":"endDate"}},{"kind":"Field","name":{"kind":"Name","value":"byDate"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"date"}},{"kind":"Field","name":{"kind":"Name","value":"usd"}},{"kind":"Field","name":{"kind":"Name","value":"diem"}}]}},{"kind":"Field","name":{"kind":"Name","value":"byModel"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"modelName"}},{"kind":"Field","name":{"kind":"Name","value":"modelType"}},{"kind":"Field","name":{"kind":"Name","value":"totalUsd"}},{"kind":"Field","name":{"kind":"Name","value":"totalDiem"}},{"kind":"Field","name":{"kind":"Name","value":"totalUnits"}},{"kind":"Field","name":{"kind":"Name","value":"unitType"}}]}},{"kind":"Field","name":{"kind":"Name","value":"topModels"}},{"kind":"Field","name":{"kind":"Name","value":"byModelDaily"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"date"}},{"kind":"Field","name":{"kind":"Name","value":"values"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"usd"}},{"kind":"Field","name":{"kind":"Name","value":"diem"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"topKeyNames"}},{"kind":"Field","name":{"kind":"Name","value":"byKeyDaily"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"date"}},{"kind":"Field","name":{"kind":"Name","value":"values"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"usd"}},{"kind":"Field","name":{"kind":"Name","value":"diem"}}]}}]}}]}}]}}]} as unknown as DocumentNode<OverviewQuery, OverviewQueryVariables>;
export const SignInAccountDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"SignInAccount"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"account"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<SignInAccountQuery, SignInAccountQueryVariables>;
export const SignInOperatorDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"SignInOperator"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"operatorJobQueue"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"queued"}}]}}]}}]} as unknown as DocumentNode<SignInOperatorQuery, SignInOperatorQueryVariables>;
export const OverviewLiveDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"OverviewLive"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"usageUpdated"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"currency"}},{"kind":"Field","name":{"kind":"Name","value":"modelId"}},{"kind":"Field","name":{"kind":"Name","value":"sku"}},{"kind":"Field","name":{"kind":"Name","value":"lineType"}},{"kind":"Field","name":{"kind":"Name","value":"timestamp"}},{"kind":"Field","name":{"kind":"Name","value":"apiKeyId"}}]}}]}}]} as unknown as DocumentNode<OverviewLiveSubscription, OverviewLiveSubscriptionVariables>;