// A small filesystem of the section's own for the disk-full fault, and the ballast that fills it.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import type { Scope } from '../harness/scope.js';

/** Mounts a tmpfs of `sizeMb` at `dir` (unmounted when the scope closes); the reason when that is not allowed. */
export function mountSmallFs(scope: Scope, dir: string, sizeMb: number): string | undefined {
  mkdirSync(dir, { recursive: true });
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=0700`, 'tmpfs', dir], {
    encoding: 'utf8',
  });
  if (r.error !== undefined || r.status !== 0)
    return `mounting a ${sizeMb} MB tmpfs is not permitted here (${(r.stderr || r.error?.message || '').trim()})`;
  scope.defer(() => {
    spawnSync('umount', ['-l', dir]);
  });
  return undefined;
}

/** Writes a ballast file until the filesystem of `path` has no byte left; returns its size. */
export function fillDisk(path: string): number {
  const fd = openSync(path, 'w');
  let written = 0;
  try {
    for (const size of [1 << 20, 1 << 12, 1 << 9]) {
      const chunk = Buffer.alloc(size, 0x5a);
      // Bounded: the filesystem is small (tens of MB).
      for (let i = 0; i < 100_000; i++) {
        try {
          written += writeSync(fd, chunk);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw err;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return written;
}
