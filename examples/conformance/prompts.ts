// Fixture prompts (plain, with arguments, embedded resource, image, and MRTR).
import { definePrompt } from 'durable-mcp';
import { PNG_1X1 } from './media.js';

export const prompts = [
  definePrompt({
    name: 'test_simple_prompt',
    description: 'A simple prompt without arguments',
    handler: () => ({
      messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
    }),
  }),
  definePrompt({
    name: 'test_prompt_with_arguments',
    description: 'A prompt with two arguments',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
    complete: {
      arg1: (value) => ['test', 'testing', 'tested', 'paris', 'park'].filter((v) => v.startsWith(value)),
      arg2: (value) => ['alpha', 'beta', 'gamma'].filter((v) => v.startsWith(value)),
    },
    handler: (args) => ({
      messages: [
        {
          role: 'user',
          content: { type: 'text', text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` },
        },
      ],
    }),
  }),
  definePrompt({
    name: 'test_prompt_with_embedded_resource',
    description: 'A prompt that embeds a resource',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
    handler: (args) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: {
              uri: args.resourceUri ?? 'test://example-resource',
              mimeType: 'text/plain',
              text: 'Embedded resource content for testing.',
            },
          },
        },
        { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
      ],
    }),
  }),
  definePrompt({
    name: 'test_prompt_with_image',
    description: 'A prompt with an image',
    handler: () => ({
      messages: [
        { role: 'user', content: { type: 'image', data: PNG_1X1, mimeType: 'image/png' } },
        { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
      ],
    }),
  }),
  definePrompt({
    name: 'test_input_required_result_prompt',
    description: 'A prompt that asks the client for context first (MRTR)',
    handler: (_args, ctx) => {
      const answer = ctx.input('context', {
        method: 'elicitation/create',
        params: {
          message: 'What context should the prompt use?',
          requestedSchema: {
            type: 'object',
            properties: { context: { type: 'string' } },
            required: ['context'],
          },
        },
      });
      const content = answer.content as { context?: unknown } | undefined;
      return {
        messages: [
          { role: 'user', content: { type: 'text', text: `Context: ${String(content?.context ?? 'none')}` } },
        ],
      };
    },
  }),
];
