// npm's `prepare` (run by `npm pack`, by git installs, and by `npm install` or `npm ci` in a clone): builds dist/
// where the sources are. It has nothing to do where they are not, as in the image's `npm ci` (run before the
// sources are copied) or in an unpacked tarball, which holds dist/ already; so this file ships in the tarball too.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const root = process.cwd();
const typescriptInstalled = () => {
  try {
    createRequire(join(root, 'package.json')).resolve('typescript');
    return true;
  } catch {
    return false;
  }
};

if (!existsSync(join(root, 'src')) || !existsSync(join(root, 'tsconfig.build.json'))) process.exit(0);
if (!typescriptInstalled()) {
  // A production install (`npm ci --omit=dev`) of a tree built before: nothing to rebuild with, nothing missing.
  if (existsSync(join(root, 'dist', 'src', 'index.js'))) process.exit(0);
  console.error(
    `durable-mcp: dist/ is not built and TypeScript is not installed in ${root}: ` +
      'run `npm install` there (with its devDependencies) to build it',
  );
  process.exit(1);
}
const r = spawnSync('npm', ['run', 'build', '--silent'], {
  cwd: root,
  stdio: 'inherit',
  shell: process.platform === 'win32',
});
process.exit(r.status ?? 1);
