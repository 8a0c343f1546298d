// A JSON object given on the command line, in a file (`@path`) or on stdin (`-`): arguments too large for the
// command line (the system caps one argument at 128 KiB) or kept in a file.
import { open } from 'node:fs/promises';
import { isJsonObject, type JsonObject } from '../json.js';
import { UsageError } from './args.js';
import { terminalLine } from './terminal-text.js';

/** The most a file or stdin may hold: far above what a server takes in one request (`serve --max-body-mb`, 4). */
export const MAX_JSON_INPUT_BYTES = 64 * 1024 * 1024;

const tooLarge = (where: string): UsageError =>
  new UsageError(`${where} holds more than ${MAX_JSON_INPUT_BYTES / 1024 / 1024} MiB`);

/** Whether the flag's value names stdin, whose input then is not a terminal's to answer questions on. */
export const readsStdin = (value: unknown): boolean => value === '-';

async function readFileText(path: string, flag: string): Promise<string> {
  const where = `${flag} @${path}`;
  const unreadable = (err: unknown): UsageError =>
    new UsageError(`${where}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  const file = await open(path, 'r').catch((err: unknown) => {
    throw unreadable(err);
  });
  try {
    if ((await file.stat()).size > MAX_JSON_INPUT_BYTES) throw tooLarge(where);
    return await file.readFile('utf8');
  } catch (err) {
    throw err instanceof UsageError ? err : unreadable(err);
  } finally {
    await file.close();
  }
}

async function readStdinText(flag: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_JSON_INPUT_BYTES) throw tooLarge(`${flag} - (stdin)`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The JSON object a flag gives: its value, or the content of the file `@path`, or stdin for `-`. An unreadable or
 * oversized file and anything that is not a JSON object are usage errors that say where the text came from.
 */
export async function readJsonObject(value: string, flag: string): Promise<JsonObject> {
  const { parsed, where } = await readJson(value, flag);
  if (!isJsonObject(parsed)) throw new UsageError(`${where} must be a JSON object`);
  return parsed;
}

/** Any JSON value a flag gives, read as readJsonObject reads it. */
export async function readJsonValue(value: string, flag: string): Promise<unknown> {
  return (await readJson(value, flag)).parsed;
}

async function readJson(value: string, flag: string): Promise<{ parsed: unknown; where: string }> {
  let text = value;
  let where = flag;
  if (value.startsWith('@')) {
    text = await readFileText(value.slice(1), flag);
    where = `${flag} ${value}`;
  } else if (readsStdin(value)) {
    text = await readStdinText(flag);
    where = `${flag} - (stdin)`;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new UsageError(`${where}: not valid JSON (${terminalLine(why)})`);
  }
  return { parsed, where };
}
