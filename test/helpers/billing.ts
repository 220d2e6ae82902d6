import { augmentUsage } from '../../src/augment/pricing.ts';
import { operator, type AuthContext } from '../../src/auth/auth-context.ts';
import { addToDailyRollups, insertUsageEntries, type UsageEntryInsert } from '../../src/billing/billing.repository.ts';
import { priceIn, type Price, type SettledCharge, type Usage } from '../../src/billing/billing.types.ts';
import { parseNano, type Currency } from '../../src/billing/money.ts';
import { utcDay } from '../../src/billing/periods.ts';
import type { Database } from '../../src/db/database.ts';
import type { Services } from '../../src/services.ts';

/** A usage entry as GET /billing/usage returns it. */
export interface UsageEntryWire {
  timestamp: string;
  sku: string;
  pricePerUnitUsd: number;
  units: number;
  amount: number;
  currency: string;
  notes: string;
  inferenceDetails: {
    requestId: string;
    inferenceExecutionTime: number;
    promptTokens?: number;
    completionTokens?: number;
  } | null;
}

/** One usage line as the acceptance checks expect to find it again everywhere. */
export interface ExpectedLine {
  readonly keyId: string;
  readonly currency: Currency;
  readonly model: string;
  readonly lineType: string;
  readonly sku: string;
  readonly amount: bigint;
  readonly units: string;
  readonly entryId: string;
}

const price = (usd: string, diem: string): Price => ({ usd: parseNano(usd), diem: parseNano(diem) });

function llmUsage(requestId: string): Usage {
  return {
    modelId: 'lagoon-llm',
    modelType: 'LLM',
    unitType: 'tokens',
    notes: 'Chat completion',
    lines: [
      {
        sku: 'lagoon-llm-input-mtoken',
        lineType: 'Input',
        units: '1200',
        pricePerUnitUsd: '0.000001',
        cost: price('0.0012', '0.0008'),
      },
      {
        sku: 'lagoon-llm-output-mtoken',
        lineType: 'Output',
        units: '300',
        pricePerUnitUsd: '0.000003',
        cost: price('0.0009', '0.0006'),
      },
    ],
    inferenceDetails: { requestId, inferenceExecutionTime: 812, promptTokens: 1200, completionTokens: 300 },
  };
}

const imageUsage = (requestId: string): Usage => ({
  modelId: 'lagoon-image',
  modelType: 'image',
  unitType: 'images',
  notes: '=cmd|" /C calc"!A0 and, "quotes"\nsecond line',
  lines: [{ sku: 'lagoon-image-generation', units: '1', pricePerUnitUsd: '0.04', cost: price('0.04', '0.03') }],
  inferenceDetails: { requestId, inferenceExecutionTime: 2300 },
});

const sumOf = (usage: Usage): Price =>
  usage.lines.reduce((sum, line) => ({ usd: sum.usd + line.cost.usd, diem: sum.diem + line.cost.diem }), {
    usd: 0n,
    diem: 0n,
  });

/**
 * The acceptance scenario: web search and text parser charges (the augment price) on an INFERENCE key, chat
 * charges (Input and Output lines) on the ADMIN key and an image on the INFERENCE key, across DIEM (until it runs
 * out) and USD. Returns every line charged, so the export, CSV, analytics and balance can be checked against it.
 */
export async function chargeScenario(
  services: Services,
  accounts: { admin: AuthContext; inference: AuthContext },
): Promise<ExpectedLine[]> {
  const expected: ExpectedLine[] = [];
  const run = async (auth: AuthContext, usage: Usage) => {
    const { charge } = await services.billing.runMetered(auth, {
      maxCost: sumOf(usage),
      run: async () => undefined,
      usage: () => usage,
    });
    record(expected, auth, usage, charge);
  };
  const search = augmentUsage('augment-web-search', 'Web search (brave), 10 results', {
    requestId: 'req-search',
    executionTimeMs: 120,
  });
  const parser = augmentUsage('augment-text-parser', 'PDF document, 812 tokens', {
    requestId: 'req-parser',
    executionTimeMs: 45,
  });
  await run(accounts.inference, search); // DIEM 0.012 → 0.002
  await run(accounts.admin, llmUsage('req-llm-1')); // DIEM → 0.0006
  await run(accounts.admin, llmUsage('req-llm-2')); // USD from here on
  await run(accounts.admin, llmUsage('req-llm-3'));
  await run(accounts.inference, parser);
  await run(accounts.inference, search);
  await run(accounts.inference, imageUsage('req-image'));
  return expected;
}

export const SCENARIO_CREDIT = { USD: '5', DIEM: '0.012' } as const;

function record(expected: ExpectedLine[], auth: AuthContext, usage: Usage, charge: SettledCharge): void {
  if (auth.kind !== 'apiKey') throw new Error('expected an API key');
  usage.lines.forEach((line, index) => {
    expected.push({
      keyId: auth.apiKey.id,
      currency: charge.currency,
      model: usage.modelId ?? usage.modelType ?? '',
      lineType: line.lineType ?? '',
      sku: line.sku,
      amount: -priceIn(line.cost, charge.currency),
      units: line.units,
      entryId: charge.usageEntryIds[index] ?? '',
    });
  });
}

export interface SeedEntry {
  readonly at: string;
  readonly currency: Currency;
  readonly amount: string;
  readonly apiKeyId?: string | null;
  readonly model?: string;
  /** Default LLM. */
  readonly modelType?: string;
  readonly lineType?: string;
  readonly sku?: string;
}

/**
 * Entries at chosen instants, written with the money core's own writers (entries and daily rollups in one
 * transaction), as settlement would have written them at that time.
 */
export async function seedEntries(db: Database, accountId: string, entries: readonly SeedEntry[]): Promise<void> {
  const rows: UsageEntryInsert[] = entries.map((entry, index) => ({
    accountId,
    apiKeyId: entry.apiKeyId ?? null,
    reservationId: null,
    createdAt: new Date(entry.at),
    sku: entry.sku ?? `seed-sku-${index}`,
    modelId: entry.model ?? 'seed-model',
    modelType: entry.modelType ?? 'LLM',
    unitType: 'tokens',
    lineType: entry.lineType ?? null,
    pricePerUnitUsd: '0.001',
    units: String(index + 1),
    amount: -parseNano(entry.amount),
    currency: entry.currency,
    notes: `seed ${index}`,
    requestId: `seed-${index}`,
    inferenceDetails: { requestId: `seed-${index}`, inferenceExecutionTime: index },
  }));
  await db.transaction().execute(async (trx) => {
    await insertUsageEntries(trx, rows);
    const days = new Map<string, UsageEntryInsert[]>();
    for (const row of rows) days.set(utcDay(row.createdAt), [...(days.get(utcDay(row.createdAt)) ?? []), row]);
    for (const [day, list] of days) await addToDailyRollups(trx, day, list);
  });
}

/** A funded account with its ADMIN key and one INFERENCE key, both authenticated. */
export async function scenarioAccount(services: Services, name: string) {
  const op = operator();
  const { account, adminKey } = await services.accounts.create(op, { name });
  for (const [currency, amount] of Object.entries(SCENARIO_CREDIT))
    await services.accounts.credit(op, { accountId: account.id, currency, amount });
  const admin = await services.auth.authenticate({ authorization: `Bearer ${adminKey.secret}` }, 'setup');
  const created = await services.apiKeys.create(admin, { apiKeyType: 'INFERENCE', description: `${name} inference` });
  const inference = await services.auth.authenticate({ authorization: `Bearer ${created.secret}` }, 'setup');
  if (admin.kind !== 'apiKey' || inference.kind !== 'apiKey') throw new Error('expected API key contexts');
  return {
    accountId: account.id,
    adminSecret: adminKey.secret,
    inferenceSecret: created.secret,
    admin,
    inference,
    adminKeyId: admin.apiKey.id,
    inferenceKeyId: inference.apiKey.id,
  };
}

/** RFC 4180 CSV (quoted fields, doubled quotes, CRLF or LF) into rows of cells. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i += 1;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += c;
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell]);
  return rows;
}

/** Sums per group of a list, exactly. */
export function sumBy<T>(
  items: readonly T[],
  group: (item: T) => string,
  amount: (item: T) => bigint,
): Map<string, bigint> {
  const sums = new Map<string, bigint>();
  for (const item of items) sums.set(group(item), (sums.get(group(item)) ?? 0n) + amount(item));
  return sums;
}

/**
 * Charges in several units on one key: a chat with a web search (tokens plus one search request), a web search
 * on its own (a request) and a crypto RPC call (credits). Analytics must never add these units together.
 */
export async function chargeMixedUnits(services: Services, auth: AuthContext): Promise<void> {
  const chat: Usage = {
    modelId: 'mixed-llm',
    modelType: 'LLM',
    unitType: 'tokens',
    notes: 'Chat completion with web search',
    lines: [
      {
        sku: 'mixed-llm-llm-input-mtoken',
        lineType: 'Input',
        units: '1000',
        pricePerUnitUsd: '0.000001',
        cost: price('0.001', '0.001'),
      },
      {
        sku: 'mixed-llm-llm-output-mtoken',
        lineType: 'Output',
        units: '200',
        pricePerUnitUsd: '0.000002',
        cost: price('0.0004', '0.0004'),
      },
      {
        sku: 'augment-web-search',
        lineType: 'Web Search',
        units: '1',
        pricePerUnitUsd: '0.01',
        cost: price('0.01', '0.01'),
      },
    ],
    inferenceDetails: {
      requestId: 'req-mixed-chat',
      inferenceExecutionTime: 300,
      promptTokens: 1000,
      completionTokens: 200,
    },
  };
  const rpc: Usage = {
    modelId: 'crypto-rpc-ethereum-mainnet',
    modelType: 'RPC',
    unitType: 'credits',
    notes: 'JSON-RPC on ethereum-mainnet: 2 calls',
    lines: [
      {
        sku: 'crypto-rpc-ethereum-mainnet',
        lineType: 'Credits',
        units: '40',
        pricePerUnitUsd: '0.000000625',
        cost: price('0.000025', '0.000025'),
      },
    ],
    inferenceDetails: { requestId: 'req-mixed-rpc', inferenceExecutionTime: 20 },
  };
  for (const usage of [
    chat,
    augmentUsage('augment-web-search', 'Web search (brave), 10 results', {
      requestId: 'req-mixed-search',
      executionTimeMs: 90,
    }),
    rpc,
  ]) {
    await services.billing.runMetered(auth, { maxCost: sumOf(usage), run: async () => undefined, usage: () => usage });
  }
}
