// The canonical durable-task example: prepare an outline, ask for approval, then write the report.
import { defineTool, textResult } from 'durable-mcp';

const SECTIONS: Record<string, string[]> = {
  small: ['Summary', 'Findings'],
  medium: ['Summary', 'Background', 'Findings', 'Next steps'],
  large: ['Summary', 'Background', 'Method', 'Findings', 'Risks', 'Next steps'],
};

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/** How long preparing the outline takes (ms); DURABLE_MCP_DEMO_OUTLINE_MS shortens it in tests. */
const outlineMs = (): number => Number(process.env.DURABLE_MCP_DEMO_OUTLINE_MS ?? 1500);

export const generateReport = defineTool<{ size?: 'small' | 'medium' | 'large' }>({
  name: 'generate_report',
  title: 'Generate a report',
  description: 'Prepares an outline, asks you to approve it, then writes the report. Runs as a durable task.',
  inputSchema: {
    type: 'object',
    properties: { size: { type: 'string', enum: ['small', 'medium', 'large'], default: 'small' } },
  },
  outputSchema: {
    type: 'object',
    properties: { size: { type: 'string' }, approved: { type: 'boolean' }, sections: { type: 'array' } },
    required: ['size', 'approved'],
  },
  task: { support: 'optional', ttlMs: 3_600_000, pollIntervalMs: 500 },
  handler: async ({ size = 'small' }, ctx) => {
    const sections = await ctx.step('outline', async () => {
      await ctx.status('Preparing report outline.');
      await sleep(outlineMs(), ctx.signal);
      return SECTIONS[size] ?? [];
    });
    const answer = ctx.input('approve_outline', {
      method: 'elicitation/create',
      params: {
        message: `Approve this outline for a ${size} report? ${sections.join(' / ')}`,
        requestedSchema: {
          type: 'object',
          properties: { approved: { type: 'boolean', title: 'Approve the outline' } },
          required: ['approved'],
        },
      },
    });
    const content = answer.content as { approved?: unknown } | undefined;
    if (answer.action !== 'accept' || content?.approved !== true) {
      return textResult(`Report not written: the outline was declined.`, {
        structuredContent: { size, approved: false },
      });
    }
    await ctx.status('Writing the report.');
    const report = await ctx.step('write', () => sections.map((s, i) => `${i + 1}. ${s}: done.`).join('\n'));
    return textResult(`${size} report\n${report}`, { structuredContent: { size, approved: true, sections } });
  },
});
