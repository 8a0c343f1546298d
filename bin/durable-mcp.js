#!/usr/bin/env node
// The `durable-mcp` command (runs the compiled CLI from dist/).
import { main } from '../dist/src/cli/main.js';

const code = await main(process.argv.slice(2));
if (code !== 0) process.exitCode = code;
