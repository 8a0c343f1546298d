// What a tool, prompt or resource handler sees of the request it serves (defined in tool-types.ts).
export type { AuthInfo, HandlerContext, ServerControl } from './tool-types.js';
