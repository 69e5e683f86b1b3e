// dynalite in its own process, persisted in LevelDB. It exits when its parent goes away
// (stdin closes), so a runtime killed with SIGKILL leaves no server holding the database lock.
// It listens on a Unix socket inside the owner-only data folder, on no TCP port: only the
// service's user can reach the table, and it accepts any credentials.
import { unlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect } from 'node:net';

// Everything it writes (the table's files, the socket) is the owner's alone.
process.umask(0o077);

const require = createRequire(import.meta.url);
const fromDynalite = createRequire(require.resolve('dynalite'));

// dynalite wraps each LevelDB iterator in a stream whose destroy() closes it through
// `iterator.return()`, a method abstract-level's iterators do not have: every Query and Scan
// left its iterator (and the LevelDB snapshot it holds) open for the life of the process, so
// memory grew and reads slowed with every request. Closing is what `return()` means.
const abstractLevel = fromDynalite(createRequire(fromDynalite.resolve('level')).resolve('abstract-level'));
for (const Iterator of [
  abstractLevel.AbstractIterator,
  abstractLevel.AbstractKeyIterator,
  abstractLevel.AbstractValueIterator,
]) {
  if (typeof Iterator.prototype.return !== 'function') {
    Object.defineProperty(Iterator.prototype, 'return', {
      value() {
        return this.close();
      },
    });
  }
}

// dynalite opens LevelDB with its defaults, a 4 MB write buffer and an 8 MB block cache, made
// for small databases. Under sustained load (`npm run bench:load`) a buffer filled every few
// seconds, so compaction rewrote 1-1.8 GB a minute of a 165 MB table and the table's CPU per
// request grew with its size (2.0 to 4.4 ms over three runs). A 64 MB buffer and a 64 MB cache
// held the throughput but grew the process past the memory bound; a 32 MB buffer with the
// default cache keeps both inside their bounds (docs/benchmarks.md).
const LEVELDB_OPTIONS = { writeBufferSize: 32 << 20 };
const { ClassicLevel } = createRequire(fromDynalite.resolve('level'))('classic-level');
const openLevelDb = ClassicLevel.prototype._open;
ClassicLevel.prototype._open = function (options) {
  return openLevelDb.call(this, { ...LEVELDB_OPTIONS, ...options });
};

const dynalite = require('dynalite');

const [socketPath, path] = process.argv.slice(2);

/** A socket file left by a killed server is removed; one a running server answers on is not. */
const clearStaleSocket = () =>
  new Promise((resolve, reject) => {
    const probe = connect(socketPath);
    probe.once('connect', () => {
      probe.destroy();
      reject(new Error(`Another service is running on this data folder: its table answers on ${socketPath}`));
    });
    probe.once('error', (error) => {
      if (error.code === 'ECONNREFUSED') unlinkSync(socketPath);
      if (error.code === 'ECONNREFUSED' || error.code === 'ENOENT') resolve();
      else reject(error);
    });
  });

/**
 * A server of the same folder that was just stopped may still be finishing its last writes and
 * hold LevelDB's lock for a moment: wait for it (at most LOCK_WAIT_MS) rather than fail to open.
 */
const LOCK_WAIT_MS = 10_000;
const awaitUnlocked = async () => {
  const { Level } = fromDynalite('level');
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    const probe = new Level(path);
    try {
      await probe.open();
      await probe.close();
      return;
    } catch (error) {
      const locked = error.code === 'LEVEL_LOCKED' || error.cause?.code === 'LEVEL_LOCKED';
      // Anything else (damage) is for dynalite to meet and report as it opens.
      if (!locked || Date.now() > deadline) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
};

await clearStaleSocket().catch((error) => {
  console.error(error.message);
  process.exit(1);
});
await awaitUnlocked();
const server = dynalite({ path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });

// dynalite writes an item's index entries and the item one after another, answering once all
// are written: stopping, it exits only when no request is between its first write and its answer
// (a request whose client has gone, its parent killed, still finishes), so a stop never leaves
// index entries without their item. At most STOP_WAIT_MS, in case one never answers.
const STOP_WAIT_MS = 5000;
let inFlight = 0;
let stopping = false;
const exitWhenIdle = () => {
  if (stopping && inFlight === 0) process.exit(0);
};
server.prependListener('request', (request, response) => {
  inFlight++;
  let settled = false;
  const settle = () => {
    if (settled) return;
    settled = true;
    inFlight--;
    setImmediate(exitWhenIdle);
  };
  const end = response.end;
  response.end = function (...args) {
    settle();
    return end.apply(this, args);
  };
  // A request cut off before its body arrived is never handled, so never written.
  request.once('close', () => {
    if (!request.complete) settle();
  });
});
const stop = () => {
  if (stopping) return;
  stopping = true;
  server.close();
  setTimeout(() => process.exit(0), STOP_WAIT_MS).unref();
  exitWhenIdle();
};
server.listen(socketPath, () => {
  console.log(`listening at: ${socketPath}`);
});
process.stdin.on('end', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
