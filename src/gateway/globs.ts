// Tool names as the gateway's flags pick them (--task-tools, --sync-tools, --idempotent-tools).

/** `*` matches any run of characters, every other character itself. */
export function globMatcher(globs: string[] | undefined): (name: string) => boolean {
  const patterns = (globs ?? []).map(
    (glob) =>
      new RegExp(
        `^${glob
          .split('*')
          .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
          .join('.*')}$`,
      ),
  );
  return (name) => patterns.some((pattern) => pattern.test(name));
}
