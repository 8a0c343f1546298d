// Placeholder replaced below.
import { defineToolSet } from '../../src/index.js';
export default defineToolSet({ tools: [] });
