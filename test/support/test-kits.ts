// Test kits for one test file: each test's kits are closed after it, and a promise the kit might leave hanging is
// raced against a generous real-time bound, so a regression fails the test instead of hanging the suite.
import { afterEach } from 'vitest';
import { createTestKit, type TestKit } from '../../src/testing.js';

/** `kitOf(...)` creates a kit that is closed after the current test. */
export function useTestKits(): (...args: Parameters<typeof createTestKit>) => Promise<TestKit> {
  const kits: TestKit[] = [];
  afterEach(async () => {
    for (const kit of kits.splice(0)) await settlesWithin(kit.close(), 'close');
  });
  return async (...args) => {
    const kit = await createTestKit(...args);
    kits.push(kit);
    return kit;
  };
}

/** The text of a finished task's result, as `tasks/get` shows it. */
export const text = (task: Record<string, unknown>): string =>
  ((task.result as { content: { text: string }[] }).content[0] as { text: string }).text;

/** `promise`, or a rejection naming `what` if it has not settled after `ms` of real time. */
export async function settlesWithin<T>(promise: Promise<T>, what: string, ms = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} still pending after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, bound]);
  } finally {
    clearTimeout(timer);
  }
}
