/**
 * The root fields that charge the caller, in one place: a document may run at most GRAPHQL_MAX_PAID_FIELDS of
 * them (schema/limits.ts). Queries never charge (docs/api.md: every paid operation is a mutation or a
 * subscription). Every mutation and subscription is listed in one of the two sets; test/graphql/limits.test.ts
 * fails on a new one until it is.
 */
export const PAID_ROOT_FIELDS: ReadonlySet<string> = new Set([
  'Mutation.chatCompletion',
  'Mutation.cloneVoice',
  'Mutation.createEmbeddings',
  'Mutation.createResponse',
  'Mutation.editImage',
  'Mutation.generateImage',
  'Mutation.parseDocument',
  'Mutation.queueAudio',
  'Mutation.queueVideo',
  'Mutation.removeBackground',
  'Mutation.rpcCall',
  'Mutation.scrape',
  'Mutation.search',
  'Mutation.synthesizeSpeech',
  'Mutation.transcribeAudio',
  'Mutation.upscaleImage',
  'Subscription.chatCompletionStream',
]);

/** The mutations and subscriptions that charge nothing. */
export const FREE_ROOT_FIELDS: ReadonlySet<string> = new Set([
  'Mutation.completeJob',
  'Mutation.createApiKey',
  'Mutation.createWebhook',
  'Mutation.deleteApiKey',
  'Mutation.deleteWebhook',
  'Mutation.operatorCredit',
  'Mutation.operatorDebit',
  'Mutation.sendWebhookTest',
  'Mutation.setWebhookSettings',
  'Mutation.updateApiKey',
  'Mutation.updateWebhook',
  'Subscription.jobUpdated',
  'Subscription.usageUpdated',
  'Subscription.walletBalance',
]);
