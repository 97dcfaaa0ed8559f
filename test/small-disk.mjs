// A small disk for a server process where no tmpfs can be mounted (test/faults-disk.test.ts loads it with --import):
// writes to files in VA_SANDBOX_TEST_DISK_DIR fail with ENOSPC once the files there would hold more than
// VA_SANDBOX_TEST_DISK_BYTES, writing the part that fits first, as a full disk does.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';

const dir = process.env.VA_SANDBOX_TEST_DISK_DIR;
const limit = Number(process.env.VA_SANDBOX_TEST_DISK_BYTES);

const room = () => {
  let used = 0;
  for (const name of fs.readdirSync(dir)) used += fs.statSync(join(dir, name), { throwIfNoEntry: false })?.size ?? 0;
  return limit - used;
};
const inDir = (fd) => {
  try {
    return fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(`${dir}/`);
  } catch {
    return false;
  }
};
const full = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });

const writeSync = fs.writeSync;
fs.writeSync = function (fd, data, offset, length, position) {
  if (typeof data === 'string' || !inDir(fd)) return writeSync(fd, data, offset, length, position);
  const free = room();
  if (free <= 0) throw full();
  const from = offset ?? 0;
  return writeSync(fd, data, from, Math.min(length ?? data.byteLength - from, free), position);
};

const writeFileSync = fs.writeFileSync;
fs.writeFileSync = function (target, data, options) {
  const inside = typeof target === 'number' ? inDir(target) : String(target).startsWith(`${dir}/`);
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  const free = inside ? room() : Infinity;
  if (bytes.byteLength <= free) return writeFileSync(target, data, options);
  if (free > 0) writeFileSync(target, bytes.subarray(0, free), options);
  throw full();
};

const probe = await fs.promises.open(process.execPath, 'r');
const FileHandle = Object.getPrototypeOf(probe);
await probe.close();
const write = FileHandle.write;
FileHandle.write = async function (data, ...rest) {
  if (typeof data === 'string' || !inDir(this.fd)) return write.call(this, data, ...rest);
  const free = room();
  if (data.byteLength <= free) return write.call(this, data, ...rest);
  if (free > 0) await write.call(this, data.subarray(0, free));
  throw full();
};

syncBuiltinESMExports();
