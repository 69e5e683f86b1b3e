// Preloaded into the service by `scripts/bench/settle.ts --count-calls` (node --import): counts the DynamoDB
// calls each process makes, by operation, and writes the counts so far to
// $TABLE_CALL_COUNTS_DIR/<pid>.json whenever the process receives SIGUSR2.
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';

const directory = process.env.TABLE_CALL_COUNTS_DIR;
const counts = {};
const request = http.request;
http.request = function countingRequest(...args) {
  const options = typeof args[0] === 'object' && !(args[0] instanceof URL) ? args[0] : args[1];
  const target = options?.headers?.['x-amz-target'];
  if (typeof target === 'string') {
    const operation = target.split('.').pop();
    counts[operation] = (counts[operation] ?? 0) + 1;
  }
  return request.apply(this, args);
};
if (directory) {
  process.on('SIGUSR2', () => writeFileSync(join(directory, `${process.pid}.json`), JSON.stringify(counts)));
}
