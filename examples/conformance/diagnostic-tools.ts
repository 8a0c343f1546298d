// Fixture tools the stateless-core scenario probes: capabilities, logging, streams and list changes.
import { defineTool, textResult } from 'durable-mcp';

const noArgs = { type: 'object', properties: {} };

export const diagnosticTools = [
  defineTool({
    name: 'test_missing_capability',
    description: 'Needs the sampling capability (answers -32021 without it)',
    inputSchema: noArgs,
    handler: (_args, ctx) => {
      const answer = ctx.input('summary', {
        method: 'sampling/createMessage',
        params: {
          messages: [{ role: 'user', content: { type: 'text', text: 'Summarise.' } }],
          maxTokens: 50,
        },
      });
      return textResult(`sampled: ${JSON.stringify(answer)}`);
    },
  }),
  defineTool({
    name: 'test_streaming_elicitation',
    description: 'Asks for input through MRTR, never through a request on the stream',
    inputSchema: noArgs,
    handler: (_args, ctx) => {
      const answer = ctx.input('confirmation', {
        method: 'elicitation/create',
        params: {
          message: 'Please confirm',
          requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
        },
      });
      return textResult(`confirmed: ${answer.action}`);
    },
  }),
  defineTool({
    name: 'test_logging_tool',
    description: 'Logs at info level (only when the request asked for logs)',
    inputSchema: noArgs,
    handler: (_args, ctx) => {
      ctx.log('info', 'Tool execution started', 'conformance');
      ctx.log('info', 'Tool processing data', 'conformance');
      ctx.log('info', 'Tool execution completed', 'conformance');
      return textResult('Logging complete');
    },
  }),
  defineTool({
    name: 'test_trigger_tool_change',
    description: 'Announces that the tool list changed',
    inputSchema: noArgs,
    handler: (_args, ctx) => {
      ctx.server.listChanged('tools');
      return textResult('tools/list_changed sent');
    },
  }),
  defineTool({
    name: 'test_trigger_prompt_change',
    description: 'Announces that the prompt list changed',
    inputSchema: noArgs,
    handler: (_args, ctx) => {
      ctx.server.listChanged('prompts');
      return textResult('prompts/list_changed sent');
    },
  }),
];
