import { modelPrivacyOf, type AuthContext } from '../../auth/auth-context.ts';
import { requireAccount } from '../../auth/permissions.ts';
import type { CatalogService } from '../../catalog/catalog.service.ts';
import type { CatalogModel } from '../../catalog/model.ts';
import type { Database } from '../../db/database.ts';
import { parseInput } from '../../validation.ts';
import { FALLBACK_VOICE, resolveSpeechModel, specOf } from './speech-model.ts';
import { VoicesQueryInput } from './speech.inputs.ts';
import { listAccountVoices } from './voices.repository.ts';

/*
 * GET /audio/voices: every voice the caller can pass as `voice` to /audio/speech, as one list — the built-in voices
 * of each speech model and the caller's own live cloned voices (never another account's), optionally for one model.
 */

export interface ListedVoice {
  readonly id: string;
  readonly model: string;
  readonly type: 'builtin' | 'cloned';
  /** Built-in voices: whether it is the model's default voice. */
  readonly isDefault?: boolean;
  /** Cloned voices only. */
  readonly sampleSeconds?: number;
  readonly createdAt?: Date;
  readonly expiresAt?: Date;
}

export async function listVoicesFor(
  deps: { readonly catalog: CatalogService; readonly db: Database; readonly now: () => Date },
  auth: AuthContext,
  raw: unknown,
): Promise<ListedVoice[]> {
  const account = requireAccount(auth);
  const { model: name } = parseInput(VoicesQueryInput, raw);
  const models =
    name === undefined
      ? (await deps.catalog.listModels('tts')).filter(
          // A key restricted to private models is shown only the voices it may use.
          (model) => modelPrivacyOf(account) !== 'PRIVATE_ONLY' || model.privacy === 'private',
        )
      : [await resolveSpeechModel(deps.catalog, account, name)];
  const builtIn = models.flatMap(builtInVoices);
  const ids = new Set(models.map((model) => model.id));
  const cloned = (await listAccountVoices(deps.db, account.accountId, deps.now()))
    .filter((voice) => name === undefined || ids.has(voice.modelId))
    .map((voice): ListedVoice => ({
      id: voice.id,
      model: voice.modelId,
      type: 'cloned',
      sampleSeconds: voice.sampleSeconds,
      createdAt: voice.createdAt,
      expiresAt: voice.expiresAt,
    }));
  return [...builtIn, ...cloned];
}

/** A model's own voices; a model that lists none speaks with its default voice only. */
function builtInVoices(model: CatalogModel): ListedVoice[] {
  const spec = specOf(model);
  const defaultVoice = spec.default_voice ?? FALLBACK_VOICE;
  const voices = spec.voices && spec.voices.length > 0 ? spec.voices : [defaultVoice];
  return voices.map((id) => ({ id, model: model.id, type: 'builtin', isDefault: id === defaultVoice }));
}
