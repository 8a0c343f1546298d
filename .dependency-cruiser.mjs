// The layer check of `npm test` (`npx depcruise src bench scripts`): the layers of src/ and no cycle anywhere in the
// three; the rules come from the table in scripts/layers.mjs.
import { forbidden } from './scripts/layers.mjs';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: forbidden(),
  options: {
    // Type-only imports count: they are arrows between layers too, and they can close a cycle.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
