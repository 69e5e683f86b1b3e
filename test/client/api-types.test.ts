import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { API_TYPES_PATH, renderApiTypes } from '../../client/scripts/render-api-types.ts';
import { buildOpenApiDocument } from '../../scripts/openapi-document.ts';

describe('client API types', () => {
  it("are generated from the service's current OpenAPI document (npm run client:types when this fails)", async () => {
    const document = JSON.parse(JSON.stringify(buildOpenApiDocument()));
    expect(await readFile(API_TYPES_PATH, 'utf8')).toBe(await renderApiTypes(document));
  });
});
