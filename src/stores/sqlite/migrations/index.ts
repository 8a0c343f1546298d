// Numbered schema migrations for the SQLite store, applied in order inside one transaction each.
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'server-meta',
    sql: `CREATE TABLE server_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;`,
  },
];
