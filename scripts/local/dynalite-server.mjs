// dynalite in its own process, persisted in LevelDB. It exits when its parent goes away
// (stdin closes), so a runtime killed with SIGKILL leaves no server holding the database lock.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
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
