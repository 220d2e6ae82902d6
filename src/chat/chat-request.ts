import type { CatalogModel } from '../catalog/model.ts';
import { ValidationError } from '../errors.ts';
import type { ModelCapabilities } from '../operator-config/schema.ts';
import type { JsonObject } from '../providers/chat/chat-engine.ts';
import type { ChatCompletionInput, ServiceParametersInput } from './chat.inputs.ts';
import type { EffectiveServiceParameters } from './chat.types.ts';

/*
 * From a validated request and its model to what the upstream gets: capability checks, sampling defaults,
 * reasoning controls and the effective service_parameters.
 */

/** Text models without a configured context length (operator-config default). */
const DEFAULT_CONTEXT_LENGTH = 32_768;

const invalid = (path: (string | number)[], message: string) =>
  new ValidationError(`Invalid request: ${path.join('.')}: ${message}`, [{ path, message }]);

export type EffectiveSettings = Omit<EffectiveServiceParameters, 'web_search_citations'>;

/** Defaults filled in; features this server does not offer (X search, web scraping when the operator turned it off) are echoed as off. */
export function effectiveSettings(
  requested: ServiceParametersInput,
  offers: { readonly webScraping: boolean },
): EffectiveSettings {
  if (requested.enable_e2ee === true)
    throw invalid(['service_parameters', 'enable_e2ee'], 'End-to-end encryption is not available on this server');
  return {
    ...(requested.character_slug !== undefined && { character_slug: requested.character_slug }),
    strip_thinking_response: requested.strip_thinking_response ?? false,
    disable_thinking: requested.disable_thinking ?? false,
    enable_e2ee: false,
    enable_web_search: requested.enable_web_search ?? 'off',
    enable_web_scraping: offers.webScraping && requested.enable_web_scraping === true,
    enable_web_citations: requested.enable_web_citations ?? false,
    include_search_results_in_stream: requested.include_search_results_in_stream ?? false,
    return_search_results_as_documents: requested.return_search_results_as_documents ?? false,
    include_venice_system_prompt: requested.include_venice_system_prompt ?? true,
    enable_x_search: false,
  };
}

export interface UpstreamPlan {
  /** The upstream body without `messages` (added once the prompt is final). */
  readonly body: JsonObject;
  /** The most completion tokens one choice may produce. */
  readonly maxOutputTokens: number;
  /** The model's context length (configured, or the default). */
  readonly contextLength: number;
  readonly choices: number;
  readonly reasoning: boolean;
  readonly splitThinkTags: boolean;
  readonly includeLogprobs: boolean;
}

const numberDefault = (constraints: Record<string, unknown> | undefined, key: string): number | undefined => {
  const value = (constraints?.[key] as { default?: unknown } | undefined)?.default;
  return typeof value === 'number' ? value : undefined;
};

/** Checks the request against the model's capabilities and builds the upstream body. */
export function planUpstream(
  input: ChatCompletionInput,
  model: CatalogModel,
  settings: EffectiveSettings,
): UpstreamPlan {
  const capabilities: ModelCapabilities = model.spec.capabilities ?? {};
  const tools = input.tools && input.tools.length > 0 ? input.tools : undefined;
  if (tools && !capabilities.supportsFunctionCalling)
    throw invalid(['tools'], `Model ${model.id} does not support function calling`);
  if (input.response_format?.type === 'json_schema' && !capabilities.supportsResponseSchema) {
    throw invalid(['response_format'], `Model ${model.id} does not support json_schema structured output`);
  }
  let effort = capabilities.supportsReasoningEffort ? input.reasoning_effort : undefined;
  const efforts = capabilities.reasoningEffortOptions;
  if (effort !== undefined && efforts && effort !== 'none' && !efforts.includes(effort)) {
    throw invalid(['reasoning_effort'], `Model ${model.id} accepts reasoning_effort ${efforts.join(', ')}`);
  }
  const reasoningModel = capabilities.supportsReasoning === true;
  const thinkingOff = settings.disable_thinking || input.reasoning_effort === 'none';
  if (thinkingOff && effort === 'none' && !efforts?.includes('none')) effort = undefined;

  const contextLength = model.contextLength ?? DEFAULT_CONTEXT_LENGTH;
  const requestedMax = input.max_completion_tokens ?? input.max_tokens;
  const maxOutputTokens = Math.min(requestedMax ?? contextLength, contextLength);
  const includeLogprobs = capabilities.supportsLogProbs === true && input.logprobs === true;
  const constraints = model.spec.constraints;

  const body: JsonObject = {
    temperature: input.temperature ?? numberDefault(constraints, 'temperature'),
    top_p: input.top_p ?? numberDefault(constraints, 'top_p'),
    frequency_penalty: input.frequency_penalty,
    presence_penalty: input.presence_penalty,
    repetition_penalty: input.repetition_penalty,
    min_p: input.min_p,
    top_k: input.top_k,
    seed: input.seed,
    stop: input.stop,
    stop_token_ids: input.stop_token_ids,
    n: input.n,
    // max_tokens is what every OpenAI-compatible server accepts (vLLM, llama.cpp, Ollama).
    max_tokens: requestedMax,
    logprobs: includeLogprobs ? true : undefined,
    top_logprobs: includeLogprobs ? input.top_logprobs : undefined,
    reasoning_effort: effort,
    // vLLM / SGLang chat templates of hybrid reasoning models (Qwen3, GLM…) switch thinking off this way.
    chat_template_kwargs: reasoningModel && thinkingOff ? { enable_thinking: false } : undefined,
    response_format: input.response_format,
    tools,
    tool_choice: tools ? input.tool_choice : undefined,
    parallel_tool_calls: tools ? input.parallel_tool_calls : undefined,
    stream_options: input.stream ? { include_usage: true } : undefined,
  };
  for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
  return {
    body,
    maxOutputTokens,
    contextLength,
    choices: input.n ?? 1,
    reasoning: reasoningModel && !thinkingOff,
    splitThinkTags: reasoningModel,
    includeLogprobs,
  };
}

const THINK_BLOCK = /<think>[\s\S]*?<\/think>\s*/g;

/** strip_thinking_response: removes inline `<think>` blocks a model left in its answer. */
export const stripThinking = (content: string | null): string | null =>
  content === null ? null : content.replace(THINK_BLOCK, '');
