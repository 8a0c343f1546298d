// Build step: copies each store's numbered migrations (src/stores/<dialect>/migrations/*.sql) to the same place under
// dist/src, beside the compiled modules that read them (src/stores/migration-files.ts).
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';

for (const folder of ['src/stores/sqlite/migrations/', 'src/stores/postgres/migrations/']) {
  const from = new URL(`../${folder}`, import.meta.url);
  const to = new URL(`../dist/${folder}`, import.meta.url);
  mkdirSync(to, { recursive: true });
  // A file removed or renamed in the sources must not stay behind in dist/.
  for (const name of readdirSync(to)) if (name.endsWith('.sql')) rmSync(new URL(name, to));
  for (const name of readdirSync(from))
    if (name.endsWith('.sql')) copyFileSync(new URL(name, from), new URL(name, to));
}
