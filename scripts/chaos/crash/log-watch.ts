// The per-attempt log of a crash section, read as it grows: which steps are running now, and waits for a line.
import { LogTail, type LogLine } from '../harness/log-tail.js';
import type { Scope } from '../harness/scope.js';

interface Waiter {
  match(line: LogLine): boolean;
  resolve(line: LogLine | undefined): void;
}

export class LogWatch {
  /** Steps begun and not yet ended, failed, or ended with their run or process: task/run/step → start line. */
  readonly activeSteps = new Map<string, LogLine>();
  private readonly waiters = new Set<Waiter>();
  private readonly tail: LogTail;
  private readonly timer: NodeJS.Timeout;

  constructor(logFile: string, scope: Scope) {
    this.tail = new LogTail(logFile);
    this.timer = setInterval(() => this.pump(), 3);
    scope.defer(() => clearInterval(this.timer));
  }

  pump(): void {
    for (const line of this.tail.read()) {
      this.note(line);
      for (const w of this.waiters) {
        if (w.match(line)) {
          this.waiters.delete(w);
          w.resolve(line);
        }
      }
    }
  }

  private note(line: LogLine): void {
    const key = `${line.task}/${line.run}/${line.detail}`;
    if (line.event === 'step-start') this.activeSteps.set(key, line);
    else if (line.event === 'step-end' || line.event === 'step-fail') this.activeSteps.delete(key);
    else if (line.event === 'run-end') {
      for (const [k, v] of this.activeSteps) if (v.run === line.run) this.activeSteps.delete(k);
    } else if (line.event === 'killed') {
      for (const [k, v] of this.activeSteps) if (v.pid === line.pid) this.activeSteps.delete(k);
    }
  }

  /** The next line that matches, or undefined after `timeoutMs`. */
  waitLine(match: (line: LogLine) => boolean, timeoutMs: number): Promise<LogLine | undefined> {
    return new Promise((resolve) => {
      const w: Waiter = { match, resolve };
      this.waiters.add(w);
      setTimeout(() => {
        if (this.waiters.delete(w)) resolve(undefined);
      }, timeoutMs);
    });
  }

  /** Reads the last lines and stops. */
  stop(): void {
    clearInterval(this.timer);
    this.pump();
    this.tail.close();
  }
}
