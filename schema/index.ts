import { builder } from './builder.ts';
import './scalars.ts';
import './errors.ts';
import './types/enums.ts';
import './types/account.ts';
import './types/api-keys.ts';
import './types/billing.ts';
import './types/catalog.ts';
import './types/characters.ts';
import './types/chat.ts';
import './types/crypto-rpc.ts';
import './types/image-edit.ts';
import './types/images.ts';
import './types/media.ts';
import './types/search.ts';
import './types/speech.ts';
import './types/text-parser.ts';

export const schema = builder.toSchema({ sortSchema: true });
