import { scaled } from './time-scale.ts';

/** Polls until `check` passes or the deadline (for effects that happen after an answer: events, background writes). */
export async function eventually(check: () => Promise<void>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + scaled(timeoutMs);
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}
