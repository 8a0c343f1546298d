// The connection to an upstream, by the protocol it speaks. The upstream is asked server/discover first, as a
// 2026-07-28 client does (over stdio, by a child process started for the question): one that answers it is spoken to
// natively, without a session (modern-upstream.ts), any other with a 2025-11-25 session (session-upstream.ts). The
// choice is made once, when the upstream is first needed, and holds until the gateway stops.
import { createModernUpstream, discoverModern } from './modern-upstream.js';
import { createSessionTasks } from './session-tasks.js';
import { createSessionUpstream } from './session-upstream.js';
import {
  describeTarget,
  isInputRequired,
  isTaskCreated,
  outcomeOf,
  UpstreamTaskLostError,
  type Upstream,
  type UpstreamAnswer,
  type UpstreamCallOutcome,
  type UpstreamObserver,
  type UpstreamOptions,
  type UpstreamTarget,
} from './upstream.js';

/** The implementation for an upstream, by what its server/discover says. */
async function pick(
  target: UpstreamTarget,
  options: UpstreamOptions,
  signal?: AbortSignal,
): Promise<Upstream> {
  const discovered = await discoverModern(target, options, signal);
  const upstream = describeTarget(target);
  const poolSize = target.kind === 'stdio' ? (options.poolSize ?? 1) : 1;
  if (discovered === undefined) {
    options.log?.('info', 'upstream does not answer server/discover: spoken to with a 2025-11-25 session', {
      upstream,
    });
    // The sessions share what finds the session an upstream task belongs to (session-tasks.ts).
    const tasks = createSessionTasks();
    const open = (): Upstream => createSessionUpstream(target, options, tasks);
    return options.sessions === 'per-principal' ? perPrincipalSessions(open) : pooled(poolSize, open);
  }
  options.log?.('info', 'upstream speaks 2026-07-28: spoken to without a session', {
    upstream,
    capabilities: discovered.capabilities ?? null,
  });
  // Stateless, so no session per principal; a stdio upstream still gets its pool of processes.
  return pooled(poolSize, () => createModernUpstream(target, options, discovered));
}

/** An upstream that picks its implementation when first needed (see pick), then hands everything to it. */
function discoveringUpstream(target: UpstreamTarget, options: UpstreamOptions): Upstream {
  const name = describeTarget(target);
  const listeners: (() => void)[] = [];
  let chosen: Upstream | undefined;
  let choosing: Promise<Upstream> | undefined;
  const choose = (signal?: AbortSignal): Promise<Upstream> => {
    if (chosen !== undefined) return Promise.resolve(chosen);
    choosing ??= pick(target, options, signal).then(
      (upstream) => {
        chosen = upstream;
        for (const listener of listeners) upstream.onToolsChanged(listener);
        return upstream;
      },
      (err: unknown) => {
        choosing = undefined;
        throw err;
      },
    );
    return choosing;
  };
  return {
    name,
    ready: async (signal) => (await choose(signal)).ready(signal),
    listTools: async () => (await choose()).listTools(),
    callTool: async (tool, args, call) => (await choose(call?.signal)).callTool(tool, args, call),
    async followTask(taskId, follow) {
      const upstream = await choose(follow.signal);
      if (upstream.followTask === undefined)
        throw new UpstreamTaskLostError(taskId, `${name}: its task ${taskId} cannot be followed`);
      return upstream.followTask(taskId, follow);
    },
    async cancelTask(taskId, owner, created) {
      await (await choose()).cancelTask?.(taskId, owner, created);
    },
    onToolsChanged(listener) {
      listeners.push(listener);
      chosen?.onToolsChanged(listener);
    },
    async close() {
      const upstream = chosen ?? (await choosing?.catch(() => undefined));
      await upstream?.close();
    },
  };
}

/** Upstream tasks whose member a pool remembers, at most. */
const MAX_REMEMBERED_TASKS = 10_000;

/**
 * `size` upstreams (sessions, or processes of a stdio upstream) as one: each call goes to the one with the fewest
 * calls out; the tool list is read from the first, and every one tells of list changes. A task one of them answered a
 * call with is followed and cancelled on that one (a stdio process knows only its own tasks); one answered before this
 * process started, through the first (2025-11-25 sessions share what finds the session of a task: session-tasks.ts).
 */
export function pooled(size: number, open: () => Upstream): Upstream {
  const members = Array.from({ length: Math.max(1, size) }, () => ({ upstream: open(), out: 0 }));
  const first = members[0] as (typeof members)[number];
  if (members.length === 1) return first.upstream;
  const idlest = () => members.reduce((best, m) => (m.out < best.out ? m : best), first);
  /** Which member answered with each task still followed or not yet followed (forgotten when its follow ends). */
  const tasks = new Map<string, (typeof members)[number]>();
  const holderOf = (taskId: string): Upstream => (tasks.get(taskId) ?? first).upstream;
  return {
    name: first.upstream.name,
    ready: (signal) => idlest().upstream.ready(signal),
    listTools: () => first.upstream.listTools(),
    async callTool(tool, args, call) {
      const member = idlest();
      member.out++;
      try {
        const answer = await member.upstream.callTool(tool, args, call);
        if (isTaskCreated(answer)) {
          // A run that stopped before following its task leaves its entry: the oldest go past the bound.
          if (tasks.size >= MAX_REMEMBERED_TASKS) tasks.delete(tasks.keys().next().value as string);
          tasks.set(answer.taskId, member);
        }
        return answer;
      } finally {
        member.out--;
      }
    },
    async followTask(taskId, follow) {
      const upstream = holderOf(taskId);
      if (upstream.followTask === undefined)
        throw new UpstreamTaskLostError(taskId, `${upstream.name}: its task ${taskId} cannot be followed`);
      try {
        return await upstream.followTask(taskId, follow);
      } finally {
        tasks.delete(taskId);
      }
    },
    cancelTask: async (taskId, owner, created) => holderOf(taskId).cancelTask?.(taskId, owner, created),
    onToolsChanged: (listener) => members.forEach((m) => m.upstream.onToolsChanged(listener)),
    async close() {
      await Promise.all(members.map((m) => m.upstream.close()));
    },
  };
}

/** Principals' sessions kept open at most (per-principal sessions): past it the least recently used idle one closes. */
export const MAX_PRINCIPAL_SESSIONS = 64;

/**
 * A session upstream per principal (`open` makes one), for an upstream that keeps state per session: a call goes on
 * its owner's; the tool list is read on a session of the gateway's own. Past `max` open, the least recently used one
 * with no call out is closed (its principal gets a new one on their next call). An upstream task is followed through
 * its owner's (counted as a call out while it is, so that its session stays open), and cancelled through the
 * gateway's; the sessions share what finds the session a task belongs to.
 */
export function perPrincipalSessions(open: () => Upstream, max = MAX_PRINCIPAL_SESSIONS): Upstream {
  const catalog = open();
  const listeners: (() => void)[] = [];
  catalog.onToolsChanged(() => listeners.forEach((l) => l()));
  const sessions = new Map<string, { upstream: Upstream; out: number }>();
  const sessionOf = (owner: { tenant: string; principal: string } | undefined) => {
    if (owner === undefined) return undefined;
    const key = JSON.stringify([owner.tenant, owner.principal]);
    let held = sessions.get(key);
    if (held === undefined) {
      if (sessions.size >= max) {
        const idle = [...sessions].find(([, s]) => s.out === 0);
        if (idle !== undefined) {
          sessions.delete(idle[0]);
          void idle[1].upstream.close();
        }
      }
      held = { upstream: open(), out: 0 };
    } else sessions.delete(key);
    // Map order is use order: the first entries are the least recently used.
    sessions.set(key, held);
    return held;
  };
  return {
    name: catalog.name,
    ready: (signal) => catalog.ready(signal),
    listTools: () => catalog.listTools(),
    async callTool(tool, args, call) {
      const held = sessionOf(call?.owner);
      if (held === undefined) return catalog.callTool(tool, args, call);
      held.out++;
      try {
        return await held.upstream.callTool(tool, args, call);
      } finally {
        held.out--;
      }
    },
    async followTask(taskId, follow) {
      const held = sessionOf(follow.owner) ?? { upstream: catalog, out: 0 };
      if (held.upstream.followTask === undefined)
        throw new UpstreamTaskLostError(taskId, `${catalog.name}: its task ${taskId} cannot be followed`);
      held.out++;
      try {
        return await held.upstream.followTask(taskId, follow);
      } finally {
        held.out--;
      }
    },
    cancelTask: async (taskId, owner, created) => catalog.cancelTask?.(taskId, owner, created),
    onToolsChanged: (listener) => listeners.push(listener),
    async close() {
      await Promise.all([catalog, ...[...sessions.values()].map((s) => s.upstream)].map((u) => u.close()));
      sessions.clear();
    },
  };
}

/**
 * An upstream per tenant named in `tokens` (each opened by `open` with that tenant's token), and `shared` for every
 * other call and for the tool list.
 */
export function perTenantUpstreams(
  shared: Upstream,
  tokens: Readonly<Record<string, string>>,
  open: (token: string) => Upstream,
): Upstream {
  const opened = new Map<string, Upstream>();
  const upstreamOf = (tenant: string | undefined): Upstream => {
    if (tenant === undefined || !Object.hasOwn(tokens, tenant)) return shared;
    let upstream = opened.get(tenant);
    if (upstream === undefined) {
      upstream = open(tokens[tenant] as string);
      opened.set(tenant, upstream);
    }
    return upstream;
  };
  return {
    ...shared,
    name: shared.name,
    callTool: (tool, args, call) => upstreamOf(call?.owner?.tenant).callTool(tool, args, call),
    // A task is followed and cancelled with the credentials of the tenant whose call made it.
    async followTask(taskId, follow) {
      const upstream = upstreamOf(follow.owner?.tenant);
      if (upstream.followTask === undefined)
        throw new UpstreamTaskLostError(taskId, `${shared.name}: its task ${taskId} cannot be followed`);
      return upstream.followTask(taskId, follow);
    },
    cancelTask: async (taskId, owner, created) =>
      upstreamOf(owner?.tenant).cancelTask?.(taskId, owner, created),
    async close() {
      await Promise.all([shared, ...opened.values()].map((u) => u.close()));
    },
  };
}

/** The connection to the upstream at `target` (nothing is opened until it is first needed). */
export function createUpstream(target: UpstreamTarget, options: UpstreamOptions = {}): Upstream {
  const tokens = options.tenantTokens;
  if (target.kind === 'http' && tokens !== undefined && Object.keys(tokens).length > 0) {
    const withToken = (token: string): UpstreamTarget => ({
      kind: 'http',
      url: target.url,
      headers: { ...target.headers, authorization: `Bearer ${token}` },
    });
    const plain = { ...options, tenantTokens: undefined };
    return perTenantUpstreams(createUpstream(target, plain), tokens, (token) =>
      createUpstream(withToken(token), plain),
    );
  }
  const upstream = discoveringUpstream(target, options);
  return options.observer === undefined ? upstream : observed(upstream, options.observer);
}

/** The outcome a call's answer counts as. */
const answerOutcome = (answer: UpstreamAnswer): UpstreamCallOutcome =>
  isTaskCreated(answer)
    ? 'task'
    : isInputRequired(answer)
      ? 'input_required'
      : answer.isError === true
        ? 'tool_error'
        : 'ok';

/** Tells `observer` of each call's outcome and duration, and whether the upstream answers. */
function observed(upstream: Upstream, observer: UpstreamObserver): Upstream {
  const failed = (err: unknown, signal?: AbortSignal): never => {
    const outcome = outcomeOf(err instanceof Error ? err : new Error(String(err)), signal);
    if (outcome === 'lost' || outcome === 'not_sent') observer.answering(false);
    throw err;
  };
  return {
    ...upstream,
    name: upstream.name,
    ready: (signal) => upstream.ready(signal).catch((err: unknown) => failed(err, signal)),
    async listTools() {
      const tools = await upstream.listTools().catch((err: unknown) => failed(err));
      observer.answering(true);
      return tools;
    },
    async callTool(tool, args, call) {
      const started = Date.now();
      try {
        const answer = await upstream.callTool(tool, args, call);
        observer.answering(true);
        observer.call(answerOutcome(answer), Date.now() - started);
        return answer;
      } catch (err) {
        observer.call(
          outcomeOf(err instanceof Error ? err : new Error(String(err)), call?.signal),
          Date.now() - started,
        );
        return failed(err, call?.signal);
      }
    },
    onToolsChanged: (listener) => upstream.onToolsChanged(listener),
    close: () => upstream.close(),
  };
}
