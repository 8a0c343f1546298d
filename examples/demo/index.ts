// The demo tool set (`--tools demo`): small tools that show the registration API and MRTR.
import { defineTool, defineToolSet, textResult } from 'durable-mcp';
import { generateReport } from './generate-report.js';
import { remindMe } from './remind-me.js';

const echo = defineTool<{ text: string }>({
  name: 'echo',
  title: 'Echo',
  description: 'Returns the text it was given.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  annotations: { readOnlyHint: true, idempotentHint: true },
  handler: ({ text }) => textResult(text),
});

const add = defineTool<{ a: number; b: number }>({
  name: 'add',
  title: 'Add two numbers',
  description: 'Adds a and b.',
  inputSchema: {
    type: 'object',
    properties: { a: { type: 'number' }, b: { type: 'number' } },
    required: ['a', 'b'],
  },
  outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
  annotations: { readOnlyHint: true, idempotentHint: true },
  handler: ({ a, b }) => textResult(String(a + b), { structuredContent: { sum: a + b } }),
});

const greetPerson = defineTool({
  name: 'greet_person',
  title: 'Greet a person (asks for their name)',
  description: 'Asks the user for a name through elicitation, then greets them.',
  handler: (_args, ctx) => {
    const answer = ctx.input('name', {
      method: 'elicitation/create',
      params: {
        message: 'Whom should I greet?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      },
    });
    if (answer.action !== 'accept') return textResult('No name given; nobody greeted.');
    const content = answer.content as { name?: unknown } | undefined;
    return textResult(`Hello, ${String(content?.name ?? 'stranger')}!`);
  },
});

const wait = defineTool<{ ms: number }>({
  name: 'wait',
  title: 'Wait',
  description:
    'Waits the given milliseconds (at most 60000), then answers; stops early if the client goes away.',
  inputSchema: {
    type: 'object',
    properties: { ms: { type: 'integer', minimum: 0, maximum: 60_000 } },
    required: ['ms'],
  },
  handler: async ({ ms }, ctx) => {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return textResult(ctx.signal.aborted ? 'interrupted' : `waited ${ms} ms`);
  },
});

export default defineToolSet({ tools: [generateReport, remindMe, echo, add, greetPerson, wait] });
