// Types of bench/tools.mjs, the tool module that `serve --tools` and the push server load.
import type { ToolSet } from '../dist/src/index.js';

export declare const TASK_TTL_MS: number;
export declare const SATURATED_KEY: string;
export declare const tools: NonNullable<ToolSet['tools']>;
