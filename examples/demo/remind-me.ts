// A durable wait and a retried step: wait until the reminder is due (no process held meanwhile), then deliver it,
// retrying a failing delivery with backoff (each wait between attempts kept in the store).
import { defineTool, textResult } from 'durable-mcp';

export const remindMe = defineTool<{ text: string; inSeconds?: number; flakyAttempts?: number }>({
  name: 'remind_me',
  title: 'Remind me later',
  description:
    'Waits the given seconds without holding a process, then delivers the reminder, retrying a failed delivery ' +
    'with backoff. flakyAttempts makes the first deliveries fail, to show the retries. Runs as a durable task.',
  inputSchema: {
    type: 'object',
    properties: {
      text: { type: 'string' },
      inSeconds: { type: 'integer', minimum: 0, maximum: 604_800, default: 60 },
      flakyAttempts: { type: 'integer', minimum: 0, maximum: 4, default: 0 },
    },
    required: ['text'],
  },
  task: { support: 'optional', ttlMs: 8 * 86_400_000 },
  handler: async ({ text, inSeconds = 60, flakyAttempts = 0 }, ctx) => {
    await ctx.sleep('until_due', inSeconds * 1_000);
    const delivered = await ctx.step(
      'deliver',
      ({ attempt }) => {
        if (attempt <= flakyAttempts) throw new Error(`delivery channel unavailable (attempt ${attempt})`);
        return `Reminder: ${text}`;
      },
      { retry: { maxAttempts: 5, initialDelayMs: 30_000, backoffFactor: 2, jitter: 0 } },
    );
    return textResult(delivered);
  },
});
