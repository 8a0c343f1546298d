// The rule for serving a store a newer release migrated: serve (naming the newer migrations) unless its floor is
// above what this release knows; an unreadable floor refuses.
import { describe, expect, it } from 'vitest';
import { newerSchemaWarning, schemaFit } from './schema-fit.js';

const known = [1, 2, 3];

describe('schemaFit', () => {
  it('serves its own schema, and a newer one whose floor it reaches, naming the newer migrations', () => {
    expect(schemaFit('x', known, [1, 2, 3], undefined)).toEqual({ ok: true, newer: [] });
    expect(schemaFit('x', known, [1, 2, 3, 5, 4], undefined)).toEqual({ ok: true, newer: [4, 5] });
    expect(schemaFit('x', known, [1, 2, 3, 4], '3')).toEqual({ ok: true, newer: [4] });
    expect(newerSchemaWarning([])).toBeUndefined();
    expect(newerSchemaWarning([4, 5])).toMatch(/^serving a store with migrations 4, 5 of a newer release/);
  });

  it('refuses a schema whose floor is above what it knows, or unreadable', () => {
    const above = schemaFit('schema "s"', known, [1, 2, 3, 4], '4');
    expect(above).toMatchObject({ ok: false });
    expect(!above.ok && above.reason).toMatch(/^schema "s" was migrated by a newer release \(migrations 4\)/);
    expect(!above.ok && above.reason).toContain('knows migrations up to 3');
    for (const floor of ['four', '1e400', '', '-1'])
      expect(schemaFit('x', known, [1, 2, 3], floor), floor).toMatchObject({ ok: false });
  });
});
