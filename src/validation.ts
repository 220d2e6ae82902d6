import type { z } from 'zod';
import { ValidationError } from './errors.ts';

/** Validates input with a zod schema shared by REST and GraphQL; failures become a 400 ValidationError. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what?: string): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw ValidationError.fromZod(result.error, what);
  return result.data;
}
