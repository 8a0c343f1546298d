// Resources an extension serves under URIs of its own (the tasks extension's streams), beside the registry's: read,
// followed through subscriptions/listen, and listed as URI templates.
import type { JsonObject } from '../wire/jsonrpc.js';
import type { RequestScope } from './scope.js';

export interface ResourceProvider {
  /** Whether `uri` is one of the provider's: the registry's resources and templates are then not looked at. */
  owns(uri: string): boolean;
  /** The complete resources/read result for `uri` (one of its own), or the resource-not-found error thrown. */
  read(uri: string, scope: RequestScope): Promise<JsonObject>;
  /**
   * Of `uris` (all its own), those the caller may follow, and how to start and stop `send`ing their updates (a
   * resource the caller may not read is left out without a word).
   */
  subscribe(
    uris: readonly string[],
    scope: RequestScope,
    send: (uri: string) => void,
  ): Promise<{ agreed: string[]; start(): void; stop(): void }>;
  /** The URI templates it serves, for resources/templates/list. */
  readonly templates: readonly JsonObject[];
}
