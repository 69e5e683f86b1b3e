/**
 * Preloaded into a CLI process (node --import) to freeze it at one exact moment, so a test can
 * SIGKILL it there. The whole thread stops (Atomics.wait): no timer, no lock refresh, no write.
 *
 * STALL_IN_STATE_WRITE=<file name>: the first write of content to a file whose name contains it
 *   (the state file, or a temporary file beside it) writes half the content, syncs it, and stops.
 * STALL_AFTER_CHANGES=<n>: stops right after the n-th change line reaches standard output.
 *
 * Either way it first writes STALLED to standard error.
 */
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { basename } from 'node:path';

const stallHere = (): never => {
  fs.writeSync(2, 'STALLED\n');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 120_000);
  process.exit(99);
};

const inStateWrite = process.env.STALL_IN_STATE_WRITE;
if (inStateWrite) {
  const promises = fs.promises;
  const pathOf = new WeakMap<object, string>();
  const watched = (path: unknown) => basename(String(path)).includes(inStateWrite);
  const half = (data: unknown) => {
    const bytes = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data as Uint8Array);
    return bytes.subarray(0, Math.floor(bytes.length / 2));
  };

  const originalOpen = promises.open;
  const probe = await originalOpen('/dev/null', 'r');
  const handlePrototype = Object.getPrototypeOf(probe) as {
    writeFile: (this: { fd: number }, data: unknown, ...rest: unknown[]) => Promise<void>;
  };
  await probe.close();

  promises.open = (async (...args: Parameters<typeof originalOpen>) => {
    const handle = await originalOpen(...args);
    pathOf.set(handle, String(args[0]));
    return handle;
  }) as typeof originalOpen;

  const originalHandleWrite = handlePrototype.writeFile;
  handlePrototype.writeFile = async function (data, ...rest) {
    if (!watched(pathOf.get(this))) return originalHandleWrite.call(this, data, ...rest);
    fs.writeSync(this.fd, half(data));
    fs.fsyncSync(this.fd);
    return stallHere();
  };

  const originalWriteFile = promises.writeFile;
  promises.writeFile = (async (
    path: Parameters<typeof originalWriteFile>[0],
    data: unknown,
    ...rest: unknown[]
  ) => {
    if (!watched(path)) return originalWriteFile(path, data as string, ...(rest as []));
    fs.writeFileSync(path as string, half(data));
    return stallHere();
  }) as typeof originalWriteFile;

  // Named imports of node:fs/promises (import { open } ...) see the replacements too.
  syncBuiltinESMExports();
}

const afterChanges = Number(process.env.STALL_AFTER_CHANGES ?? 0);
if (afterChanges > 0) {
  let printed = 0;
  const originalWrite = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = String(chunk);
    // Standard output to a pipe is written synchronously on Linux: the test has the line already.
    const result = originalWrite(chunk, ...(rest as []));
    if (text.includes('"changeId"') && ++printed >= afterChanges) stallHere();
    return result;
  }) as typeof process.stdout.write;
}
