// One numbered schema migration of the SQLite store (index.ts lists them in order).
export interface Migration {
  version: number;
  name: string;
  sql: string;
}
