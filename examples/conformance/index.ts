// The conformance fixture set (`--tools conformance`): every tool, prompt and resource the official suite calls.
import { defineToolSet } from 'durable-mcp';
import { contentTools } from './content-tools.js';
import { diagnosticTools } from './diagnostic-tools.js';
import { mrtrTools } from './mrtr-tools.js';
import { prompts } from './prompts.js';
import { resources, resourceTemplates } from './resources.js';
import { taskTools } from './task-tools.js';
import { legacyTools } from './legacy-tools.js';

export default defineToolSet({
  tools: [...contentTools, ...diagnosticTools, ...mrtrTools, ...taskTools, ...(legacyTools.tools ?? [])],
  prompts,
  resources,
  resourceTemplates,
});
