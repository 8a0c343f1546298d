// Small flag parser shared by the CLI commands (node:util parseArgs with friendly errors).
import { parseArgs, type ParseArgsConfig } from 'node:util';

export class UsageError extends Error {}

export function parseFlags<T extends NonNullable<ParseArgsConfig['options']>>(
  argv: string[],
  options: T,
  allowPositionals = false,
): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  try {
    const parsed = parseArgs({ args: argv, options, allowPositionals, strict: true });
    return {
      values: parsed.values as Record<string, string | boolean | undefined>,
      positionals: parsed.positionals,
    };
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

export function intFlag(
  value: string | boolean | undefined,
  name: string,
  fallback: number,
  min = 0,
): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (typeof value !== 'string' || !Number.isInteger(n) || n < 0)
    throw new UsageError(`--${name} must be a non-negative integer`);
  if (n < min) throw new UsageError(`--${name} must be at least ${min}`);
  return n;
}
