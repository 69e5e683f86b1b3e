import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from './openapi-document.ts';

/**
 * Writes the OpenAPI document to openapi/openapi.json (npm run openapi), the copy the service
 * serves and clients read. With --check it writes nothing and fails when that copy is stale.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const target = resolve(root, 'openapi', 'openapi.json');
const generated = `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;

if (process.argv.includes('--check')) {
  const committed = await readFile(target, 'utf8').catch(() => undefined);
  if (committed !== generated) {
    console.error(
      `${relative(root, target)} is stale: it differs from the schemas and route table; run npm run openapi and commit it`,
    );
    process.exit(1);
  }
  console.log(`${relative(root, target)} is up to date`);
} else {
  await mkdir(dirname(target), { recursive: true });
  await writeFile(target, generated);
  console.log(`Wrote ${relative(root, target)}`);
}
