import {
  ANALYTICS_MODEL_TYPES,
  ANALYTICS_UNIT_TYPES,
  type AnalyticsModelType,
  type AnalyticsUnitType,
} from './analytics.types.ts';

/*
 * How usage records map onto the analytics' model types (LLM, IMAGE, TTS, ASR, VIDEO) and unit types (tokens,
 * images, chars, minutes, seconds). Usage entries keep their own finer names (AUGMENT, RPC, requests, credits…);
 * analytics only ever report values from these two lists. A model's `totalUnits` counts the lines measured in its
 * unit type, so a chat's web search (one request) is never added to its tokens.
 */

const MODEL_TYPE_ALIASES: Record<string, AnalyticsModelType> = {
  TEXT: 'LLM',
  EMBEDDING: 'LLM',
  // Web search and document parsing are text services that feed a model's prompt.
  AUGMENT: 'LLM',
  UPSCALE: 'IMAGE',
  INPAINT: 'IMAGE',
  SPEECH: 'TTS',
  MUSIC: 'TTS',
  STT: 'ASR',
  TRANSCRIPTION: 'ASR',
};

/** LLM, IMAGE, TTS, ASR, VIDEO (catalog spellings such as "text" or "image" map too); anything else counts as LLM. */
export function contractModelType(value: string): AnalyticsModelType {
  const upper = value.toUpperCase();
  if ((ANALYTICS_MODEL_TYPES as readonly string[]).includes(upper)) return upper as AnalyticsModelType;
  return MODEL_TYPE_ALIASES[upper] ?? 'LLM';
}

const UNIT_ALIASES: Record<string, AnalyticsUnitType> = {
  token: 'tokens',
  image: 'images',
  characters: 'chars',
  char: 'chars',
  second: 'seconds',
  minute: 'minutes',
};

/** The listed unit a usage unit is, or null for units outside the list (requests, credits). */
export function contractUnit(value: string): AnalyticsUnitType | null {
  const lower = value.toLowerCase();
  if ((ANALYTICS_UNIT_TYPES as readonly string[]).includes(lower)) return lower as AnalyticsUnitType;
  return UNIT_ALIASES[lower] ?? null;
}

/** The unit a model type is metered in when its records name none from the list. */
const DEFAULT_UNIT: Record<AnalyticsModelType, AnalyticsUnitType> = {
  LLM: 'tokens',
  IMAGE: 'images',
  TTS: 'chars',
  ASR: 'seconds',
  VIDEO: 'seconds',
};

/** A model's unit type: the record's own when listed, else its model type's. */
export const modelUnit = (modelType: AnalyticsModelType, unitType: string): AnalyticsUnitType =>
  contractUnit(unitType) ?? DEFAULT_UNIT[modelType];

/** Lines priced per request inside a record metered otherwise (a chat's web search is one request, not tokens). */
const REQUEST_LINES = new Set(['Web Search']);

/** The unit one line of a record is measured in (null: outside the list, counted in no total). */
export const lineUnit = (lineType: string, unitType: string): AnalyticsUnitType | null =>
  REQUEST_LINES.has(lineType) ? null : contractUnit(unitType);
