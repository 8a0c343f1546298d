// A token store in one JSON file for the CLI: created 0600 in a 0700 directory, written whole to a temporary file
// then renamed over (a reader never sees half a file), and read again before each write so that two processes
// signing in to different servers keep each other's records.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { SignInRecord, TokenStore } from './types.js';

interface StoreFile {
  version: 1;
  records: Record<string, SignInRecord>;
}

function isRecord(value: unknown): value is SignInRecord {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Partial<SignInRecord>;
  return typeof r.resource === 'string' && typeof r.issuer === 'string' && typeof r.client === 'object';
}

async function readStore(path: string): Promise<StoreFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, records: {} };
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`the token store ${path} is not JSON`);
  }
  const records: Record<string, SignInRecord> = {};
  const raw = (parsed as { records?: unknown }).records;
  if (typeof raw === 'object' && raw !== null)
    for (const [key, value] of Object.entries(raw)) if (isRecord(value)) records[key] = value;
  return { version: 1, records };
}

async function writeStore(path: string, data: StoreFile): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
    await chmod(temp, 0o600);
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  await chmod(path, 0o600);
}

/** A token store in the JSON file at `path` (one record per resource). */
export function createFileTokenStore(path: string): TokenStore {
  // Writes of this process one after another; other processes are met by reading again just before writing.
  let queue: Promise<unknown> = Promise.resolve();
  const update = (change: (records: Record<string, SignInRecord>) => void): Promise<void> => {
    const next = queue.then(async () => {
      const data = await readStore(path);
      change(data.records);
      await writeStore(path, data);
    });
    queue = next.catch(() => undefined);
    return next;
  };
  return {
    get: async (resource) => (await readStore(path)).records[resource],
    set: (record) =>
      update((records) => {
        records[record.resource] = record;
      }),
    delete: (resource) =>
      update((records) => {
        delete records[resource];
      }),
    list: async () => Object.values((await readStore(path)).records),
  };
}
