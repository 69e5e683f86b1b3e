// dynalite in its own process, persisted in LevelDB. It exits when its parent goes away
// (stdin closes), so a runtime killed with SIGKILL leaves no server holding the database lock.
import { createRequire } from 'node:module';

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

const dynalite = require('dynalite');

const [host, port, path] = process.argv.slice(2);
const server = dynalite({ path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });

const stop = () => server.close(() => process.exit(0));
server.listen(Number(port), host, () => {
  console.log(`listening at: http://${host}:${server.address().port}`);
});
process.stdin.on('end', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
