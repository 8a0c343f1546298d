// The per-attempt log written by test/fixtures/tools/chaos-tools.mjs: one line per run start and end, step start,
// end, save and failure, sleep start and end, and the driver's kills.
import { appendFileSync, closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { now } from './time.js';

/** One line of the log: `event task run detail pid t [n]`. */
export interface LogLine {
  seq: number;
  event: string;
  task: string;
  run: string;
  detail: string;
  pid: number;
  t: number;
  /** The attempt of a step line, the ms of a sleep; undefined where the line has none. */
  n: number | undefined;
}

/** Reads new complete lines of the log since the last call. */
export class LogTail {
  private readonly fd: number;
  private offset = 0;
  private rest = '';
  private seq = 0;
  private readonly buffer = Buffer.alloc(1 << 20);

  constructor(readonly path: string) {
    this.fd = openSync(path, 'r');
  }

  read(): LogLine[] {
    const out: LogLine[] = [];
    for (;;) {
      const size = fstatSync(this.fd).size;
      if (size <= this.offset) break;
      const n = readSync(
        this.fd,
        this.buffer,
        0,
        Math.min(this.buffer.length, size - this.offset),
        this.offset,
      );
      if (n <= 0) break;
      this.offset += n;
      const lines = (this.rest + this.buffer.toString('utf8', 0, n)).split('\n');
      this.rest = lines.pop() ?? '';
      for (const line of lines) {
        const parsed = parseLogLine(line, this.seq);
        if (parsed !== undefined) {
          this.seq += 1;
          out.push(parsed);
        }
      }
    }
    return out;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** One log line, or undefined when it is not one. */
export function parseLogLine(line: string, seq: number): LogLine | undefined {
  const f = line.trim().split(' ');
  if (f.length !== 6 && f.length !== 7) return undefined;
  const [event, task, run, detail, pid, t, n] = f as [
    string,
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  return {
    seq,
    event,
    task,
    run,
    detail,
    pid: Number(pid),
    t: Number(t),
    n: n === undefined ? undefined : Number(n),
  };
}

/** Appends a line of the driver (a kill) to the log. */
export const appendLog = (path: string, event: string, pid: number | undefined): void =>
  appendFileSync(path, `${event} - - - ${pid} ${now()}\n`);
