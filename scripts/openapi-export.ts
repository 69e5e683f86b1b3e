import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from '#shared/openapi';

/** Writes the OpenAPI document to openapi/openapi.json (npm run openapi), for linting and for clients. */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const target = resolve(root, 'openapi', 'openapi.json');

await mkdir(dirname(target), { recursive: true });
await writeFile(target, `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
console.log(`Wrote ${target}`);
