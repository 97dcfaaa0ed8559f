import type { Stats } from 'node:fs';

/**
 * What a path is when it is not a regular file: a directory, a device, a FIFO or a socket; else null. A database or a
 * config file is read only from a regular file (a FIFO would block the read, a device such as /dev/zero never ends).
 */
export function notAFile(stat: Stats): string | null {
  if (stat.isFile()) return null;
  if (stat.isDirectory()) return 'a directory';
  return stat.isFIFO() ? 'a FIFO' : stat.isSocket() ? 'a socket' : 'a device';
}
