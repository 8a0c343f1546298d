// Fixture tools only the 2025-11-25 scenarios call (logging, sampling and elicitation through server requests).
import {
  defineTool,
  defineToolSet,
  textResult,
  type InputRequest,
  type InputResponse,
  type JsonObject,
} from 'durable-mcp';

const noArgs = { type: 'object', properties: {} };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const elicit = (message: string, properties: JsonObject, required?: string[]): InputRequest => ({
  method: 'elicitation/create',
  params: { message, requestedSchema: { type: 'object', properties, ...(required ? { required } : {}) } },
});
const summary = (a: InputResponse): string =>
  `Elicitation completed: action=${a.action}, content=${JSON.stringify(a.content ?? {})}`;

export const legacyTools = defineToolSet({
  tools: [
    defineTool({
      name: 'test_tool_with_logging',
      description: 'Logs three messages at info level',
      inputSchema: noArgs,
      handler: async (_a, ctx) => {
        ctx.log('info', 'Tool execution started');
        await sleep(50);
        ctx.log('info', 'Tool processing data');
        await sleep(50);
        ctx.log('info', 'Tool execution completed');
        return textResult('Logging complete');
      },
    }),
    defineTool({
      name: 'test_sampling',
      description: 'Asks the client to sample',
      inputSchema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
      handler: (args: { prompt: string }, ctx) => {
        const answer = ctx.input('sample', {
          method: 'sampling/createMessage',
          params: {
            messages: [{ role: 'user', content: { type: 'text', text: args.prompt } }],
            maxTokens: 100,
          },
        });
        return textResult(
          `LLM response: ${String((answer.content as { text?: unknown } | undefined)?.text ?? '')}`,
        );
      },
    }),
    defineTool({
      name: 'test_elicitation',
      description: 'Asks the user for input',
      inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
      handler: (args: { message: string }, ctx) => {
        const answer = ctx.input(
          'info',
          elicit(
            args.message,
            {
              username: { type: 'string', description: "User's response" },
              email: { type: 'string', description: "User's email address" },
            },
            ['username', 'email'],
          ),
        );
        return textResult(
          `User response: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`,
        );
      },
    }),
    defineTool({
      name: 'test_elicitation_sep1034_defaults',
      description: 'Elicitation with defaults for every primitive type',
      inputSchema: noArgs,
      handler: (_a, ctx) =>
        textResult(
          summary(
            ctx.input(
              'defaults',
              elicit('Please review your information', {
                name: { type: 'string', description: 'Name', default: 'John Doe' },
                age: { type: 'integer', description: 'Age', default: 30 },
                score: { type: 'number', description: 'Score', default: 95.5 },
                status: {
                  type: 'string',
                  description: 'Status',
                  enum: ['active', 'inactive', 'pending'],
                  default: 'active',
                },
                verified: { type: 'boolean', description: 'Verified', default: true },
              }),
            ),
          ),
        ),
    }),
    defineTool({
      name: 'test_elicitation_sep1330_enums',
      description: 'Elicitation with the five enum schema variants',
      inputSchema: noArgs,
      handler: (_a, ctx) =>
        textResult(
          summary(
            ctx.input(
              'enums',
              elicit('Please choose', {
                untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
                titledSingle: {
                  type: 'string',
                  oneOf: [
                    { const: 'value1', title: 'First Option' },
                    { const: 'value2', title: 'Second Option' },
                    { const: 'value3', title: 'Third Option' },
                  ],
                },
                legacyEnum: {
                  type: 'string',
                  enum: ['opt1', 'opt2', 'opt3'],
                  enumNames: ['Option One', 'Option Two', 'Option Three'],
                },
                untitledMulti: {
                  type: 'array',
                  items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
                },
                titledMulti: {
                  type: 'array',
                  items: {
                    anyOf: [
                      { const: 'value1', title: 'First Choice' },
                      { const: 'value2', title: 'Second Choice' },
                      { const: 'value3', title: 'Third Choice' },
                    ],
                  },
                },
              }),
            ),
          ),
        ),
    }),
  ],
});
