// The gateway's start with an upstream that may not answer yet: its catalog as first read (or not), and the runtime's
// hooks that keep a call or a stored task of an upstream tool from being taken for one of a tool that does not exist
// until the upstream's tools are read.
import {
  catalogOf,
  catalogRetryMs,
  type CatalogControl,
  type CatalogLog,
  type CatalogSettings,
} from '../../gateway/catalog.js';
import { describeTarget, signInFailure, type Upstream, type UpstreamTarget } from '../../gateway/upstream.js';
import type { Logger } from '../../observability/logger.js';
import type { ToolDefinition } from '../../protocol/define.js';
import { ErrorCode } from '../../wire/codes.js';
import { ProtocolError } from '../../wire/protocol-error.js';
import { unusableSignIn } from '../upstream-auth.js';
import type { RuntimeSettings } from './runtime-settings.js';

export interface StartingCatalog {
  /** The upstream's tools as read at start (none when it did not answer). */
  tools: ToolDefinition<never>[];
  /** Reads the upstream's tools and serves the new and changed ones (followCatalog); the first success sets `read`. */
  refresh(control: CatalogControl): Promise<void>;
  /** Whether the upstream's tools have been read. */
  readonly read: boolean;
}

/**
 * The upstream's catalog at start. An upstream that does not answer (not started yet, restarting, unreachable) does
 * not stop the gateway: it serves its own tools and the tasks in its store, and the upstream's tools from the first
 * read that succeeds (`read` false: followCatalog reads at once and again until one does). What only a person can
 * put right stops it: a sign-in or client credentials the authorization server refuses, or an upstream tool under a
 * name the gateway's own tools use.
 */
export async function startingCatalog(
  upstream: Upstream,
  settings: CatalogSettings,
  log: CatalogLog,
  auth: { setting: Parameters<typeof unusableSignIn>[1]; target: UpstreamTarget },
  logger: Logger,
): Promise<StartingCatalog> {
  const fail = async (err: unknown): Promise<never> => {
    await upstream.close();
    throw (
      unusableSignIn(err, auth.setting, describeTarget(auth.target)) ??
      new Error(`--upstream ${upstream.name}: ${err instanceof Error ? err.message : String(err)}`)
    );
  };
  let catalog: ReturnType<typeof catalogOf>;
  let read = true;
  try {
    const listed = await upstream.listTools().catch(async (err: unknown) => {
      if (signInFailure(err) !== undefined) throw err;
      const error = err instanceof Error ? err.message : String(err);
      logger.warn(
        { upstream: upstream.name, error, retryMs: catalogRetryMs(1) },
        "gateway: the upstream does not answer; serving the store's tasks, and its tools once it answers",
      );
      return undefined;
    });
    if (listed === undefined) {
      read = false;
      catalog = catalogOf(upstream, [], settings, log);
    } else {
      catalog = catalogOf(upstream, listed, settings, log);
      logger.info({ upstream: upstream.name, tools: catalog.tools.length }, 'gateway: upstream tools read');
    }
  } catch (err) {
    return fail(err);
  }
  return {
    tools: catalog.tools,
    async refresh(control) {
      await catalog.refresh(control);
      read = true;
    },
    get read() {
      return read;
    },
  };
}

/** The answer to a call of a tool not served while the upstream's tools are not read yet (HTTP 500, -32603). */
const upstreamNotRead = (): ProtocolError =>
  new ProtocolError(
    ErrorCode.InternalError,
    "Upstream unavailable: the gateway has not read its upstream's tools yet; try again",
  );

/**
 * Until `catalog` is read: a call of a tool not served may be one of the upstream's, so its caller is told to try
 * again rather than that it is unknown; and the upstream's tasks in the store are not this process's to fail as a
 * removed tool's (the worker's removed-tool drain).
 */
export function holdUntilRead(runtime: RuntimeSettings, catalog: StartingCatalog): void {
  runtime.unknownTool = () => (catalog.read ? undefined : upstreamNotRead());
  if (runtime.worker !== false)
    runtime.worker = { ...runtime.worker, holdUnservedTasks: () => !catalog.read };
}
