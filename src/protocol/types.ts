// Protocol-level shapes used by tool, prompt and resource authors (2026-07-28).
import type { JsonObject, JsonValue } from '../json.js';

export type { JsonObject, JsonValue };

export interface Annotations {
  audience?: ('user' | 'assistant')[];
  priority?: number;
  lastModified?: string;
}

export interface TextContent {
  type: 'text';
  text: string;
  annotations?: Annotations;
  _meta?: JsonObject;
}
export interface ImageContent {
  type: 'image';
  data: string;
  mimeType: string;
  annotations?: Annotations;
  _meta?: JsonObject;
}
export interface AudioContent {
  type: 'audio';
  data: string;
  mimeType: string;
  annotations?: Annotations;
  _meta?: JsonObject;
}
export interface ResourceLink {
  type: 'resource_link';
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  annotations?: Annotations;
  _meta?: JsonObject;
}
export type ResourceContents =
  | { uri: string; mimeType?: string; text: string; _meta?: JsonObject }
  | { uri: string; mimeType?: string; blob: string; _meta?: JsonObject };
export interface EmbeddedResource {
  type: 'resource';
  resource: ResourceContents;
  annotations?: Annotations;
  _meta?: JsonObject;
}
export type ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource;

export interface CallToolResult {
  content: ContentBlock[];
  structuredContent?: JsonValue;
  isError?: boolean;
  _meta?: JsonObject;
}

export type InputRequest =
  | { method: 'elicitation/create'; params: JsonObject }
  | { method: 'sampling/createMessage'; params: JsonObject }
  | { method: 'roots/list'; params?: JsonObject };
export type InputRequests = Record<string, InputRequest>;
/** An answer to an InputRequest: an ElicitResult, CreateMessageResult or ListRootsResult. */
export type InputResponse = JsonObject;
export type InputResponses = Record<string, InputResponse>;

export interface Icon {
  src: string;
  mimeType?: string;
  sizes?: string[];
  theme?: 'light' | 'dark';
}

export interface PromptMessage {
  role: 'user' | 'assistant';
  content: ContentBlock;
}
export interface GetPromptResult {
  description?: string;
  messages: PromptMessage[];
  _meta?: JsonObject;
}

export interface ReadResourceResult {
  contents: ResourceContents[];
  _meta?: JsonObject;
}

export const text = (value: string): TextContent => ({ type: 'text', text: value });

/** Shorthand for a one-block text result. */
export const textResult = (value: string, extra: Partial<CallToolResult> = {}): CallToolResult => ({
  content: [text(value)],
  ...extra,
});
