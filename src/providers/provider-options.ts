import type { ProviderConfig } from '../operator-config/schema.ts';

/** A provider's `options:` parsed by its engine's schema; a bad one stops the start with a clear message. */
export function parseProviderOptions<T>(
  config: ProviderConfig,
  schema: {
    safeParse(
      value: unknown,
    ): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
  },
): T {
  const parsed = schema.safeParse(config.options ?? {});
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `options.${issue.path.map(String).join('.')}: ${issue.message}`);
  throw new Error(`Invalid operator config: provider "${config.id}" (${config.type}): ${problems.join('; ')}`);
}
