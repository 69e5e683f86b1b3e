import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { API_TYPES_PATH, renderApiTypes } from './render-api-types.ts';

/**
 * Writes client/src/api-types.ts from the committed openapi/openapi.json (npm run client:types);
 * with --check it writes nothing and fails when the committed file differs (npm run client:types:check).
 */
const documentPath = fileURLToPath(new URL('../../openapi/openapi.json', import.meta.url));
const types = await renderApiTypes(JSON.parse(await readFile(documentPath, 'utf8')));

if (process.argv.includes('--check')) {
  const committed = await readFile(API_TYPES_PATH, 'utf8').catch(() => '');
  if (committed !== types) {
    console.error('client/src/api-types.ts is stale: run npm run client:types and commit it');
    process.exit(1);
  }
  console.log('client/src/api-types.ts matches openapi/openapi.json');
} else {
  await writeFile(API_TYPES_PATH, types);
  console.log(`Wrote ${API_TYPES_PATH}`);
}
