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

/** INFERENCE: inference, catalog and jobs. ADMIN: everything, plus keys and billing. */
export type ApiKeyType =
  | 'ADMIN'
  | 'INFERENCE';

/** The encoding of synthesised speech (REST `response_format`). */
export type AudioFormat =
  /** AAC in ADTS frames. */
  | 'AAC'
  | 'FLAC'
  | 'MP3'
  /** Opus in an Ogg container. */
  | 'OPUS'
  /** Raw 16-bit little-endian mono samples at 24 kHz. */
  | 'PCM'
  | 'WAV';

export type ChatCompletionInput = {
  frequencyPenalty?: number | null | undefined;
  logprobs?: boolean | null | undefined;
  maxCompletionTokens?: number | null | undefined;
  messages: Array<ChatMessageInput>;
  minP?: number | null | undefined;
  /** A text model id, trait or compatibility name, optionally with a `:key=value&…` feature suffix. */
  model: string;
  n?: number | null | undefined;
  parallelToolCalls?: boolean | null | undefined;
  presencePenalty?: number | null | undefined;
  reasoningEffort?: ReasoningEffort | null | undefined;
  repetitionPenalty?: number | null | undefined;
  /** {"type": "text" | "json_object"} or {"type": "json_schema", "json_schema": {"name", "schema", "strict"}}. */
  responseFormat?: unknown;
  seed?: number | null | undefined;
  serviceParameters?: ChatServiceParametersInput | null | undefined;
  /** Up to 4 stop sequences. */
  stop?: Array<string> | null | undefined;
  temperature?: number | null | undefined;
  /** "none", "auto", "required" or {"type": "function", "function": {"name"}}. */
  toolChoice?: unknown;
  tools?: Array<ChatToolInput> | null | undefined;
  topK?: number | null | undefined;
  topLogprobs?: number | null | undefined;
  topP?: number | null | undefined;
};

/** One part of a message: set `text`, `imageUrl` (an http(s) or data: URL; vision models only) or `file` (its text is extracted and sent as text; priced as one text parser request plus its tokens). */
export type ChatContentPartInput = {
  file?: ChatFilePartInput | null | undefined;
  imageUrl?: string | null | undefined;
  text?: string | null | undefined;
};

/** A document whose text the model reads (as REST `{"type": "file", "file": {...}}`). */
export type ChatFilePartInput = {
  /** A data:<mime type>;base64,… URL: PDF, DOCX, PPTX, XLSX or text, at most 25 MB. */
  fileData: string;
  /** Heads the extracted text. */
  filename?: string | null | undefined;
};

export type ChatMessageInput = {
  /** Text content; or use `parts`. */
  content?: string | null | undefined;
  name?: string | null | undefined;
  /** Content parts (text, images and files) instead of `content`. */
  parts?: Array<ChatContentPartInput> | null | undefined;
  role: ChatRole;
  /** TOOL messages: the id of the call this answers. */
  toolCallId?: string | null | undefined;
  /** ASSISTANT messages: the calls it made. */
  toolCalls?: Array<ChatToolCallInput> | null | undefined;
};

export type ChatRole =
  | 'ASSISTANT'
  | 'DEVELOPER'
  | 'SYSTEM'
  | 'TOOL'
  | 'USER';

/** REST `service_parameters`. */
export type ChatServiceParametersInput = {
  characterSlug?: string | null | undefined;
  disableThinking?: boolean | null | undefined;
  enableWebCitations?: boolean | null | undefined;
  enableWebScraping?: boolean | null | undefined;
  enableWebSearch?: WebSearchMode | null | undefined;
  enableXSearch?: boolean | null | undefined;
  includeSearchResultsInStream?: boolean | null | undefined;
  /** The operator’s system prompt (REST `include_venice_system_prompt`); default true. */
  includeSystemPrompt?: boolean | null | undefined;
  returnSearchResultsAsDocuments?: boolean | null | undefined;
  stripThinkingResponse?: boolean | null | undefined;
};

/** A tool call of an earlier assistant message. */
export type ChatToolCallInput = {
  /** JSON text. */
  arguments: string;
  id: string;
  name: string;
};

/** A function tool. */
export type ChatToolInput = {
  description?: string | null | undefined;
  name: string;
  /** JSON Schema of the arguments. */
  parameters?: Record<string, unknown> | null | undefined;
  strict?: boolean | null | undefined;
};

/** Each value ≥ 0, or null for no limit; omitted leaves it unchanged. */
export type ConsumptionLimitInput = {
  diem?: string | null | undefined;
  usd?: string | null | undefined;
  vcu?: string | null | undefined;
};

export type CreateApiKeyInput = {
  apiKeyType: ApiKeyType;
  consumptionLimit?: ConsumptionLimitInput | null | undefined;
  /** At most 64 characters. */
  description: string;
  /** "" or null for never, YYYY-MM-DD, or an ISO date-time. */
  expiresAt?: string | null | undefined;
  limitPeriod?: LimitPeriod | null | undefined;
  modelPrivacy?: ModelPrivacy | null | undefined;
};

export type Currency =
  | 'BUNDLED_CREDITS'
  | 'DIEM'
  | 'USD'
  | 'VCU';

/** The fields of POST /image/generate (docs/api.md, Images), in camelCase; no binary answer. */
export type GenerateImageInput = {
  aspectRatio?: string | null | undefined;
  cfgScale?: number | null | undefined;
  embedExifMetadata?: boolean | null | undefined;
  /** Default WEBP. */
  format?: ImageFormat | null | undefined;
  height?: number | null | undefined;
  hideWatermark?: boolean | null | undefined;
  loraStrength?: number | null | undefined;
  model: string;
  negativePrompt?: string | null | undefined;
  prompt: string;
  resolution?: string | null | undefined;
  safeMode?: boolean | null | undefined;
  seed?: number | null | undefined;
  steps?: number | null | undefined;
  stylePreset?: string | null | undefined;
  variants?: number | null | undefined;
  width?: number | null | undefined;
};

export type ImageFormat =
  | 'JPEG'
  | 'PNG'
  | 'WEBP';

export type JobKind =
  | 'AUDIO'
  | 'VIDEO';

export type JobStatus =
  | 'COMPLETED'
  | 'FAILED'
  | 'PROCESSING'
  | 'QUEUED';

/** EPOCH resets daily at 00:00 UTC, MONTH on the 1st (UTC), LIFETIME never. */
export type LimitPeriod =
  | 'EPOCH'
  | 'LIFETIME'
  | 'MONTH';

export type ModelPrivacy =
  | 'ALL'
  | 'PRIVATE_ONLY'
  | 'PRIVATE_TEXT';

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

export type ReasoningEffort =
  | 'HIGH'
  | 'LOW'
  | 'MAX'
  | 'MEDIUM'
  | 'MINIMAL'
  | 'NONE'
  | 'XHIGH';

/** As the REST body of POST /api/v1/audio/speech (without streaming). */
export type SpeechInput = {
  /** 1 to 4096 characters. */
  input: string;
  /** 2 to 32 characters; unsupported languages are ignored. */
  language?: string | null | undefined;
  /** A tts model id, trait or compatibility name; has a default. */
  model?: string | null | undefined;
  /** At most 500 characters; models with supportsPromptParam. */
  prompt?: string | null | undefined;
  /** Default MP3. */
  responseFormat?: AudioFormat | null | undefined;
  /** 0.25 to 4; default 1. */
  speed?: number | null | undefined;
  /** 0 to 2; models with supportsTemperatureParam. */
  temperature?: number | null | undefined;
  /** 0 to 1; models with supportsTopPParam. */
  topP?: number | null | undefined;
  /** One of the model's voices, or a cloned voice `vv_<id>`. */
  voice?: string | null | undefined;
};

export type UpdateApiKeyInput = {
  consumptionLimit?: ConsumptionLimitInput | null | undefined;
  description?: string | null | undefined;
  expiresAt?: string | null | undefined;
  id: string | number;
  limitPeriod?: LimitPeriod | null | undefined;
  modelPrivacy?: ModelPrivacy | null | undefined;
};

export type UpstreamState =
  | 'COOLING_DOWN'
  | 'HEALTHY';

export type UsageFilter = {
  /** Only entries of this API key. */
  apiKeyId?: string | number | null | undefined;
  currency?: Currency | null | undefined;
  /** Entries created at or before this instant. */
  endDate?: string | null | undefined;
  /** Only entries of this model id. */
  modelId?: string | null | undefined;
  /** Only entries of this model type, as entries record it in `UsageEntry.modelType` (LLM, IMAGE, TTS, ASR, VIDEO…); an unknown type matches nothing. */
  modelType?: string | null | undefined;
  /** By creation time, ties by id; default DESC. */
  sortOrder?: UsageSortOrder | null | undefined;
  /** Entries created at or after this instant. */
  startDate?: string | null | undefined;
};

export type UsageSortOrder =
  /** Oldest first. */
  | 'ASC'
  /** Newest first. */
  | 'DESC';

export type WebSearchMode =
  | 'AUTO'
  | 'OFF'
  | 'ON';

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

export type WalletPageQueryVariables = Exact<{
  signedIn: boolean;
}>;


export type WalletPageQuery = { wallet?: { address: string, balance: { balanceUsd: string, canConsume: boolean, minimumTopUpUsd: string, suggestedTopUpUsd: string }, ledger: { edges: Array<{ node: { id: string, type: string, amount: string, balanceAfter: string, createdAt: string, modelId: string } }> } }, topUpRequirements: Array<{ scheme: string, network: string, amount: string, amountUsd: string, asset: string, payTo: string, maxTimeoutSeconds: number }> };

export type WalletBalanceLiveSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type WalletBalanceLiveSubscription = { walletBalance: { balanceUsd: string, canConsume: boolean, minimumTopUpUsd: string, suggestedTopUpUsd: string } };

export type WalletSignInChallengeQueryVariables = Exact<{ [key: string]: never; }>;


export type WalletSignInChallengeQuery = { walletSignInChallenge: { domain: string, uri: string, version: string, nonce: string, issuedAt: string, expirationTime: string, statement: string, chainId: number } };

export type WalletSignInCheckQueryVariables = Exact<{ [key: string]: never; }>;


export type WalletSignInCheckQuery = { wallet: { address: string } };

export type JobFieldsFragment = { id: string, kind: JobKind, model: string, status: JobStatus, progress: number, quote: string, error: string | null, createdAt: string, finishedAt: string | null, downloadUrl: string | null, media: { url: string, contentType: string, byteSize: number } | null };

export type JobsPageQueryVariables = Exact<{ [key: string]: never; }>;


export type JobsPageQuery = { jobs: { edges: Array<{ node: { id: string, kind: JobKind, model: string, status: JobStatus, progress: number, quote: string, error: string | null, createdAt: string, finishedAt: string | null, downloadUrl: string | null, media: { url: string, contentType: string, byteSize: number } | null } }> }, models: Array<{ id: string, name: string, type: ModelType }> };

export type JobLiveSubscriptionVariables = Exact<{
  id: string | number;
}>;


export type JobLiveSubscription = { jobUpdated: { id: string, kind: JobKind, model: string, status: JobStatus, progress: number, quote: string, error: string | null, createdAt: string, finishedAt: string | null, downloadUrl: string | null, media: { url: string, contentType: string, byteSize: number } | null } };

export type JobQueueVideoMutationVariables = Exact<{
  input: Record<string, unknown>;
}>;


export type JobQueueVideoMutation = { queueVideo:
    | { __typename: 'ForbiddenError', code: string, message: string }
    | { __typename: 'InsufficientBalanceError', code: string, message: string }
    | { __typename: 'InvalidModelError', code: string, message: string }
    | { __typename: 'MutationQueueVideoSuccess', data: { id: string, kind: JobKind, model: string, status: JobStatus, progress: number, quote: string, error: string | null, createdAt: string, finishedAt: string | null, downloadUrl: string | null, media: { url: string, contentType: string, byteSize: number } | null } }
    | { __typename: 'RateLimitExceededError', code: string, message: string }
    | { __typename: 'SpendLimitExceededError', code: string, message: string }
    | { __typename: 'UpstreamError', code: string, message: string }
    | { __typename: 'ValidationError', code: string, message: string }
   };

export type JobQueueAudioMutationVariables = Exact<{
  input: Record<string, unknown>;
}>;


export type JobQueueAudioMutation = { queueAudio:
    | { __typename: 'ForbiddenError', code: string, message: string }
    | { __typename: 'InsufficientBalanceError', code: string, message: string }
    | { __typename: 'InvalidModelError', code: string, message: string }
    | { __typename: 'MutationQueueAudioSuccess', data: { id: string, kind: JobKind, model: string, status: JobStatus, progress: number, quote: string, error: string | null, createdAt: string, finishedAt: string | null, downloadUrl: string | null, media: { url: string, contentType: string, byteSize: number } | null } }
    | { __typename: 'RateLimitExceededError', code: string, message: string }
    | { __typename: 'SpendLimitExceededError', code: string, message: string }
    | { __typename: 'UpstreamError', code: string, message: string }
    | { __typename: 'ValidationError', code: string, message: string }
   };

export type JobCompleteMutationVariables = Exact<{
  id: string | number;
}>;


export type JobCompleteMutation = { completeJob:
    | { __typename: 'MutationCompleteJobSuccess', data: { id: string, success: boolean } }
    | { __typename: 'NotFoundError', code: string, message: string }
    | { __typename: 'ValidationError', code: string, message: string }
   };

export type KeysListQueryVariables = Exact<{ [key: string]: never; }>;


export type KeysListQuery = { apiKeys: Array<{ id: string, description: string, apiKeyType: ApiKeyType, last6Chars: string, createdAt: string, expiresAt: string | null, lastUsedAt: string | null, limitPeriod: LimitPeriod, consumptionLimits: { usd: string | null, diem: string | null }, usage: { currentPeriod: { usd: string, diem: string }, trailingSevenDays: { usd: string, diem: string } } }>, rateLimits: { tierId: string, models: Array<{ modelId: string, rateLimits: Array<{ type: string, amount: number }> }> } };

export type KeysCreateMutationVariables = Exact<{
  input: CreateApiKeyInput;
}>;


export type KeysCreateMutation = { createApiKey:
    | { __typename: 'AdminKeyRequiredError', code: string, message: string }
    | { __typename: 'MutationCreateApiKeySuccess', data: { secret: string, apiKey: { id: string, description: string } } }
    | { __typename: 'ValidationError', code: string, message: string }
   };

export type KeysUpdateMutationVariables = Exact<{
  input: UpdateApiKeyInput;
}>;


export type KeysUpdateMutation = { updateApiKey:
    | { __typename: 'MutationUpdateApiKeySuccess', data: { id: string } }
    | { __typename: 'NotFoundError', code: string, message: string }
    | { __typename: 'ValidationError', code: string, message: string }
   };

export type KeysRevokeMutationVariables = Exact<{
  id: string | number;
}>;


export type KeysRevokeMutation = { deleteApiKey:
    | { __typename: 'MutationDeleteApiKeySuccess', data: { id: string, success: boolean } }
    | { __typename: 'ValidationError', code: string, message: string }
   };

export type OperatorAccountsListQueryVariables = Exact<{
  search?: string | null | undefined;
  after?: string | null | undefined;
}>;


export type OperatorAccountsListQuery = { operatorAccounts: { edges: Array<{ node: { id: string, name: string, kind: string, walletAddress: string | null, activeKeyCount: number, createdAt: string, balances: Array<{ currency: Currency, amount: string, available: string }>, spendToday: Array<{ currency: string, amount: string }>, spendLast30Days: Array<{ currency: string, amount: string }> } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type OperatorCreditAccountMutationVariables = Exact<{
  accountId: string | number;
  amount: string;
  currency: Currency;
  reason: string;
}>;


export type OperatorCreditAccountMutation = { operatorCredit:
    | { __typename: 'MutationOperatorCreditSuccess', data: { ledgerEntryId: string, accountId: string, amount: string, currency: Currency, balanceAfter: string, reason: string } }
    | { __typename: 'NotFoundError', code: string, message: string }
    | { __typename: 'ValidationError', code: string, message: string }
   };

export type OperatorDebitAccountMutationVariables = Exact<{
  accountId: string | number;
  amount: string;
  currency: Currency;
  reason: string;
}>;


export type OperatorDebitAccountMutation = { operatorDebit:
    | { __typename: 'InsufficientBalanceError', code: string, message: string }
    | { __typename: 'MutationOperatorDebitSuccess', data: { ledgerEntryId: string, accountId: string, amount: string, currency: Currency, balanceAfter: string, reason: string } }
    | { __typename: 'NotFoundError', code: string, message: string }
    | { __typename: 'ValidationError', code: string, message: string }
   };

export type OperatorAdjustmentFieldsFragment = { ledgerEntryId: string, accountId: string, amount: string, currency: Currency, balanceAfter: string, reason: string };

export type OperatorStatusQueryVariables = Exact<{ [key: string]: never; }>;


export type OperatorStatusQuery = { operatorUpstreamHealth: Array<{ providerId: string, state: UpstreamState, calls: number, failures: number, lastLatencyMs: number | null, recentLatencyMs: number | null, coolingDownUntil: string | null, recentErrors: Array<{ at: string, operation: string, outcome: string, message: string }> }>, operatorJobQueue: { queued: number, processing: number, oldestWaitingSeconds: number | null, depth: Array<{ status: JobStatus, kind: JobKind, modelId: string, jobs: number, oldestCreatedAt: string }> }, operatorUsage: { startDate: string, endDate: string, byDate: Array<{ date: string, usd: string, diem: string }>, byModel: Array<{ modelName: string, totalUsd: string, totalDiem: string, totalUnits: number, unitType: string }> } };

export type OverviewLiveSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type OverviewLiveSubscription = { usageUpdated: { id: string, amount: string, currency: Currency, modelId: string | null, sku: string, lineType: string | null, timestamp: string, apiKeyId: string | null } };

export type PlaygroundModelsQueryVariables = Exact<{ [key: string]: never; }>;


export type PlaygroundModelsQuery = { models: Array<{ id: string, type: ModelType, offline: boolean }> };

export type PlaygroundChatSubscriptionVariables = Exact<{
  input: ChatCompletionInput;
}>;


export type PlaygroundChatSubscription = { chatCompletionStream: { model: string, charged: string | null, currency: Currency | null, choices: Array<{ finishReason: string | null, delta: { content: string | null } }>, usage: { promptTokens: number, completionTokens: number } | null } };

export type PlaygroundImageMutationVariables = Exact<{
  input: GenerateImageInput;
}>;


export type PlaygroundImageMutation = { generateImage:
    | { __typename: 'ForbiddenError', code: string, message: string }
    | { __typename: 'InsufficientBalanceError', code: string, message: string }
    | { __typename: 'InvalidModelError', code: string, message: string }
    | { __typename: 'MutationGenerateImageSuccess', data: { charged: string, currency: Currency, width: number, height: number, images: Array<{ url: string, contentType: string }> } }
    | { __typename: 'RateLimitExceededError', code: string, message: string }
    | { __typename: 'SpendLimitExceededError', code: string, message: string }
    | { __typename: 'UpstreamError', code: string, message: string }
    | { __typename: 'ValidationError', code: string, message: string }
   };

export type PlaygroundSpeechMutationVariables = Exact<{
  input: SpeechInput;
}>;


export type PlaygroundSpeechMutation = { synthesizeSpeech:
    | { __typename: 'ForbiddenError', code: string, message: string }
    | { __typename: 'InsufficientBalanceError', code: string, message: string }
    | { __typename: 'InvalidModelError', code: string, message: string }
    | { __typename: 'MutationSynthesizeSpeechSuccess', data: { charged: string, currency: Currency, characters: number, voice: string, file: { url: string, contentType: string } } }
    | { __typename: 'RateLimitExceededError', code: string, message: string }
    | { __typename: 'SpendLimitExceededError', code: string, message: string }
    | { __typename: 'UpstreamError', code: string, message: string }
    | { __typename: 'ValidationError', code: string, message: string }
   };

export type UsagePageQueryVariables = Exact<{
  filter?: UsageFilter | null | undefined;
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type UsagePageQuery = { usage: { totalCount: number, pageInfo: { hasNextPage: boolean, endCursor: string | null }, edges: Array<{ node: { id: string, timestamp: string, modelId: string | null, modelType: string | null, sku: string, lineType: string | null, units: number, amount: string, currency: Currency, apiKeyId: string | null, apiKey: { description: string } | null } }> } };

export type UsageFilterChoicesQueryVariables = Exact<{ [key: string]: never; }>;


export type UsageFilterChoicesQuery = { apiKeys: Array<{ id: string, description: string }>, models: Array<{ id: string, type: ModelType }> };

export const JobFieldsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"JobFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Job"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"progress"}},{"kind":"Field","name":{"kind":"Name","value":"quote"}},{"kind":"Field","name":{"kind":"Name","value":"error"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"finishedAt"}},{"kind":"Field","name":{"kind":"Name","value":"downloadUrl"}},{"kind":"Field","name":{"kind":"Name","value":"media"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"url"}},{"kind":"Field","name":{"kind":"Name","value":"contentType"}},{"kind":"Field","name":{"kind":"Name","value":"byteSize"}}]}}]}}]} as unknown as DocumentNode<JobFieldsFragment, unknown>;
export const OperatorAdjustmentFieldsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"OperatorAdjustmentFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"OperatorAdjustment"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"ledgerEntryId"}},{"kind":"Field","name":{"kind":"Name","value":"accountId"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"currency"}},{"kind":"Field","name":{"kind":"Name","value":"balanceAfter"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}}]}}]} as unknown as DocumentNode<OperatorAdjustmentFieldsFragment, unknown>;
export const ModelsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Models"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"type"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ModelType"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"models"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"type"},"value":{"kind":"Variable","name":{"kind":"Name","value":"type"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"type"}},{"kind":"Field","name":{"kind":"Name","value":"description"}},{"kind":"Field","name":{"kind":"Name","value":"traits"}},{"kind":"Field","name":{"kind":"Name","value":"capabilities"}},{"kind":"Field","name":{"kind":"Name","value":"pricing"}},{"kind":"Field","name":{"kind":"Name","value":"contextLength"}},{"kind":"Field","name":{"kind":"Name","value":"offline"}},{"kind":"Field","name":{"kind":"Name","value":"privacy"}}]}}]}}]} as unknown as DocumentNode<ModelsQuery, ModelsQueryVariables>;
export const OverviewDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Overview"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"balance"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"balances"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"usd"}},{"kind":"Field","name":{"kind":"Name","value":"diem"}}]}},{"kind":"Field","name":{"kind":"Name","value":"consumptionCurrency"}},{"kind":"Field","name":{"kind":"Name","value":"canConsume"}}]}},{"kind":"Field","name":{"kind":"Name","value":"usageAnalytics"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"lookback"},"value":{"kind":"StringValue","value":"30d","block":false}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"startDate"}},{"kind":"Field","name":{"kind":"Name","value":"endDate"}},{"kind":"Field","name":{"kind":"Name","value":"byDate"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"date"}},{"kind":"Field","name":{"kind":"Name","value":"usd"}},{"kind":"Field","name":{"kind":"Name","value":"diem"}}]}},{"kind":"Field","name":{"kind":"Name","value":"byModel"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"modelName"}},{"kind":"Field","name":{"kind":"Name","value":"modelType"}},{"kind":"Field","name":{"kind":"Name","value":"totalUsd"}},{"kind":"Field","name":{"kind":"Name","value":"totalDiem"}},{"kind":"Field","name":{"kind":"Name","value":"totalUnits"}},{"kind":"Field","name":{"kind":"Name","value":"unitType"}}]}},{"kind":"Field","name":{"kind":"Name","value":"topModels"}},{"kind":"Field","name":{"kind":"Name","value":"byModelDaily"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"date"}},{"kind":"Field","name":{"kind":"Name","value":"values"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"usd"}},{"kind":"Field","name":{"kind":"Name","value":"diem"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"topKeyNames"}},{"kind":"Field","name":{"kind":"Name","value":"byKeyDaily"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"date"}},{"kind":"Field","name":{"kind":"Name","value":"values"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"usd"}},{"kind":"Field","name":{"kind":"Name","value":"diem"}}]}}]}}]}}]}}]} as unknown as DocumentNode<OverviewQuery, OverviewQueryVariables>;
export const SignInAccountDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"SignInAccount"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"account"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<SignInAccountQuery, SignInAccountQueryVariables>;
export const SignInOperatorDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"SignInOperator"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"operatorJobQueue"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"queued"}}]}}]}}]} as unknown as DocumentNode<SignInOperatorQuery, SignInOperatorQueryVariables>;
export const WalletPageDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"WalletPage"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"signedIn"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Boolean"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"wallet"},"directives":[{"kind":"Directive","name":{"kind":"Name","value":"include"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"if"},"value":{"kind":"Variable","name":{"kind":"Name","value":"signedIn"}}}]}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"address"}},{"kind":"Field","name":{"kind":"Name","value":"balance"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"balanceUsd"}},{"kind":"Field","name":{"kind":"Name","value":"canConsume"}},{"kind":"Field","name":{"kind":"Name","value":"minimumTopUpUsd"}},{"kind":"Field","name":{"kind":"Name","value":"suggestedTopUpUsd"}}]}},{"kind":"Field","name":{"kind":"Name","value":"ledger"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"50"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"type"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"balanceAfter"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"modelId"}}]}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"topUpRequirements"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"scheme"}},{"kind":"Field","name":{"kind":"Name","value":"network"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"amountUsd"}},{"kind":"Field","name":{"kind":"Name","value":"asset"}},{"kind":"Field","name":{"kind":"Name","value":"payTo"}},{"kind":"Field","name":{"kind":"Name","value":"maxTimeoutSeconds"}}]}}]}}]} as unknown as DocumentNode<WalletPageQuery, WalletPageQueryVariables>;
export const WalletBalanceLiveDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"WalletBalanceLive"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"walletBalance"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"balanceUsd"}},{"kind":"Field","name":{"kind":"Name","value":"canConsume"}},{"kind":"Field","name":{"kind":"Name","value":"minimumTopUpUsd"}},{"kind":"Field","name":{"kind":"Name","value":"suggestedTopUpUsd"}}]}}]}}]} as unknown as DocumentNode<WalletBalanceLiveSubscription, WalletBalanceLiveSubscriptionVariables>;
export const WalletSignInChallengeDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"WalletSignInChallenge"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"walletSignInChallenge"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"domain"}},{"kind":"Field","name":{"kind":"Name","value":"uri"}},{"kind":"Field","name":{"kind":"Name","value":"version"}},{"kind":"Field","name":{"kind":"Name","value":"nonce"}},{"kind":"Field","name":{"kind":"Name","value":"issuedAt"}},{"kind":"Field","name":{"kind":"Name","value":"expirationTime"}},{"kind":"Field","name":{"kind":"Name","value":"statement"}},{"kind":"Field","name":{"kind":"Name","value":"chainId"}}]}}]}}]} as unknown as DocumentNode<WalletSignInChallengeQuery, WalletSignInChallengeQueryVariables>;
export const WalletSignInCheckDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"WalletSignInCheck"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"wallet"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"address"}}]}}]}}]} as unknown as DocumentNode<WalletSignInCheckQuery, WalletSignInCheckQueryVariables>;
export const JobsPageDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"JobsPage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"jobs"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"50"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"JobFields"}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"models"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"type"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"JobFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Job"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"progress"}},{"kind":"Field","name":{"kind":"Name","value":"quote"}},{"kind":"Field","name":{"kind":"Name","value":"error"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"finishedAt"}},{"kind":"Field","name":{"kind":"Name","value":"downloadUrl"}},{"kind":"Field","name":{"kind":"Name","value":"media"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"url"}},{"kind":"Field","name":{"kind":"Name","value":"contentType"}},{"kind":"Field","name":{"kind":"Name","value":"byteSize"}}]}}]}}]} as unknown as DocumentNode<JobsPageQuery, JobsPageQueryVariables>;
export const JobLiveDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"JobLive"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"jobUpdated"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"JobFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"JobFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Job"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"progress"}},{"kind":"Field","name":{"kind":"Name","value":"quote"}},{"kind":"Field","name":{"kind":"Name","value":"error"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"finishedAt"}},{"kind":"Field","name":{"kind":"Name","value":"downloadUrl"}},{"kind":"Field","name":{"kind":"Name","value":"media"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"url"}},{"kind":"Field","name":{"kind":"Name","value":"contentType"}},{"kind":"Field","name":{"kind":"Name","value":"byteSize"}}]}}]}}]} as unknown as DocumentNode<JobLiveSubscription, JobLiveSubscriptionVariables>;
export const JobQueueVideoDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"JobQueueVideo"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"JSONObject"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"queueVideo"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"MutationQueueVideoSuccess"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"data"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"JobFields"}}]}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Error"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"JobFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Job"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"progress"}},{"kind":"Field","name":{"kind":"Name","value":"quote"}},{"kind":"Field","name":{"kind":"Name","value":"error"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"finishedAt"}},{"kind":"Field","name":{"kind":"Name","value":"downloadUrl"}},{"kind":"Field","name":{"kind":"Name","value":"media"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"url"}},{"kind":"Field","name":{"kind":"Name","value":"contentType"}},{"kind":"Field","name":{"kind":"Name","value":"byteSize"}}]}}]}}]} as unknown as DocumentNode<JobQueueVideoMutation, JobQueueVideoMutationVariables>;
export const JobQueueAudioDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"JobQueueAudio"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"JSONObject"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"queueAudio"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"MutationQueueAudioSuccess"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"data"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"JobFields"}}]}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Error"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"JobFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Job"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"progress"}},{"kind":"Field","name":{"kind":"Name","value":"quote"}},{"kind":"Field","name":{"kind":"Name","value":"error"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"finishedAt"}},{"kind":"Field","name":{"kind":"Name","value":"downloadUrl"}},{"kind":"Field","name":{"kind":"Name","value":"media"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"url"}},{"kind":"Field","name":{"kind":"Name","value":"contentType"}},{"kind":"Field","name":{"kind":"Name","value":"byteSize"}}]}}]}}]} as unknown as DocumentNode<JobQueueAudioMutation, JobQueueAudioMutationVariables>;
export const JobCompleteDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"JobComplete"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"completeJob"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"MutationCompleteJobSuccess"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"data"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"success"}}]}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Error"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<JobCompleteMutation, JobCompleteMutationVariables>;
export const KeysListDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"KeysList"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"apiKeys"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"description"}},{"kind":"Field","name":{"kind":"Name","value":"apiKeyType"}},{"kind":"Field","name":{"kind":"Name","value":"last6Chars"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"expiresAt"}},{"kind":"Field","name":{"kind":"Name","value":"lastUsedAt"}},{"kind":"Field","name":{"kind":"Name","value":"limitPeriod"}},{"kind":"Field","name":{"kind":"Name","value":"consumptionLimits"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"usd"}},{"kind":"Field","name":{"kind":"Name","value":"diem"}}]}},{"kind":"Field","name":{"kind":"Name","value":"usage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"currentPeriod"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"usd"}},{"kind":"Field","name":{"kind":"Name","value":"diem"}}]}},{"kind":"Field","name":{"kind":"Name","value":"trailingSevenDays"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"usd"}},{"kind":"Field","name":{"kind":"Name","value":"diem"}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"rateLimits"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"tierId"}},{"kind":"Field","name":{"kind":"Name","value":"models"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"modelId"}},{"kind":"Field","name":{"kind":"Name","value":"rateLimits"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"type"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}}]}}]}}]}}]} as unknown as DocumentNode<KeysListQuery, KeysListQueryVariables>;
export const KeysCreateDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"KeysCreate"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateApiKeyInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createApiKey"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"MutationCreateApiKeySuccess"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"data"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"secret"}},{"kind":"Field","name":{"kind":"Name","value":"apiKey"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"description"}}]}}]}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Error"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<KeysCreateMutation, KeysCreateMutationVariables>;
export const KeysUpdateDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"KeysUpdate"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"UpdateApiKeyInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"updateApiKey"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"MutationUpdateApiKeySuccess"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"data"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Error"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<KeysUpdateMutation, KeysUpdateMutationVariables>;
export const KeysRevokeDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"KeysRevoke"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"deleteApiKey"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"MutationDeleteApiKeySuccess"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"data"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"success"}}]}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Error"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<KeysRevokeMutation, KeysRevokeMutationVariables>;
export const OperatorAccountsListDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"OperatorAccountsList"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"search"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"operatorAccounts"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"25"}},{"kind":"Argument","name":{"kind":"Name","value":"search"},"value":{"kind":"Variable","name":{"kind":"Name","value":"search"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"walletAddress"}},{"kind":"Field","name":{"kind":"Name","value":"activeKeyCount"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"balances"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"currency"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"available"}}]}},{"kind":"Field","name":{"kind":"Name","value":"spendToday"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"currency"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}},{"kind":"Field","name":{"kind":"Name","value":"spendLast30Days"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"currency"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}}]}}]} as unknown as DocumentNode<OperatorAccountsListQuery, OperatorAccountsListQueryVariables>;
export const OperatorCreditAccountDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"OperatorCreditAccount"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"accountId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"amount"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Decimal"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"currency"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Currency"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"reason"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"operatorCredit"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"accountId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"accountId"}}},{"kind":"Argument","name":{"kind":"Name","value":"amount"},"value":{"kind":"Variable","name":{"kind":"Name","value":"amount"}}},{"kind":"Argument","name":{"kind":"Name","value":"currency"},"value":{"kind":"Variable","name":{"kind":"Name","value":"currency"}}},{"kind":"Argument","name":{"kind":"Name","value":"reason"},"value":{"kind":"Variable","name":{"kind":"Name","value":"reason"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"MutationOperatorCreditSuccess"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"data"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"OperatorAdjustmentFields"}}]}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Error"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"OperatorAdjustmentFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"OperatorAdjustment"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"ledgerEntryId"}},{"kind":"Field","name":{"kind":"Name","value":"accountId"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"currency"}},{"kind":"Field","name":{"kind":"Name","value":"balanceAfter"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}}]}}]} as unknown as DocumentNode<OperatorCreditAccountMutation, OperatorCreditAccountMutationVariables>;
export const OperatorDebitAccountDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"OperatorDebitAccount"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"accountId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"amount"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Decimal"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"currency"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Currency"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"reason"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"operatorDebit"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"accountId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"accountId"}}},{"kind":"Argument","name":{"kind":"Name","value":"amount"},"value":{"kind":"Variable","name":{"kind":"Name","value":"amount"}}},{"kind":"Argument","name":{"kind":"Name","value":"currency"},"value":{"kind":"Variable","name":{"kind":"Name","value":"currency"}}},{"kind":"Argument","name":{"kind":"Name","value":"reason"},"value":{"kind":"Variable","name":{"kind":"Name","value":"reason"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"MutationOperatorDebitSuccess"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"data"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"OperatorAdjustmentFields"}}]}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Error"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"OperatorAdjustmentFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"OperatorAdjustment"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"ledgerEntryId"}},{"kind":"Field","name":{"kind":"Name","value":"accountId"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"currency"}},{"kind":"Field","name":{"kind":"Name","value":"balanceAfter"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}}]}}]} as unknown as DocumentNode<OperatorDebitAccountMutation, OperatorDebitAccountMutationVariables>;
export const OperatorStatusDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"OperatorStatus"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"operatorUpstreamHealth"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"providerId"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"calls"}},{"kind":"Field","name":{"kind":"Name","value":"failures"}},{"kind":"Field","name":{"kind":"Name","value":"lastLatencyMs"}},{"kind":"Field","name":{"kind":"Name","value":"recentLatencyMs"}},{"kind":"Field","name":{"kind":"Name","value":"coolingDownUntil"}},{"kind":"Field","name":{"kind":"Name","value":"recentErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"at"}},{"kind":"Field","name":{"kind":"Name","value":"operation"}},{"kind":"Field","name":{"kind":"Name","value":"outcome"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"operatorJobQueue"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"queued"}},{"kind":"Field","name":{"kind":"Name","value":"processing"}},{"kind":"Field","name":{"kind":"Name","value":"oldestWaitingSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"depth"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"modelId"}},{"kind":"Field","name":{"kind":"Name","value":"jobs"}},{"kind":"Field","name":{"kind":"Name","value":"oldestCreatedAt"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"operatorUsage"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"lookback"},"value":{"kind":"StringValue","value":"30d","block":false}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"startDate"}},{"kind":"Field","name":{"kind":"Name","value":"endDate"}},{"kind":"Field","name":{"kind":"Name","value":"byDate"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"date"}},{"kind":"Field","name":{"kind":"Name","value":"usd"}},{"kind":"Field","name":{"kind":"Name","value":"diem"}}]}},{"kind":"Field","name":{"kind":"Name","value":"byModel"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"modelName"}},{"kind":"Field","name":{"kind":"Name","value":"totalUsd"}},{"kind":"Field","name":{"kind":"Name","value":"totalDiem"}},{"kind":"Field","name":{"kind":"Name","value":"totalUnits"}},{"kind":"Field","name":{"kind":"Name","value":"unitType"}}]}}]}}]}}]} as unknown as DocumentNode<OperatorStatusQuery, OperatorStatusQueryVariables>;
export const OverviewLiveDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"OverviewLive"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"usageUpdated"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"currency"}},{"kind":"Field","name":{"kind":"Name","value":"modelId"}},{"kind":"Field","name":{"kind":"Name","value":"sku"}},{"kind":"Field","name":{"kind":"Name","value":"lineType"}},{"kind":"Field","name":{"kind":"Name","value":"timestamp"}},{"kind":"Field","name":{"kind":"Name","value":"apiKeyId"}}]}}]}}]} as unknown as DocumentNode<OverviewLiveSubscription, OverviewLiveSubscriptionVariables>;
export const PlaygroundModelsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"PlaygroundModels"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"models"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"type"}},{"kind":"Field","name":{"kind":"Name","value":"offline"}}]}}]}}]} as unknown as DocumentNode<PlaygroundModelsQuery, PlaygroundModelsQueryVariables>;
export const PlaygroundChatDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"PlaygroundChat"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ChatCompletionInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"chatCompletionStream"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"choices"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"delta"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"content"}}]}},{"kind":"Field","name":{"kind":"Name","value":"finishReason"}}]}},{"kind":"Field","name":{"kind":"Name","value":"usage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"promptTokens"}},{"kind":"Field","name":{"kind":"Name","value":"completionTokens"}}]}},{"kind":"Field","name":{"kind":"Name","value":"charged"}},{"kind":"Field","name":{"kind":"Name","value":"currency"}}]}}]}}]} as unknown as DocumentNode<PlaygroundChatSubscription, PlaygroundChatSubscriptionVariables>;
export const PlaygroundImageDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"PlaygroundImage"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"GenerateImageInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"generateImage"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"MutationGenerateImageSuccess"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"data"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"charged"}},{"kind":"Field","name":{"kind":"Name","value":"currency"}},{"kind":"Field","name":{"kind":"Name","value":"width"}},{"kind":"Field","name":{"kind":"Name","value":"height"}},{"kind":"Field","name":{"kind":"Name","value":"images"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"url"}},{"kind":"Field","name":{"kind":"Name","value":"contentType"}}]}}]}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Error"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<PlaygroundImageMutation, PlaygroundImageMutationVariables>;
export const PlaygroundSpeechDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"PlaygroundSpeech"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"SpeechInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"synthesizeSpeech"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"MutationSynthesizeSpeechSuccess"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"data"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"charged"}},{"kind":"Field","name":{"kind":"Name","value":"currency"}},{"kind":"Field","name":{"kind":"Name","value":"characters"}},{"kind":"Field","name":{"kind":"Name","value":"voice"}},{"kind":"Field","name":{"kind":"Name","value":"file"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"url"}},{"kind":"Field","name":{"kind":"Name","value":"contentType"}}]}}]}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Error"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<PlaygroundSpeechMutation, PlaygroundSpeechMutationVariables>;
export const UsagePageDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"UsagePage"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"filter"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"UsageFilter"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"usage"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"Variable","name":{"kind":"Name","value":"filter"}}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"totalCount"}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}},{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"timestamp"}},{"kind":"Field","name":{"kind":"Name","value":"modelId"}},{"kind":"Field","name":{"kind":"Name","value":"modelType"}},{"kind":"Field","name":{"kind":"Name","value":"sku"}},{"kind":"Field","name":{"kind":"Name","value":"lineType"}},{"kind":"Field","name":{"kind":"Name","value":"units"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"currency"}},{"kind":"Field","name":{"kind":"Name","value":"apiKeyId"}},{"kind":"Field","name":{"kind":"Name","value":"apiKey"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"description"}}]}}]}}]}}]}}]}}]} as unknown as DocumentNode<UsagePageQuery, UsagePageQueryVariables>;
export const UsageFilterChoicesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"UsageFilterChoices"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"apiKeys"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"description"}}]}},{"kind":"Field","name":{"kind":"Name","value":"models"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"type"}}]}}]}}]} as unknown as DocumentNode<UsageFilterChoicesQuery, UsageFilterChoicesQueryVariables>;