// The layers of src/ and the imports allowed between them, written once: .dependency-cruiser.mjs turns this table
// into rules and docs/architecture.md shows it (test/layers.test.ts keeps the two equal).

/**
 * What each layer may import besides itself: layers, `<layer> (types)` for type-only imports, the restricted
 * packages it uses (see `packages`), or `*` for every layer and package. Rows are in the order of the table in
 * docs/architecture.md.
 */
export const layers = {
  wire: [],
  protocol: ['wire', 'tasks'],
  tasks: [],
  stores: ['tasks', 'better-sqlite3', 'pg'],
  worker: ['tasks'],
  'transport/http': ['protocol', 'auth', 'wire', 'node:http'],
  'transport/stdio': ['protocol', 'auth', 'wire'],
  // wire: the HeaderLookup an authenticator reads; tasks: the AdminScope an operator's credential grants
  auth: ['protocol (types)', 'wire (types)', 'tasks (types)'],
  observability: ['tasks', 'wire', 'protocol (types)', 'node:http (types)'], // wire: the method names it labels
  legacy: ['protocol', 'tasks', 'wire', 'transport/http (types)', 'node:http (types)'], // a wire of the HTTP edge
  // a route of the HTTP edge: the store's operators' port behind the authenticator's operator role
  admin: ['tasks', 'auth (types)', 'protocol (types)', 'wire (types)', 'node:http (types)'],
  // routes of the HTTP edge that deliver events to tasks: the store's events port behind the authenticator, or a
  // signed callback URL; payloads checked against their waits' schemas (protocol), bodies read as the edge does
  events: ['tasks', 'protocol', 'transport/http', 'auth (types)', 'wire (types)', 'node:http (types)'],
  client: ['wire'],
  // the upstream side of the gateway: an SDK client session or our own client, the catalog and the delivery rules
  gateway: ['protocol (types)', 'tasks', 'wire', 'client'],
  cli: ['*'],
  roots: ['*'],
  version: [],
  json: [],
  pacing: [],
};

/** Leaves every layer may import: they import nothing themselves. */
export const leaves = ['version', 'json', 'pacing'];

/** Packages a layer may import only if it names them, as dependency-cruiser resolves them. */
export const packages = {
  'better-sqlite3': '^node_modules/(@types/)?better-sqlite3/',
  pg: '^node_modules/(@types/)?pg/',
  'node:http': '^(node:)?http$',
};

/** Layers that are not single folders: the composition roots are every file at src/ root but the version. */
const files = {
  roots: { folder: 'src/*.ts', path: '^src/(?!(?:version|json)\\.ts$)[^/]+\\.ts$' },
  version: { folder: 'src/version.ts', path: '^src/version\\.ts$' },
  json: { folder: 'src/json.ts', path: '^src/json\\.ts$' },
};

// Tests may reach across layers to set up real collaborators (e.g. a worker test on the SQLite store).
const tests = '\\.test\\.ts$';
const typesSuffix = ' (types)';

/** Where a layer's modules live, as shown in the docs. */
export const folderOf = (layer) => files[layer]?.folder ?? `src/${layer}/`;

/** A layer's entry in the "may import" column of docs/architecture.md. */
export const mayImport = (layer) => {
  const may = layers[layer];
  if (may.includes('*')) return 'everything';
  return may.length === 0 ? 'nothing of ours' : may.join(', ');
};

const pathOf = (name) => packages[name] ?? files[name]?.path ?? `^src/${name}/`;
const ruleName = (layer) => `layer-${layer.replace('/', '-')}`;

/** The dependency-cruiser rules for one layer: what it may not import, and what it may import only as types. */
const layerRules = (layer) => {
  const may = layers[layer];
  const everything = may.includes('*');
  const allowed = everything
    ? [...Object.keys(layers), ...Object.keys(packages)]
    : [...may.map((name) => name.replace(typesSuffix, '')), ...leaves];
  const from = { path: pathOf(layer), pathNot: tests };
  const rules = [
    {
      name: ruleName(layer),
      comment: `${folderOf(layer)} may import ${mayImport(layer)} (docs/architecture.md).`,
      severity: 'error',
      from,
      to: { path: ['^src/', ...Object.values(packages)], pathNot: [layer, ...allowed].map(pathOf) },
    },
  ];
  const typesOnly = may
    .filter((name) => name.endsWith(typesSuffix))
    .map((name) => name.replace(typesSuffix, ''));
  if (typesOnly.length > 0)
    rules.push({
      name: `${ruleName(layer)}-types`,
      comment: `${folderOf(layer)} may import only types from ${typesOnly.join(', ')} (docs/architecture.md).`,
      severity: 'error',
      from,
      to: { path: typesOnly.map(pathOf), dependencyTypesNot: ['type-only', 'type-import'] },
    });
  return rules;
};

/**
 * Every rule: the layers, a module outside all layers, the tools kept out of the package, and cycles (type-only
 * imports included) anywhere the check looks (src/, bench/, scripts/).
 */
export const forbidden = () => [
  ...Object.keys(layers).flatMap(layerRules),
  {
    name: 'layer-unknown',
    comment: 'Every module of src/ belongs to a layer of scripts/layers.mjs; add a new folder there first.',
    severity: 'error',
    from: { path: '^src/', pathNot: [...Object.keys(layers).map(pathOf), tests] },
    to: {},
  },
  {
    name: 'no-tools-in-src',
    comment: 'The package imports nothing from bench/ or scripts/: tools of the repository, not shipped.',
    severity: 'error',
    from: { path: '^src/', pathNot: tests },
    to: { path: '^(bench|scripts)/' },
  },
  {
    name: 'no-circular',
    comment: 'Imports form no cycle, type-only imports included: in src/, bench/ and scripts/ (chaos/ too).',
    severity: 'error',
    from: {},
    to: { circular: true },
  },
];
