// What each method of the wire is, in one table: the routing headers it carries, whether a client may send it
// again, whether its MRTR rounds are one-time and which capability gates it. The sets the header checks, the
// client's retries, the MRTR rounds and the server's gates use are read from here.
import type { CoreMethod, TaskMethod } from './methods.js';

/** A capability `server/discover` advertises only when something is registered for it. */
export type GatingCapability = 'prompts' | 'resources' | 'completions';

export interface MethodTraits {
  /** The params field the `Mcp-Name` header mirrors; none for a method without one. */
  readonly nameField?: 'name' | 'uri' | 'taskId';
  /** The tool's `x-mcp-header` arguments travel as `Mcp-Param-*` headers. */
  readonly paramHeaders?: true;
  /**
   * Whether sending it twice is as good as sending it once: always, only when it carries an idempotency key (the
   * server answers a repeat with what the first created), or never.
   */
  readonly repeat: 'always' | 'keyed' | 'never';
  /** Its MRTR rounds may act on the world, so each requestState is honoured once. */
  readonly oneTime?: true;
  /** Answered -32601 while this capability is not advertised. */
  readonly capability?: GatingCapability;
}

/**
 * The traits of every method of 2026-07-28, and of `ping`: removed from this revision, but a client talking to an
 * earlier server may still send it, and may repeat it.
 */
export const METHOD_TRAITS = {
  'server/discover': { repeat: 'always' },
  'tools/list': { repeat: 'always' },
  'tools/call': { nameField: 'name', paramHeaders: true, repeat: 'keyed', oneTime: true },
  'prompts/list': { repeat: 'always', capability: 'prompts' },
  'prompts/get': { nameField: 'name', repeat: 'always', capability: 'prompts' },
  'resources/list': { repeat: 'always', capability: 'resources' },
  'resources/templates/list': { repeat: 'always', capability: 'resources' },
  'resources/read': { nameField: 'uri', repeat: 'always', capability: 'resources' },
  'completion/complete': { repeat: 'always', capability: 'completions' },
  // Only its opening: a stream that broke after it opened is the subscriber's to open again.
  'subscriptions/listen': { repeat: 'always' },
  // tasks/update: answers to keys already answered are ignored.
  'tasks/get': { nameField: 'taskId', repeat: 'always' },
  'tasks/update': { nameField: 'taskId', repeat: 'always' },
  'tasks/cancel': { nameField: 'taskId', repeat: 'always' },
  ping: { repeat: 'always' },
} as const satisfies Record<CoreMethod | TaskMethod | 'ping', MethodTraits>;

const BY_NAME: ReadonlyMap<string, MethodTraits> = new Map(Object.entries(METHOD_TRAITS));

/** The traits of a method; undefined for one this table does not know (an extension's, or a typo). */
export const traitsOf = (method: string): MethodTraits | undefined => BY_NAME.get(method);

/** The methods whose traits pass `test`, in table order. */
export const methodsWhere = (test: (traits: MethodTraits) => boolean): string[] =>
  [...BY_NAME].filter(([, traits]) => test(traits)).map(([method]) => method);
