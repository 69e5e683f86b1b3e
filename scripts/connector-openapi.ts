import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import * as z from 'zod/mini';
import type { oas31 } from 'zod-openapi';
import {
  CONNECTOR_OPERATIONS,
  connectorPaymentSchema,
  IDEMPOTENCY_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
} from '#adapters/credit-transfers/connector-contract';

/**
 * Writes docs/connector-openapi.json, the contract a bank implements so production stages can
 * reach its systems, from the schemas the connector rail validates with (`--check`: fail when
 * the committed copy differs).
 */
export const CONNECTOR_DOCUMENT_PATH = fileURLToPath(
  new URL('../docs/connector-openapi.json', import.meta.url),
);

const componentId = (schema: z.ZodMiniType): string => {
  const id = z.globalRegistry.get(schema)?.id;
  if (id === undefined) throw new Error('Every connector body schema is a registered component');
  return id;
};

const ref = (schema: z.ZodMiniType) => ({ $ref: `#/components/schemas/${componentId(schema)}` });

const problem = (description: string): oas31.ResponseObject => ({
  description,
  content: { 'application/json': { schema: { type: 'object' } } },
});

export const connectorDocument = (): oas31.OpenAPIObject => {
  const { schemas } = z.toJSONSchema(z.globalRegistry, {
    uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, oas31.SchemaObject & { $id?: string }> };
  for (const schema of Object.values(schemas)) delete schema.$id;

  const paths: oas31.PathsObject = {};
  for (const [operationId, operation] of Object.entries(CONNECTOR_OPERATIONS)) {
    const method = operation.method.toLowerCase() as 'get' | 'post' | 'put';
    paths[operation.path] = {
      ...paths[operation.path],
      [method]: {
        operationId,
        summary: operation.summary,
        description: `${operation.summary}.`,
        tags: ['connector'],
        parameters: [
          { name: 'paymentId', in: 'path', required: true, schema: { type: 'string', maxLength: 36 } },
          {
            name: IDEMPOTENCY_HEADER,
            in: 'header',
            required: true,
            description: 'The paymentId again: a repeated call of the same operation must answer the same',
            schema: { type: 'string', maxLength: 36 },
          },
          {
            name: TIMESTAMP_HEADER,
            in: 'header',
            required: true,
            description:
              'Unix time in seconds when the request was signed; refuse one more than 5 minutes off',
            schema: { type: 'string', maxLength: 12, pattern: '^[0-9]{1,12}$' },
          },
        ],
        ...(operation.request === undefined
          ? {}
          : {
              requestBody: {
                required: true,
                content: { 'application/json': { schema: ref(connectorPaymentSchema) } },
              },
            }),
        responses: {
          '200': {
            description: operation.summary,
            content: { 'application/json': { schema: ref(operation.response) } },
          },
          '400': problem('The request breaks the contract: the service reports a fault, never a refusal'),
          '401': problem('The signature does not verify: the service reports a fault, never a refusal'),
          '429': problem('Slow down: the service retries, honouring Retry-After (seconds)'),
          '500': problem('A fault of the connector: the service retries with backoff'),
          '503': problem('Unavailable: the service retries with backoff and drives the payment again later'),
          default: problem(
            'Any other answer is a fault on one side of the contract: the payment waits, it is never refused by it',
          ),
        },
      },
    };
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Credit Transfers bank connector',
      version: '1.0.0',
      contact: { name: 'Credit transfer platform team' },
      description: [
        'The HTTPS API a bank implements so the credit transfer service can reach its customer-profile',
        'checks and clearing on production stages. Every call is idempotent by paymentId and signed:',
        `\`${SIGNATURE_HEADER}: v1=<hex>\` is HMAC-SHA256, with the key shared through Secrets Manager, over`,
        'four lines joined by "\\n": the timestamp header, the method, the path with its query, and the',
        'hex SHA-256 of the body (of the empty string when there is none). Each call has a timeout (2.5 s by',
        'default) and is retried with backoff on network errors, timeouts, 408, 429 and 5xx. Only a refusal',
        'in a 200 answer (`accepted: false`, or clearing `state: rejected`) rejects a payment; anything else',
        'leaves it waiting and retried, and raises the stuck-transfer alarm if it lasts.',
      ].join(' '),
    },
    servers: [
      {
        url: 'https://connector.bank.example',
        description: 'The bank’s production connector (CONNECTOR_URL); test stages use a staging one',
        'x-internal': true,
      },
    ],
    security: [{ requestSignature: [] }],
    tags: [{ name: 'connector', description: 'What the bank implements' }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        requestSignature: {
          type: 'apiKey',
          in: 'header',
          name: SIGNATURE_HEADER,
          description: 'HMAC-SHA256 request signature, see the description above',
        },
      },
    },
  };
};

const render = () => `${JSON.stringify(connectorDocument(), null, 2)}\n`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--check')) {
    const committed = await readFile(CONNECTOR_DOCUMENT_PATH, 'utf8').catch(() => '');
    if (committed !== render()) {
      console.error('docs/connector-openapi.json is stale: run npm run connector:openapi and commit it');
      process.exit(1);
    }
  } else {
    await writeFile(CONNECTOR_DOCUMENT_PATH, render());
    console.log(`Wrote ${CONNECTOR_DOCUMENT_PATH}`);
  }
}
