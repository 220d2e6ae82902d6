import { z } from 'zod';
import { ValidationError } from './errors.ts';

/** A parsed JSON object (not an array, not null): for the hand-written readings of bodies and events. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Validates input with a zod schema shared by REST and GraphQL; failures become a 400 ValidationError. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what?: string): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw ValidationError.fromZod(result.error, what);
  return result.data;
}

/**
 * A string that may reach the database. PostgreSQL text cannot hold the NUL character (U+0000): a statement
 * carrying one fails inside the database, so it is refused here instead, as a 400 naming the field.
 */
export const storedString = (): z.ZodString =>
  z.string().refine((value) => !value.includes('\u0000'), 'Must not contain the NUL character (\\u0000)');
