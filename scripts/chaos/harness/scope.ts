// Resource scopes: everything a section creates (processes, temp dirs, clean-up steps) is registered in its scope
// and released by close(), whatever happened; a synchronous last resort runs on process exit.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const liveScopes = new Set<Scope>();
/** Every child ever started, so that the 'exit' handler can kill stragglers of scopes already closed. */
const allChildren = new Set<ChildProcess>();

const running = (child: ChildProcess): boolean => child.exitCode === null && child.signalCode === null;

function killQuietly(child: ChildProcess): void {
  if (!running(child)) return;
  try {
    child.kill('SIGKILL');
  } catch {
    // already gone
  }
}

export class Scope {
  readonly children = new Set<ChildProcess>();
  readonly dirs: string[] = [];
  private readonly closers: (() => unknown)[] = [];
  closed = false;

  constructor(readonly name: string) {
    liveScopes.add(this);
  }

  tempDir(prefix = 'durable-mcp-chaos-'): string {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    this.dirs.push(dir);
    return dir;
  }

  /** Registers a child process: killed when the scope closes (at once, if it already has). */
  adopt(child: ChildProcess): void {
    this.children.add(child);
    allChildren.add(child);
    child.once('exit', () => allChildren.delete(child));
    // A section that outlived its time bound may still try to start servers after its scope was closed.
    if (this.closed) child.kill('SIGKILL');
  }

  /** Registers an async clean-up step (run in reverse order of registration). */
  defer(fn: () => unknown): void {
    this.closers.push(fn);
  }

  killAll(): void {
    for (const child of this.children) killQuietly(child);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.killAll();
    await Promise.all(
      [...this.children].map((c) =>
        running(c)
          ? new Promise((r) => {
              c.once('exit', r);
              setTimeout(r, 3_000).unref();
            })
          : undefined,
      ),
    );
    for (const fn of this.closers.splice(0).reverse()) {
      try {
        await fn();
      } catch (err) {
        console.error(`chaos: clean-up in ${this.name} failed: ${err instanceof Error ? err.message : err}`);
      }
    }
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    liveScopes.delete(this);
  }
}

/** Synchronous last resort (process 'exit'): kill children and remove temp dirs of every open scope. */
export function emergencyCleanupSync(): void {
  for (const child of allChildren) killQuietly(child);
  for (const scope of liveScopes) {
    scope.killAll();
    for (const dir of scope.dirs) {
      try {
        rmSync(dir, { recursive: true, force: true });
      } catch {
        // best effort
      }
    }
  }
}

/** Asynchronous clean-up of every open scope (signals, fatal errors). */
export async function closeAllScopes(): Promise<void> {
  for (const scope of [...liveScopes]) await scope.close();
}
