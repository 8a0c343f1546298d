import type * as NodeModule from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type * as Driver from './driver.js';

/** What `require` throws in place of loading the driver (undefined: it loads). */
let failure: Error | undefined;

vi.mock('node:module', async (actual) => {
  const real = await actual<typeof NodeModule>();
  return {
    ...real,
    createRequire: (from: string) => {
      const require = real.createRequire(from);
      return (id: string): unknown => {
        if (failure !== undefined) throw failure;
        return require(id);
      };
    },
  };
});

const notFound = (message: string): Error => Object.assign(new Error(message), { code: 'MODULE_NOT_FOUND' });

/** A fresh copy of the module (it keeps the driver once loaded). */
async function driverModule(): Promise<typeof Driver> {
  vi.resetModules();
  return import('./driver.js');
}

afterEach(() => {
  failure = undefined;
});

describe('the SQLite driver, loaded when a file is opened', () => {
  it('is better-sqlite3 where it is installed', async () => {
    const { sqliteDriver } = await driverModule();
    const Database = sqliteDriver();
    const db = new Database(':memory:');
    expect(db.prepare('SELECT 1 AS one').get()).toEqual({ one: 1 });
    db.close();
  });

  it('is an error naming the package, and what needed it, where it is not installed', async () => {
    const { sqliteDriver } = await driverModule();
    failure = notFound("Cannot find module 'better-sqlite3'\nRequire stack:\n- /app/dist/x.js");
    expect(() => sqliteDriver()).toThrow(
      'the SQLite store needs the optional package better-sqlite3 (npm install better-sqlite3@12)',
    );
    expect(() => sqliteDriver('the SQLite client journal')).toThrow(/^the SQLite client journal needs/);
  });

  it('passes on any other failure as it is (a module the driver itself requires, say)', async () => {
    const { sqliteDriver } = await driverModule();
    failure = notFound("Cannot find module 'bindings'");
    expect(() => sqliteDriver()).toThrow("Cannot find module 'bindings'");
    failure = new Error('the native module was compiled against a different Node.js version');
    expect(() => sqliteDriver()).toThrow('different Node.js version');
  });
});
