import type { ProviderBinding } from '../catalog/model.ts';
import type {
  ChatCallOptions,
  JsonObject,
  UpstreamChatCompletion,
  UpstreamChatRequest,
  UpstreamChatStream,
} from '../providers/chat/chat-engine.ts';

/** The upstream request body before the gateway sets `model` (the upstream's name of the model). */
export type UpstreamBody = JsonObject & { messages: JsonObject[] };

/**
 * What the chat service needs from the provider layer: the chat gateway (src/providers/chat/chat-gateway.ts)
 * picks the adapter of each of a model's provider bindings in fallback order, with retries before the first byte
 * and cooldowns. Declared here so the service depends on the behaviour, not on the gateway's construction.
 */
export interface ChatUpstreams {
  complete(
    bindings: readonly ProviderBinding[],
    body: Omit<UpstreamChatRequest, 'model'>,
    options: ChatCallOptions,
  ): Promise<{ providerId: string; upstreamModel: string; completion: UpstreamChatCompletion }>;
  stream(
    bindings: readonly ProviderBinding[],
    body: Omit<UpstreamChatRequest, 'model'>,
    options: ChatCallOptions,
  ): Promise<{ providerId: string; upstreamModel: string; stream: UpstreamChatStream }>;
  /** Whether a provider id is configured (a model bound to none of its providers cannot be served). */
  has(providerId: string): boolean;
}
