// Build step: copies the dashboard's page and style beside its compiled scripts (dist/src/admin/ui), where the
// operator API serves them from.
import { copyFileSync, mkdirSync } from 'node:fs';

const from = new URL('../src/admin/ui/', import.meta.url);
const to = new URL('../dist/src/admin/ui/', import.meta.url);
mkdirSync(to, { recursive: true });
for (const name of ['index.html', 'dashboard.css']) copyFileSync(new URL(name, from), new URL(name, to));
