// Fixture resources: static text, static binary and a URI template.
import { defineResource, defineResourceTemplate } from 'durable-mcp';
import { PNG_1X1 } from './media.js';

export const resources = [
  defineResource({
    uri: 'test://static-text',
    name: 'Static text resource',
    description: 'A static text resource for testing',
    mimeType: 'text/plain',
    read: () => [
      {
        uri: 'test://static-text',
        mimeType: 'text/plain',
        text: 'This is the content of the static text resource.',
      },
    ],
  }),
  defineResource({
    uri: 'test://static-binary',
    name: 'Static binary resource',
    description: 'A static binary resource (a PNG image)',
    mimeType: 'image/png',
    read: () => [{ uri: 'test://static-binary', mimeType: 'image/png', blob: PNG_1X1 }],
  }),
  defineResource({
    uri: 'test://example-resource',
    name: 'Example resource',
    description: 'The resource embedded by test_prompt_with_embedded_resource',
    mimeType: 'text/plain',
    read: () => [
      { uri: 'test://example-resource', mimeType: 'text/plain', text: 'Example resource content.' },
    ],
  }),
];

export const resourceTemplates = [
  defineResourceTemplate({
    uriTemplate: 'test://template/{id}/data',
    name: 'Template resource',
    description: 'A resource whose URI carries an id',
    mimeType: 'application/json',
    complete: { id: (value) => ['123', '456', '789'].filter((v) => v.startsWith(value)) },
    read: (uri, vars) => [
      {
        uri,
        mimeType: 'application/json',
        text: JSON.stringify({ id: vars.id, templateTest: true, data: `Data for ID: ${vars.id}` }),
      },
    ],
  }),
];
