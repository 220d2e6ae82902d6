import { Option, type Command } from 'commander';
import type { AuthContext } from '../auth/auth-context.ts';
import type { Operations } from '../services.ts';
import { givenKey, type KeyInput } from './key-input.ts';

type Print = (asJson: boolean | undefined, data: unknown, text: string) => void;

const count = (flag: string) => (value: string) => {
  if (!/^\d+$/.test(value)) throw new Error(`${flag} must be a whole number`);
  return Number(value);
};

/** `keys rate-limits`: the operator sets (or clears) one key's own RPM, RPD and TPM on every model. */
export function addRateLimitCommands(
  keys: Command,
  open: () => Promise<Operations>,
  op: AuthContext,
  keyInput: KeyInput | undefined,
  print: Print,
): void {
  keys
    .command('rate-limits')
    .description('Set a key’s own rate limits on every model (over the operator file’s), or clear them')
    .addOption(new Option('--key <apiKey>', 'the key’s secret; - reads it from stdin').conflicts('id'))
    .addOption(new Option('--id <keyId>', 'the key’s id'))
    .option('--rpm <n>', 'requests per minute', count('--rpm'))
    .option('--rpd <n>', 'requests per day', count('--rpd'))
    .option('--tpm <n>', 'tokens per minute (text and embedding models)', count('--tpm'))
    .addOption(new Option('--clear', 'remove the key’s own limits').conflicts(['rpm', 'rpd', 'tpm']))
    .option('--json', 'print JSON only')
    .action(
      async (opts: {
        key?: string;
        id?: string;
        rpm?: number;
        rpd?: number;
        tpm?: number;
        clear?: boolean;
        json?: boolean;
      }) => {
        if (!opts.key && !opts.id) throw new Error('Give --key <apiKey> or --id <keyId>');
        const limits = opts.clear
          ? null
          : {
              ...(opts.rpm !== undefined && { rpm: opts.rpm }),
              ...(opts.rpd !== undefined && { rpd: opts.rpd }),
              ...(opts.tpm !== undefined && { tpm: opts.tpm }),
            };
        const services = await open();
        const secret = await givenKey(opts.key, keyInput);
        const result = await services.apiKeys.setRateLimits(op, { id: opts.id, secret }, limits);
        const text = result.rateLimits
          ? `Key ${result.id}: ${Object.entries(result.rateLimits)
              .map(([field, value]) => `${field.toUpperCase()} ${value}`)
              .join(', ')}`
          : `Key ${result.id}: own rate limits cleared (the operator's apply)`;
        print(opts.json, result, text);
      },
    );
}
