// The package as a user gets it: a fresh clone of the committed tree (HEAD), packed with `npm pack` (which builds it:
// the prepare script), and app folders outside this repository to install it into.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
export const NPM_QUIET = ['--no-audit', '--no-fund', '--prefer-offline'];

export function exec(cmd: string, args: string[], cwd: string, env?: NodeJS.ProcessEnv): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 180_000, env });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} (exit ${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

/** The tree committed at HEAD, as `git clone` gives it (fetching HEAD works too when it is detached, as in CI). */
function cloneHead(dir: string): void {
  exec('git', ['init', '--quiet', dir], resolve(dir, '..'));
  exec('git', ['fetch', '--quiet', ROOT, 'HEAD'], dir);
  exec('git', ['checkout', '--quiet', 'FETCH_HEAD'], dir);
}

/** A clone of HEAD in `work/durable-mcp`, its devDependencies those of this repository (linked). */
export function cloneForPacking(work: string): string {
  const clone = join(work, 'durable-mcp');
  cloneHead(clone);
  // The clone's devDependencies (TypeScript for its build) are the repository's, installed from the same
  // package-lock.json: linked, not installed again (npm ci needs the registry and takes minutes on 2 cores).
  symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'), 'dir');
  return clone;
}

/** Packs the clone into `work` (npm pack runs the prepare script: a build); the tarball's path. */
export function pack(clone: string, work: string): string {
  const packed = exec('npm', ['pack', '--silent', '--pack-destination', work], clone).trim();
  return join(work, packed.split('\n').pop() as string);
}

/** An app folder with its package.json (npm's allowScripts names the packages whose install scripts it runs). */
export function newApp(work: string, name: string, allowScripts: Record<string, boolean>): string {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name, private: true, type: 'module', allowScripts }),
  );
  return dir;
}

/** Links a package of this repository's node_modules into an app (what `npm install` would have put there). */
export function linkFromRepository(app: string, name: string): void {
  const target = join(app, 'node_modules', name);
  rmSync(target, { recursive: true, force: true });
  mkdirSync(resolve(target, '..'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules', name), target, 'dir');
}
