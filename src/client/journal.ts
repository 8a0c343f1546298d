// The client journal port: task ids kept durably so a restarted client can pick its tasks up again.

export interface JournalEntry {
  taskId: string;
  /** Where the task lives (the server URL or transport description). */
  server: string;
  tool: string;
  createdAt: number;
  /** Last known status; terminal entries are kept until forgotten. */
  status: string;
}

export interface Journal {
  record(entry: JournalEntry): void;
  update(taskId: string, status: string): void;
  /** Entries not yet seen in a terminal state, for one server or all. */
  unfinished(server?: string): JournalEntry[];
  forget(taskId: string): void;
  close(): void;
}
