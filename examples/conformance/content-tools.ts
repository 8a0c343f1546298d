// Fixture tools returning each content type, an error result, and progress notifications.
import { defineTool, textResult } from 'durable-mcp';
import { PNG_1X1, WAV_SHORT } from './media.js';

const noArgs = { type: 'object', properties: {} };

export const contentTools = [
  defineTool({
    name: 'test_simple_text',
    description: 'Returns a simple text result',
    inputSchema: noArgs,
    handler: () => textResult('This is a simple text response for testing.'),
  }),
  defineTool({
    name: 'test_image_content',
    description: 'Returns an image',
    inputSchema: noArgs,
    handler: () => ({ content: [{ type: 'image', data: PNG_1X1, mimeType: 'image/png' }] }),
  }),
  defineTool({
    name: 'test_audio_content',
    description: 'Returns audio',
    inputSchema: noArgs,
    handler: () => ({ content: [{ type: 'audio', data: WAV_SHORT, mimeType: 'audio/wav' }] }),
  }),
  defineTool({
    name: 'test_embedded_resource',
    description: 'Returns an embedded resource',
    inputSchema: noArgs,
    handler: () => ({
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'test://embedded-resource',
            mimeType: 'text/plain',
            text: 'This is an embedded resource content.',
          },
        },
      ],
    }),
  }),
  defineTool({
    name: 'test_multiple_content_types',
    description: 'Returns text, an image and a resource',
    inputSchema: noArgs,
    handler: () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: PNG_1X1, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: '{"test":"data","value":123}',
          },
        },
      ],
    }),
  }),
  defineTool({
    name: 'test_error_handling',
    description: 'Always fails with a tool error (isError)',
    inputSchema: noArgs,
    handler: () => textResult('This tool intentionally returns an error for testing', { isError: true }),
  }),
  defineTool({
    name: 'test_tool_with_progress',
    description: 'Reports progress 0, 50, 100 of 100',
    inputSchema: noArgs,
    handler: async (_args, ctx) => {
      for (const step of [0, 50, 100]) {
        ctx.progress(step, 100, `step ${step}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return textResult('Progress complete');
    },
  }),
  defineTool({
    name: 'json_schema_2020_12_tool',
    description: 'Tool with JSON Schema 2020-12 features',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: {
        address: {
          $anchor: 'addressDef',
          type: 'object',
          properties: { street: { type: 'string' }, city: { type: 'string' } },
        },
      },
      properties: {
        name: { type: 'string' },
        address: { $ref: '#/$defs/address' },
        contactMethod: { type: 'string', enum: ['phone', 'email'] },
        phone: { type: 'string' },
        email: { type: 'string' },
      },
      allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
      if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
      then: { required: ['phone'] },
      else: { required: ['email'] },
      additionalProperties: false,
    },
    handler: (args) => textResult(`Received: ${JSON.stringify(args)}`),
  }),
  defineTool({
    name: 'test_custom_header',
    description: 'Echoes a region argument mirrored in the Mcp-Param-Region header',
    inputSchema: {
      type: 'object',
      properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
      required: ['region'],
    },
    handler: (args: { region: string }) => textResult(`region=${args.region}`),
  }),
];
