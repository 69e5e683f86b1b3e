import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { getOpenApiDocument } from '#api/openapi-document';
import { SCOPES } from '#domain/access/scopes';
import { cancellationRequestSchema } from '#domain/credit-transfers/cancel-credit-transfer';
import {
  AMOUNT_PATTERN,
  creditTransferRequestSchema,
  creditTransferSchema,
} from '#domain/credit-transfers/credit-transfer';
import { ROUTES } from '#routes';
import { PROBLEM_CONTENT_TYPE } from '#shared/problem';
import {
  ACCESS_TOKEN_SCHEME,
  buildOpenApiDocument,
  CLIENT_CREDENTIALS_SCHEME,
  CREDIT_TRANSFER_EXAMPLE,
  documentedTokenRequestSchema,
  documentedTokenResponseSchema,
  INITIATION_EXAMPLE,
  jsonWebKeySetSchema,
  OPERATIONS,
  openIdConfigurationSchema,
  problemSchema,
} from '../../../scripts/openapi-document.ts';
import {
  CANCELLATION_REQUEST_EXAMPLE,
  COMPONENT_EXAMPLES,
  GENERIC_TRANSACTION_CODE_EXAMPLE,
  JSON_WEB_KEY_SET_EXAMPLE,
  LIST_EXAMPLE,
  OPENID_CONFIGURATION_EXAMPLE,
  problemExample,
  SETTLED_EXAMPLE,
  TOKEN_REQUEST_EXAMPLE,
  TOKEN_RESPONSE_EXAMPLE,
  tokenProblemExample,
} from '../../../scripts/openapi-examples.ts';
import {
  CANCEL_ROUTE,
  component,
  deref,
  fieldPaths,
  type JsonSchema,
  LIST_ROUTE,
  operation,
  operationsOf,
  propertyAt,
  resolveRef,
  routesWithLater,
  routesWithoutLater,
  walk,
} from './helpers.ts';

const document = buildOpenApiDocument();
const fullDocument = buildOpenApiDocument(routesWithLater());

const parameter = (operationId: string, name: string, doc = document) => {
  const found = operation(doc, operationId).parameters?.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`No parameter ${name} on ${operationId}`);
  return found;
};

describe('the OpenAPI document', () => {
  it("is an OpenAPI 3.1 document of version 0.7.0 whose server is the public URL, npm start's by default", () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.info).toMatchObject({ title: 'Credit Transfers API', version: '0.7.0' });
    expect(document.servers).toEqual([
      expect.objectContaining({
        url: '{publicUrl}',
        variables: { publicUrl: expect.objectContaining({ default: 'http://127.0.0.1:3000' }) },
      }),
    ]);
  });

  it.each([
    ['the route table', document],
    ['the route table with list and cancel', fullDocument],
  ])('resolves every $ref within the document (%s)', (_name, doc) => {
    const refs: string[] = [];
    walk(doc, (node) => {
      if (typeof node.$ref === 'string') refs.push(node.$ref);
    });
    expect(refs.length).toBeGreaterThan(10);
    for (const ref of refs) {
      expect(ref, ref).toMatch(/^#\/components\/schemas\/[A-Za-z]+$/);
      expect(resolveRef(doc, ref), ref).toBeTypeOf('object');
    }
  });

  it('has every component referenced (no unused schema)', () => {
    const referenced = new Set<string>();
    walk(fullDocument, (node) => {
      if (typeof node.$ref === 'string') referenced.add(node.$ref.replace('#/components/schemas/', ''));
    });
    expect(Object.keys(fullDocument.components?.schemas ?? {}).sort()).toEqual([...referenced].sort());
  });

  it('has exactly one operation per route of the route table, and none other', () => {
    const operations = operationsOf(document);
    expect(operations).toHaveLength(ROUTES.length);
    for (const route of ROUTES) {
      const matching = operations.filter((entry) => entry.operation.operationId === route.operationId);
      expect(matching, route.operationId).toHaveLength(1);
      expect(matching[0]).toMatchObject({ method: route.method, path: route.path });
    }
  });

  it('describes no route the service does not serve', () => {
    const routes = routesWithoutLater();
    const doc = buildOpenApiDocument(routes);
    const ids = operationsOf(doc).map((entry) => entry.operation.operationId);
    expect(ids.sort()).toEqual(routes.map((route) => route.operationId).sort());
    expect(ids).not.toContain(LIST_ROUTE.operationId);
    expect(ids).not.toContain(CANCEL_ROUTE.operationId);
    expect(doc.components?.schemas).not.toHaveProperty('CancellationRequest');
  });

  it('refuses a route that has no entry, rather than describing it vaguely', () => {
    const unknown = { ...LIST_ROUTE, operationId: 'doSomethingNew' };
    expect(() => buildOpenApiDocument([...ROUTES, unknown])).toThrow(/doSomethingNew/);
  });

  it('gives every operation an operationId, summary, description, defined tags and responses', () => {
    const tags = new Set((fullDocument.tags ?? []).map((tag) => tag.name));
    for (const { operation: op } of operationsOf(fullDocument)) {
      expect(op.operationId).toMatch(/^[a-z][A-Za-z]+$/);
      expect(op.summary.length, op.operationId).toBeGreaterThan(0);
      expect(op.description.length, op.operationId).toBeGreaterThan(20);
      expect(op.tags.length, op.operationId).toBeGreaterThan(0);
      for (const tag of op.tags) expect(tags.has(tag), tag).toBe(true);
      expect(
        Object.keys(op.responses).some((status) => /^2/.test(status)),
        op.operationId,
      ).toBe(true);
      expect(op.responses, op.operationId).toHaveProperty('429');
      expect(op.responses, op.operationId).toHaveProperty('500');
    }
  });

  /** Query parameters without which an operation answers nothing useful. */
  const REQUIRED_QUERY: Readonly<Record<string, readonly string[]>> = {
    '/v1/payment-controls/usage': ['debtorAccountId', 'currency'],
  };

  it('declares each path parameter of a path, as a required parameter', () => {
    for (const { path, operation: op } of operationsOf(fullDocument)) {
      const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
      const declared = (op.parameters ?? []).filter((p) => p.in === 'path');
      expect(
        declared.map((p) => p.name),
        path,
      ).toEqual(inPath);
      for (const p of declared) expect(p.required).toBe(true);
      for (const p of (op.parameters ?? []).filter((p) => p.in !== 'path')) {
        expect(p.required ?? false, `${path} ${p.name}`).toBe(
          REQUIRED_QUERY[path]?.includes(p.name) ?? false,
        );
      }
    }
  });

  it('secures each route with its scope by the client credentials flow first, else a bearer token; leaves public routes open', () => {
    const schemes = document.components?.securitySchemes ?? {};
    const oauthScopes = Object.keys(
      (schemes[CLIENT_CREDENTIALS_SCHEME] as { flows: { clientCredentials: { scopes: object } } }).flows
        .clientCredentials.scopes,
    );
    expect(oauthScopes.sort()).toEqual([...SCOPES].sort());
    for (const route of routesWithLater()) {
      const op = operation(fullDocument, route.operationId);
      if (route.scope) {
        expect(op.security).toEqual([
          { [CLIENT_CREDENTIALS_SCHEME]: [route.scope] },
          { [ACCESS_TOKEN_SCHEME]: [route.scope] },
        ]);
        expect(oauthScopes).toContain(route.scope);
      } else if (route.operationId !== 'issueToken') {
        expect(op.security, route.operationId).toEqual([]);
      }
      for (const requirement of op.security) {
        for (const scheme of Object.keys(requirement)) {
          expect(schemes, scheme).toHaveProperty(scheme);
        }
      }
    }
    expect(schemes[ACCESS_TOKEN_SCHEME]).toMatchObject({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    });
    expect(schemes[CLIENT_CREDENTIALS_SCHEME]).toMatchObject({
      type: 'oauth2',
      flows: { clientCredentials: { tokenUrl: '/oauth/token' } },
    });
  });

  it('answers every error with the one Problem schema, as application/problem+json', () => {
    for (const { operation: op } of operationsOf(fullDocument)) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (!/^[45]/.test(status)) continue;
        const content = response.content ?? {};
        // The token endpoint answers its own refusals as RFC 6749 prescribes: application/json;
        // its 429 comes from the endpoint (JSON) or from the gateway (a problem).
        const tokenRefusal = op.operationId === 'issueToken' && ['400', '401', '413', '415'].includes(status);
        const tokenThrottle = op.operationId === 'issueToken' && status === '429';
        const expected = tokenRefusal
          ? ['application/json']
          : tokenThrottle
            ? ['application/json', PROBLEM_CONTENT_TYPE]
            : [PROBLEM_CONTENT_TYPE];
        expect(Object.keys(content).sort(), `${op.operationId} ${status}`).toEqual(expected.sort());
        for (const media of Object.values(content)) {
          expect(media.schema).toEqual({ $ref: '#/components/schemas/Problem' });
        }
      }
    }
    const problem = component(document, 'Problem');
    expect(Object.keys(problem.properties as object).sort()).toEqual(
      ['type', 'title', 'status', 'detail', 'error', 'error_description', 'invalidParams'].sort(),
    );
    expect(propertyAt(document, problem, 'invalidParams[]').required).toEqual(['name', 'reason']);
  });

  it('documents Retry-After on every 429 and the Bearer challenge on every 401 of a bearer route', () => {
    for (const { operation: op } of operationsOf(fullDocument)) {
      expect(op.responses['429']?.headers, op.operationId).toHaveProperty('Retry-After');
      if (op.security.some((requirement) => ACCESS_TOKEN_SCHEME in requirement)) {
        expect(op.responses['401']?.headers, op.operationId).toHaveProperty('WWW-Authenticate');
      }
    }
  });

  it('bounds every string, array and integer, as the OWASP rules demand', () => {
    walk(fullDocument, (node, location) => {
      if (node.type === 'string') {
        const bounded = node.maxLength !== undefined || node.enum !== undefined || node.const !== undefined;
        expect(bounded, location).toBe(true);
      }
      if (node.type === 'array') expect(node.maxItems, location).toBeTypeOf('number');
      if (node.type === 'integer') {
        expect(node.minimum, location).toBeTypeOf('number');
        expect(node.maximum, location).toBeTypeOf('number');
        expect(['int32', 'int64'], location).toContain(node.format);
      }
    });
  });
});

describe('the credit transfer schemas', () => {
  const request = component(document, 'CreditTransferRequest');
  const fields = new Set(fieldPaths(document, request));

  it('are the request body of the initiation', () => {
    const body = operation(document, 'initiateCreditTransfer').requestBody;
    expect(body?.required).toBe(true);
    expect(Object.keys(body?.content ?? {})).toEqual(['application/json']);
    expect(body?.content['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/CreditTransferRequest',
    });
  });

  it.each([
    'identifiers',
    'identifiers[].number',
    'identifiers[].schemeName',
    'identifiers[].issuer',
    'domain',
    'family',
    'subFamily',
    'codes[].codeType',
    'codes[].name',
    'codes[].value',
    'paymentMethod',
    'paymentType',
    'amount',
    'paymentReason',
    'debtorAccountId',
    'creditorAccountId',
    'purpose',
    'paymentProcessing.instructionPriority',
    'paymentProcessing.serviceLevel',
    'paymentProcessing.clearingChannel',
    'paymentProcessing.localInstrument',
    'paymentProcessing.categoryPurpose',
    'chargeBearerType',
    'currency',
    'exchange.currency',
    'exchange.exchangeFactor',
    'check.checkType',
    'check.amount',
    'check.currency',
    'check.checkNumber',
    'check.availabilityDate',
    'check.availabilityFloat',
    'valueDate',
    'remittanceInformation.remittanceNumber',
    'remittanceInformation.documentType',
    'creditor.name',
    'creditor.account.name',
    'creditor.account.currency',
    'creditor.account.accountBranchId',
    'creditor.account.accountNumber',
    'creditor.account.accountType',
    'creditor.account.routingNumber',
    'creditor.account.identifiers[].schemeName',
    'creditor.postalAddress.addressCode',
    'creditor.postalAddress.cBSACode',
    'creditor.postalAddress.countrySubDivisionCode',
    'creditor.postalAddress.primaryIndicator',
    'creditor.postalAddress.foreignIndicator',
    'creditor.postalAddress.temporaryIndicator',
    'creditor.postalAddress.addressLine',
    'creditor.postalAddress.period.fromDateTime',
    'creditor.postalAddress.period.upToDateTime',
    'creditor.postalAddress.codes[].description',
    'creditor.postalAddress.identifiers[].expirationDate',
    'creditor.agent.identifiers[].number',
    'creditor.agent.identifiers[].countrySubdivisionCode',
    'creditor.agent.identifiers[].displayOption',
    'creditor.agent.identifiers[].applyDate',
    'creditor.agent.identifiers[].verificationDate',
    'creditor.agent.identifiers[].foreingIDIndicator',
    'creditor.agent.identifiers[].taxIDIndicator',
    'creditor.agent.clearingSystemMemberIdentification',
    'creditor.agent.memberIdentification',
    'creditor.agent.name',
    'creditor.agent.postalAddress.townName',
    'creditor.placeAndDateOfBirth.countrySubdivision',
    'creditor.placeAndDateOfBirth.birthDate',
    'creditor.contact.contactMethods[].channelType',
    'creditor.contact.contactMethods[].identification',
    'creditor.contact.preferredMethod',
    'creditor.contact.preferredLanguage',
    'creditor.identifiers[].issueDate',
    'creditor.countryOfResidence',
    'debtor.name',
    'debtor.agent.identifiers[].foreingIDIndicator',
  ])('has the spec field %s', (path) => {
    expect(fields.has(path)).toBe(true);
  });

  it('requires exactly paymentMethod, amount and debtorAccountId, and refuses other fields', () => {
    expect([...(request.required as string[])].sort()).toEqual([
      'amount',
      'debtorAccountId',
      'paymentMethod',
    ]);
    expect(request.additionalProperties).toBe(false);
  });

  it('carries the spec bounds, as the spec states them', () => {
    // Spec section 2.1, verbatim: field and the bound its table gives.
    const specBounds: [string, string][] = [
      ['domain', '1..35 characters'],
      ['family', '1..60 characters'],
      ['subFamily', '1..60 characters'],
      ['paymentMethod', '1..35 characters'],
      ['paymentType', '1..35 characters'],
      ['amount', 'Max 23 characters'],
      ['paymentReason', '1..60 characters'],
      ['debtorAccountId', '1..36 characters'],
      ['creditorAccountId', '1..36 characters'],
      ['purpose', '1..1025 characters'],
      ['chargeBearerType', '1..35 characters'],
      ['currency', 'Exactly 3 characters'],
      ['creditor.account.accountNumber', 'at most 30 characters'],
    ];
    for (const [field, text] of specBounds) {
      const range = /(\d+)\.\.(\d+)/.exec(text);
      const [min, max] = range
        ? [Number(range[1]), Number(range[2])]
        : /Exactly (\d+)/.test(text)
          ? [Number(/(\d+)/.exec(text)?.[1]), Number(/(\d+)/.exec(text)?.[1])]
          : [undefined, Number(/(\d+)/.exec(text)?.[1])];
      const schema = propertyAt(document, request, field);
      expect(schema.maxLength, field).toBe(max);
      if (min !== undefined) expect(schema.minLength, field).toBe(min);
    }
    const response = component(document, 'CreditTransfer');
    expect(propertyAt(document, response, 'paymentId')).toMatchObject({ minLength: 1, maxLength: 36 });
  });

  it('carries the other bounds', () => {
    expect(propertyAt(document, request, 'amount')).toMatchObject({
      type: 'string',
      maxLength: 23,
      pattern: AMOUNT_PATTERN.source,
    });
    // The spec's pattern, except that an amount ends in a digit (`{1,8}`, not `{0,8}`).
    expect(AMOUNT_PATTERN.source).toBe('^-?([0]|([1-9][0-9]{0,12}))([.][0-9]{1,8})?$');
    expect(AMOUNT_PATTERN.test('1.')).toBe(false);
    expect(propertyAt(document, request, 'currency')).toMatchObject({
      minLength: 3,
      maxLength: 3,
      pattern: '^([A-Z]{3})?$',
    });
    expect(propertyAt(document, request, 'paymentMethod')).toMatchObject({ minLength: 1, maxLength: 35 });
    expect(propertyAt(document, request, 'purpose')).toMatchObject({ minLength: 1, maxLength: 1025 });
    expect(propertyAt(document, request, 'debtorAccountId')).toMatchObject({ minLength: 1, maxLength: 36 });
    expect(propertyAt(document, request, 'domain')).toMatchObject({ minLength: 1, maxLength: 35 });
    expect(propertyAt(document, request, 'family')).toMatchObject({ minLength: 1, maxLength: 60 });
    expect(propertyAt(document, request, 'valueDate')).toMatchObject({ format: 'date', maxLength: 10 });
    expect(propertyAt(document, request, 'check.amount')).toMatchObject({ maxLength: 23 });
    expect(propertyAt(document, request, 'creditor.agent.identifiers[].foreingIDIndicator')).toEqual({
      type: 'boolean',
    });
  });

  it('keep the response-only fields out of the request and in the response', () => {
    const response = component(document, 'CreditTransfer');
    for (const field of ['paymentId', 'status', 'statusReason', 'date']) {
      expect(fields.has(field), field).toBe(false);
      expect(response.properties, field).toHaveProperty(field);
    }
    expect(response.required).toEqual(expect.arrayContaining(['paymentId', 'status', 'date', 'amount']));
    expect(propertyAt(document, response, 'paymentId')).toMatchObject({ minLength: 1, maxLength: 36 });
  });
});

describe('the operations', () => {
  it('initiation takes the idempotency and servicer headers and answers as DESIGN.md says', () => {
    const op = operation(document, 'initiateCreditTransfer');
    for (const name of ['idempotencyId', 'Idempotency-Key', 'servicerId', 'servicerBranchId']) {
      const header = parameter('initiateCreditTransfer', name);
      expect(header).toMatchObject({ in: 'header', schema: { type: 'string', minLength: 1, maxLength: 36 } });
      expect(header.required ?? false).toBe(false);
    }
    expect(Object.keys(op.responses)).toEqual(
      expect.arrayContaining(['202', '400', '401', '403', '413', '415', '422', '429', '500']),
    );
    expect(op.responses['202']?.content?.['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/CreditTransfer',
    });
    expect(op.responses['202']?.headers?.['Idempotent-Replayed']).toMatchObject({
      schema: { type: 'string', enum: ['true'] },
    });
    expect(op.responses['202']?.headers?.['Idempotent-Replayed']?.description).toMatch(/replays/);
  });

  it('status takes the paymentId in the path and answers 404 for an unknown one', () => {
    const op = operation(document, 'getCreditTransferStatus');
    expect(parameter('getCreditTransferStatus', 'paymentId')).toMatchObject({
      in: 'path',
      required: true,
      schema: { type: 'string', minLength: 1, maxLength: 36 },
    });
    expect(parameter('getCreditTransferStatus', 'servicerId').in).toBe('header');
    expect(Object.keys(op.responses)).toEqual(
      expect.arrayContaining(['200', '304', '400', '401', '403', '404', '429', '500']),
    );
    expect(op.requestBody).toBeUndefined();
  });

  it('token takes JSON or a form with the grant, and answers the token', () => {
    const op = operation(document, 'issueToken');
    const content = op.requestBody?.content ?? {};
    expect(Object.keys(content).sort()).toEqual(['application/json', 'application/x-www-form-urlencoded']);
    const tokenRequest = deref(document, content['application/json']?.schema);
    expect(content['application/x-www-form-urlencoded']?.schema).toEqual(content['application/json']?.schema);
    expect(Object.keys(tokenRequest.properties as object).sort()).toEqual(
      [
        'client_assertion',
        'client_assertion_type',
        'client_id',
        'client_secret',
        'grant_type',
        'scope',
      ].sort(),
    );
    expect(propertyAt(document, tokenRequest, 'grant_type')).toMatchObject({ const: 'client_credentials' });
    const tokenResponse = deref(document, op.responses['200']?.content?.['application/json']?.schema);
    expect([...(tokenResponse.required as string[])].sort()).toEqual(
      ['access_token', 'expires_in', 'scope', 'token_type'].sort(),
    );
    expect(propertyAt(document, tokenResponse, 'expires_in')).toMatchObject({
      type: 'integer',
      maximum: 3600,
    });
    expect(op.responses).toHaveProperty('400');
    expect(op.responses).toHaveProperty('401');
  });

  it('token describes one way to send the client credentials, in the body, so a sample sends them once', () => {
    const op = operation(document, 'issueToken');
    // No security requirement: a reference page adds no Authorization header to the body's credentials.
    expect(op.security).toEqual([]);
    const schemes = Object.values(document.components?.securitySchemes ?? {}) as {
      type: string;
      scheme?: string;
    }[];
    expect(schemes.filter((scheme) => scheme.type === 'http' && scheme.scheme === 'basic')).toEqual([]);
    for (const media of Object.values(op.requestBody?.content ?? {})) {
      expect(media).toMatchObject({ example: TOKEN_REQUEST_EXAMPLE });
    }
    expect(TOKEN_REQUEST_EXAMPLE).toMatchObject({
      client_id: 'local-client',
      client_secret: 'local-client-secret',
    });
    expect(op.description).toMatch(/HTTP Basic/);
  });

  it('initiation and cancellation samples send one idempotency key, under the spec name', () => {
    for (const id of ['initiateCreditTransfer', 'cancelCreditTransfer']) {
      expect(parameter(id, 'idempotencyId').example, id).toEqual(expect.any(String));
      expect(parameter(id, 'Idempotency-Key').example, id).toBeUndefined();
      expect(parameter(id, 'Idempotency-Key').schema.example, id).toBeUndefined();
    }
    expect(parameter('initiateCreditTransfer', 'idempotencyId').example).not.toBe(
      parameter('cancelCreditTransfer', 'idempotencyId').example,
    );
  });

  it('documents the discovery, key set, document and page operations with a 200', () => {
    for (const id of [
      'getJsonWebKeySet',
      'getOpenIdConfiguration',
      'getAuthorizationServerMetadata',
      'getOpenApiDocument',
      'getReferencePage',
    ]) {
      expect(operation(document, id).responses, id).toHaveProperty('200');
    }
    expect(operation(document, 'getReferencePage').responses['200']?.content).toHaveProperty('text/html');
  });
});

describe('the routes added later', () => {
  it('list takes the spec filters and the reference filters as query parameters and answers a page with its headers', () => {
    const id = LIST_ROUTE.operationId;
    const op = operation(fullDocument, id);
    const queries = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
    expect(queries).toEqual([
      'paymentId.eq',
      'status.eq',
      'paymentMethod.eq',
      'debtorAccountId.eq',
      'creditorAccountNumber.eq',
      'creditorAccountId.eq',
      'checkType.eq',
      'checkNumber.eq',
      'amount.lte',
      'amount.gte',
      'checkDate.lte',
      'checkDate.gte',
      'checkNumber.lte',
      'checkNumber.gte',
      'endToEndId.eq',
      'instructionId.eq',
      'batchId.eq',
      'cursor',
      'limit',
    ]);
    for (const name of queries) expect(parameter(id, name, fullDocument).required ?? false, name).toBe(false);
    expect(parameter(id, 'creditorAccountNumber.eq', fullDocument).schema).toMatchObject({ maxLength: 30 });
    expect(parameter(id, 'creditorAccountId.eq', fullDocument).schema).toMatchObject({
      minLength: 1,
      maxLength: 36,
    });
    expect(parameter(id, 'amount.gte', fullDocument).schema).toMatchObject({
      maxLength: 23,
      pattern: AMOUNT_PATTERN.source,
    });
    expect(parameter(id, 'checkDate.lte', fullDocument).schema).toMatchObject({ format: 'date' });
    const limit = new RegExp(parameter(id, 'limit', fullDocument).schema.pattern as string);
    expect(['1', '9', '10', '99', '100'].every((value) => limit.test(value))).toBe(true);
    expect(['0', '101', '01', '1.5', '-1', ''].some((value) => limit.test(value))).toBe(false);

    const ok = op.responses['200'];
    const page = ok?.content?.['application/json']?.schema as JsonSchema;
    expect(page).toMatchObject({
      type: 'array',
      maxItems: 100,
      items: { $ref: '#/components/schemas/CreditTransfer' },
    });
    expect(ok?.headers?.['Pagination-Cursor']?.required).toBe(true);
    expect(ok?.headers?.['Pagination-Total']?.required).toBe(true);
    expect(op.security).toEqual([
      { [CLIENT_CREDENTIALS_SCHEME]: ['transactions:read'] },
      { [ACCESS_TOKEN_SCHEME]: ['transactions:read'] },
    ]);
  });

  it('cancellation takes the paymentId and an optional cancellationReason, and answers 202', () => {
    const id = CANCEL_ROUTE.operationId;
    const op = operation(fullDocument, id);
    expect(parameter(id, 'paymentId', fullDocument)).toMatchObject({ in: 'path', required: true });
    expect(parameter(id, 'idempotencyId', fullDocument).in).toBe('header');
    expect(op.requestBody?.required).toBe(false);
    const body = deref(fullDocument, op.requestBody?.content['application/json']?.schema);
    expect(body.required).toBeUndefined();
    expect(propertyAt(fullDocument, body, 'cancellationReason')).toMatchObject({
      type: 'string',
      minLength: 1,
      maxLength: 1025,
    });
    expect(op.responses['202']?.content?.['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/CreditTransfer',
    });
    expect(op.responses).toHaveProperty('404');
    expect(op.responses).toHaveProperty('409');
    expect(op.security).toEqual([
      { [CLIENT_CREDENTIALS_SCHEME]: ['transactions:write'] },
      { [ACCESS_TOKEN_SCHEME]: ['transactions:write'] },
    ]);
  });

  it('have entries keyed by the operationIds the routes will carry', () => {
    expect(OPERATIONS).toHaveProperty(LIST_ROUTE.operationId);
    expect(OPERATIONS).toHaveProperty(CANCEL_ROUTE.operationId);
  });
});

describe('the examples', () => {
  const valid = (
    schema: { safeParse(value: unknown): { success: boolean; error?: unknown } },
    value: unknown,
  ) => {
    const result = schema.safeParse(value);
    expect(result.error, JSON.stringify(value).slice(0, 80)).toBeUndefined();
  };

  it('are valid by the schemas that validate requests and answers, and are in the document', () => {
    valid(creditTransferRequestSchema, INITIATION_EXAMPLE);
    // Every nested component's example is part of a transfer (the transaction code is not in the initiation's).
    valid(creditTransferRequestSchema, { ...INITIATION_EXAMPLE, codes: [GENERIC_TRANSACTION_CODE_EXAMPLE] });
    for (const transfer of [CREDIT_TRANSFER_EXAMPLE, SETTLED_EXAMPLE, ...LIST_EXAMPLE])
      valid(creditTransferSchema, transfer);
    valid(cancellationRequestSchema, CANCELLATION_REQUEST_EXAMPLE);
    valid(documentedTokenRequestSchema, TOKEN_REQUEST_EXAMPLE);
    valid(documentedTokenResponseSchema, TOKEN_RESPONSE_EXAMPLE);
    valid(jsonWebKeySetSchema, JSON_WEB_KEY_SET_EXAMPLE);
    valid(openIdConfigurationSchema, OPENID_CONFIGURATION_EXAMPLE);
    for (const status of [400, 401, 403, 404, 408, 409, 413, 415, 422, 429, 431, 500, 502, 503, 504]) {
      valid(problemSchema, problemExample(status));
      valid(problemSchema, tokenProblemExample(status));
      expect(problemExample(status).status).toBe(status);
    }
    expect(creditTransferRequestSchema.safeParse({ ...INITIATION_EXAMPLE, currency: 'eur' }).success).toBe(
      false,
    );
    const op = operation(document, 'initiateCreditTransfer');
    expect(op.requestBody?.content['application/json']).toMatchObject({ example: INITIATION_EXAMPLE });
    expect(op.responses['202']?.content?.['application/json']).toMatchObject({
      example: CREDIT_TRANSFER_EXAMPLE,
    });
  });

  it('give every component schema an example, and every JSON body of every operation one', () => {
    for (const [name, schema] of Object.entries(fullDocument.components?.schemas ?? {})) {
      expect((schema as JsonSchema).examples, name).toEqual([COMPONENT_EXAMPLES[name]]);
    }
    for (const { method, path, operation: op } of operationsOf(fullDocument)) {
      const bodies = [
        ...Object.values(op.requestBody?.content ?? {}),
        ...Object.values(op.responses).flatMap((response) => Object.values(response.content ?? {})),
      ].filter((media) => media.schema !== undefined);
      for (const media of bodies) expect(media, `${method} ${path}`).toHaveProperty('example');
    }
  });

  it('are realistic: check-digit-valid IBANs, values from the spec lists, no placeholder text', () => {
    const ibanValid = (iban: string) =>
      BigInt([...`${iban.slice(4)}${iban.slice(0, 4)}`].map((c) => Number.parseInt(c, 36)).join('')) % 97n ===
      1n;
    expect(ibanValid(INITIATION_EXAMPLE.debtorAccountId)).toBe(true);
    expect(ibanValid(INITIATION_EXAMPLE.creditorAccountId)).toBe(true);
    expect(ibanValid('DE89370400440532013001')).toBe(false);
    expect(INITIATION_EXAMPLE).toMatchObject({
      paymentMethod: 'CreditTransfer',
      currency: 'EUR',
      paymentReason: 'InvoicePayment',
      chargeBearerType: 'Shared',
    });
    walk(fullDocument, (node, location) => {
      for (const key of ['example', 'examples']) {
        if (key in node) expect(JSON.stringify(node[key]), location).not.toMatch(/"string"/);
      }
    });
  });
});

describe('the statuses each operation documents', () => {
  /**
   * What can answer each status, as facts of the route table: every function sits behind API
   * Gateway and the local server (timeouts, throttling, oversized headers, faults), bearer routes
   * behind the authorizer, a path parameter can name nothing, a body can be too large or of the
   * wrong type.
   */
  const expectedStatuses = (route: (typeof ROUTES)[number]): string[] => {
    const statuses = ['408', '429', '431', '500', '502', '504'];
    if (route.scope) statuses.push('400', '401', '403');
    if (route.path.includes('{')) statuses.push('404');
    if (route.method === 'POST') statuses.push('400', '413', '415');
    if (route.operationId === 'issueToken') statuses.push('401');
    return [...new Set(statuses)];
  };

  it.each(ROUTES.map((route) => [route.operationId, route] as const))('%s', (_id, route) => {
    const op = operation(document, route.operationId);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(expectedStatuses(route)));
    for (const [status, response] of Object.entries(op.responses)) {
      if (!/^[45]/.test(status)) continue;
      expect(Object.keys(response.content ?? {}).length, `${route.operationId} ${status}`).toBeGreaterThan(0);
    }
  });

  it('has the idempotency and cancellation conflicts where they can happen', () => {
    expect(operation(document, 'initiateCreditTransfer').responses).toHaveProperty('422');
    expect(operation(document, 'cancelCreditTransfer').responses).toHaveProperty('422');
    expect(operation(document, 'cancelCreditTransfer').responses).toHaveProperty('409');
  });

  it('answers the status report 304 with its tag and no body, and takes If-None-Match', () => {
    const op = operation(document, 'getCreditTransferStatus');
    const notModified = op.responses['304'];
    expect(notModified?.content).toBeUndefined();
    expect(notModified?.headers?.ETag?.required).toBe(true);
    expect(op.responses['200']?.headers?.ETag?.required).toBe(true);
    expect(op.responses['200']?.headers?.['Cache-Control']?.schema).toMatchObject({
      enum: ['private, no-cache'],
    });
    expect(parameter('getCreditTransferStatus', 'If-None-Match').in).toBe('header');
  });
});

describe('the committed document', () => {
  const committedPath = new URL('../../../openapi/openapi.json', import.meta.url);

  it('is the one the schemas and the route table make (npm run openapi:check)', async () => {
    const committed = await readFile(committedPath, 'utf8');
    expect(JSON.parse(committed)).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
  });

  it('is what /openapi.json serves, with the configured public URL as its server, token URL and samples', async () => {
    const served = await getOpenApiDocument(() => 'https://api.example.com/live')();
    const committed = JSON.parse(await readFile(committedPath, 'utf8'));
    const document = JSON.parse(served.body);
    expect(document.servers).toEqual([
      {
        url: 'https://api.example.com/live',
        description: committed.servers[0].description,
        'x-internal': false,
      },
    ]);
    expect(
      document.components.securitySchemes[CLIENT_CREDENTIALS_SCHEME].flows.clientCredentials.tokenUrl,
    ).toBe('https://api.example.com/live/oauth/token');
    const initiation = document.paths['/v1/payments/credit-transfers'].post;
    expect(initiation['x-codeSamples'][0].source).toContain("baseUrl: 'https://api.example.com/live'");
    expect(served.body).not.toContain('{publicUrl}');
    expect(document.components.schemas.OpenIdConfiguration.examples[0].token_endpoint).toBe(
      'https://api.example.com/live/oauth/token',
    );
    const comparable = (value: typeof committed) => {
      const copy = JSON.parse(
        JSON.stringify(value).replaceAll('{publicUrl}', 'https://api.example.com/live'),
      );
      delete copy.servers;
      delete copy.components.securitySchemes[CLIENT_CREDENTIALS_SCHEME].flows.clientCredentials.tokenUrl;
      for (const path of ['/docs', '/docs/scalar.js']) delete copy.paths[path];
      return copy;
    };
    expect(comparable(document)).toEqual(comparable(committed));
  });

  it('serves no operation of the reference page itself, which the committed contract keeps, marked internal', async () => {
    const committed = JSON.parse(await readFile(committedPath, 'utf8'));
    const served = JSON.parse((await getOpenApiDocument(() => 'http://127.0.0.1:3000')()).body);
    const internal = operationsOf(committed).filter(({ operation: op }) => op['x-internal' as never]);
    expect(internal.map(({ method, path }) => `${method} ${path}`).sort()).toEqual([
      'GET /docs',
      'GET /docs/scalar.js',
    ]);
    const servedIds = operationsOf(served).map(({ operation: op }) => op.operationId);
    expect(servedIds).not.toContain('getReferencePage');
    expect(servedIds).not.toContain('getReferencePageScript');
    expect(servedIds).toEqual(
      operationsOf(committed)
        .filter(({ operation: op }) => !op['x-internal' as never])
        .map(({ operation: op }) => op.operationId),
    );
    expect(Object.keys(served.paths)).not.toContain('/docs');
  });
});
