import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { AttributeType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { globalSecondaryIndexInput, LIST_INDEXES, TABLE_DEFINITION } from '#adapters/table/table-definition';
import { ROUTES, type Route } from '#routes';
import { GATEWAY_RESPONSES } from '#shared/gateway-responses';
import { WORKFLOW_FUNCTIONS } from '#workflow/task-functions';
import {
  AUTHORIZER_ENTRY,
  TOKEN_BURST_LIMIT,
  TOKEN_METHOD_PATH,
  TOKEN_RATE_LIMIT,
} from '../../lib/constructs/api.ts';
import { PROJECT_ROOT } from '../../lib/constructs/function-defaults.ts';
import { createApp } from '../../lib/credit-transfer-app.ts';
import { FUNCTION_MEMORY_MB, memoryOf } from '../../lib/function-memory.ts';
import {
  BUILTIN_VALIDATION,
  CDK_JSON_CONTEXT,
  SYNTH_TIMEOUT_MS,
  synthesized as synthesizedStages,
} from './synth.ts';
import {
  allowedActions,
  functionOfMethod,
  getAttTargets,
  methodsByRoute,
  type Resource,
  resourcesOf,
  statementsOfFunction,
} from './template-queries.ts';

const routeKey = (route: Pick<Route, 'method' | 'path'>): string => `${route.method} ${route.path}`;
const routeOf = (operationId: string): Route => {
  const route = ROUTES.find((candidate) => candidate.operationId === operationId);
  if (!route) throw new Error(`No route ${operationId}`);
  return route;
};

/** Every gateway response type API Gateway documents (supported-gateway-response-types). */
const API_GATEWAY_RESPONSE_TYPES = [
  'ACCESS_DENIED',
  'API_CONFIGURATION_ERROR',
  'AUTHORIZER_CONFIGURATION_ERROR',
  'AUTHORIZER_FAILURE',
  'BAD_REQUEST_PARAMETERS',
  'BAD_REQUEST_BODY',
  'DEFAULT_4XX',
  'DEFAULT_5XX',
  'EXPIRED_TOKEN',
  'INTEGRATION_FAILURE',
  'INTEGRATION_TIMEOUT',
  'INVALID_API_KEY',
  'INVALID_SIGNATURE',
  'MISSING_AUTHENTICATION_TOKEN',
  'QUOTA_EXCEEDED',
  'REQUEST_TOO_LARGE',
  'RESOURCE_NOT_FOUND',
  'THROTTLED',
  'UNAUTHORIZED',
  'UNSUPPORTED_MEDIA_TYPE',
  'WAF_FILTERED',
];

describe('CreditTransfers stack, default stage', () => {
  let nagFindings: string[];
  let synthesized: Template;

  beforeAll(async () => {
    const missing = [...ROUTES.map((route) => route.entry), AUTHORIZER_ENTRY].filter(
      (entry) => !existsSync(join(PROJECT_ROOT, entry)),
    );
    if (missing.length > 0) throw new Error(`Handler files missing: ${missing.join(', ')}`);

    // The default stage (dev); bundling is proven by `npm run synth`.
    const [stage] = await synthesizedStages({});
    nagFindings = stage.nagFindings;
    synthesized = stage.template;
  }, SYNTH_TIMEOUT_MS);

  const template = (): Template => synthesized;
  const methods = (): Map<string, Resource> => methodsByRoute(template());
  const methodOf = (route: Route): Resource => {
    const method = methods().get(routeKey(route));
    if (!method) throw new Error(`No method for ${routeKey(route)}`);
    return method;
  };
  const functionOfRoute = (operationId: string): string =>
    functionOfMethod(template(), methodOf(routeOf(operationId)));
  const authorizerFunction = (): string => {
    const [authorizer] = resourcesOf(template(), 'AWS::ApiGateway::Authorizer').values();
    const functions = resourcesOf(template(), 'AWS::Lambda::Function');
    const found = getAttTargets(authorizer?.Properties.AuthorizerUri).find((id) => functions.has(id));
    if (found === undefined) throw new Error('No authorizer function');
    return found;
  };

  const environmentOf = (functionId: string): Record<string, unknown> => {
    const fn = resourcesOf(template(), 'AWS::Lambda::Function').get(functionId);
    const environment = fn?.Properties.Environment as { Variables?: Record<string, unknown> } | undefined;
    return environment?.Variables ?? {};
  };

  it('synthesizes with no unacknowledged cdk-nag finding', () => {
    expect(nagFindings).toEqual([]);
  });

  it(
    'fails synthesis on an unacknowledged cdk-nag error',
    () => {
      // As `cdk synth` runs it (validation errors fail it); bundling skipped, only validation matters.
      const { app, stack } = createApp({
        builtinCloudFormationValidation: BUILTIN_VALIDATION,
        context: { ...CDK_JSON_CONTEXT, 'aws:cdk:bundling-stacks': [] },
      });
      new Table(stack, 'UncheckedTable', { partitionKey: { name: 'id', type: AttributeType.STRING } });
      expect(() => app.synth()).toThrow(/AwsSolutions-DDB3/);
    },
    SYNTH_TIMEOUT_MS,
  );

  it('is a REST API, not an HTTP API', () => {
    template().resourceCountIs('AWS::ApiGateway::RestApi', 1);
    template().resourceCountIs('AWS::ApiGatewayV2::Api', 0);
  });

  it('has one method per route, with its HTTP method on its path', () => {
    const routeMethods = [...methods().keys()].filter((key) => !key.startsWith('ANY '));
    expect(routeMethods.sort()).toEqual(ROUTES.map(routeKey).sort());
  });

  it('answers any other method on a known path 405 with Allow, from a mock integration', () => {
    const paths = [...new Set(ROUTES.map((route) => route.path))];
    for (const path of paths) {
      const allowed = ROUTES.filter((route) => route.path === path).map((route) => route.method);
      const properties = methods().get(`ANY ${path}`)?.Properties ?? {};
      const integration = properties.Integration as {
        Type: string;
        IntegrationResponses: { StatusCode: string; SelectionPattern?: string; ResponseParameters: object }[];
      };
      expect(integration?.Type, path).toBe('MOCK');
      expect(integration.IntegrationResponses, path).toEqual([
        expect.objectContaining({
          StatusCode: '405',
          ResponseParameters: expect.objectContaining({
            'method.response.header.Allow': `'${allowed.join(', ')}'`,
          }),
        }),
      ]);
      expect(integration.IntegrationResponses[0]?.SelectionPattern, path).toBeUndefined();
    }
    expect([...methods().keys()].filter((key) => key.startsWith('ANY '))).toHaveLength(paths.length);
  });

  it('serves each route with its own function', () => {
    const functions = ROUTES.map((route) => functionOfRoute(route.operationId));
    expect(new Set(functions).size).toBe(ROUTES.length);
  });

  it('streams the answer of a streamed route, and of no other: STREAM mode through the streaming invocation', () => {
    const streamed = ROUTES.filter((route) => route.streamed).map((route) => `${route.method} ${route.path}`);
    expect(streamed).toEqual(['GET /docs/scalar.js']);
    for (const route of ROUTES) {
      const key = `${route.method} ${route.path}`;
      const integration = methods().get(key)?.Properties.Integration as {
        ResponseTransferMode?: string;
        Uri: unknown;
      };
      const uri = JSON.stringify(integration.Uri);
      if (streamed.includes(key)) {
        expect(integration.ResponseTransferMode, key).toBe('STREAM');
        expect(uri, key).toContain('/response-streaming-invocations');
      } else {
        expect(integration.ResponseTransferMode ?? 'BUFFERED', key).toBe('BUFFERED');
        expect(uri, key).toContain('/invocations');
        expect(uri, key).not.toContain('response-streaming');
      }
    }
  });

  it('puts the TOKEN authorizer on every /v1 route', () => {
    const [authorizerId] = resourcesOf(template(), 'AWS::ApiGateway::Authorizer').keys();
    const v1Routes = ROUTES.filter((route) => route.path.startsWith('/v1/'));
    expect(v1Routes.length).toBeGreaterThan(0);
    for (const route of v1Routes) {
      expect(route.scope, `${routeKey(route)} needs a scope`).toBeDefined();
      expect(methodOf(route).Properties, routeKey(route)).toMatchObject({
        AuthorizationType: 'CUSTOM',
        AuthorizerId: { Ref: authorizerId },
      });
    }
  });

  it('leaves the token, discovery, key set, OpenAPI and docs routes public', () => {
    const publicRoutes = ROUTES.filter((route) => !route.path.startsWith('/v1/'));
    expect(publicRoutes.map((route) => route.path)).toEqual(
      expect.arrayContaining([
        '/oauth/token',
        '/.well-known/jwks.json',
        '/.well-known/openid-configuration',
        '/.well-known/oauth-authorization-server',
        '/openapi.json',
        '/docs',
      ]),
    );
    for (const route of publicRoutes) {
      expect(route.scope, `${routeKey(route)} has no scope`).toBeUndefined();
      expect(methodOf(route).Properties.AuthorizationType, routeKey(route)).toBe('NONE');
      expect(methodOf(route).Properties.AuthorizerId, routeKey(route)).toBeUndefined();
    }
  });

  it('has one REQUEST authorizer reading the Authorization header, its answers never cached (DPoP proofs are single-use)', () => {
    template().resourceCountIs('AWS::ApiGateway::Authorizer', 1);
    template().hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'REQUEST',
      IdentitySource: 'method.request.header.Authorization',
      AuthorizerResultTtlInSeconds: 0,
    });
  });

  it('answers every response type API Gateway has with a Gateway Response whose body names its status', () => {
    const responses = [...resourcesOf(template(), 'AWS::ApiGateway::GatewayResponse').values()];
    expect(responses.map((response) => response.Properties.ResponseType).sort()).toEqual(
      [...API_GATEWAY_RESPONSE_TYPES].sort(),
    );
    for (const response of responses) {
      const type = String(response.Properties.ResponseType);
      const templates = response.Properties.ResponseTemplates as Record<string, string>;
      const body = JSON.parse(templates['application/json'] ?? '') as { status: unknown };
      // The status API Gateway answers with is the one the body states, fallbacks included.
      expect(response.Properties.StatusCode, type).toBeDefined();
      expect(body.status, type).toBe(Number(response.Properties.StatusCode));
      const status = Number(response.Properties.StatusCode);
      if (type === 'DEFAULT_4XX') expect(status).toBeGreaterThanOrEqual(400);
      if (type === 'DEFAULT_4XX') expect(status).toBeLessThan(500);
      if (type === 'DEFAULT_5XX') expect(status).toBeGreaterThanOrEqual(500);
    }
  });

  it.each(GATEWAY_RESPONSES)('answers $type with $statusCode and the problem body', (definition) => {
    const responses = [...resourcesOf(template(), 'AWS::ApiGateway::GatewayResponse').values()].filter(
      (response) => response.Properties.ResponseType === definition.type,
    );
    expect(responses).toHaveLength(1);
    const properties = responses[0]?.Properties ?? {};
    expect(properties.StatusCode).toBe(String(definition.statusCode));

    const templates = properties.ResponseTemplates as Record<string, string>;
    const body = JSON.parse(templates['application/json'] ?? '') as Record<string, unknown>;
    expect(body).toMatchObject({
      error: definition.error,
      error_description: definition.description,
      status: definition.statusCode,
    });

    const headers = properties.ResponseParameters as Record<string, string>;
    expect(headers['gatewayresponse.header.Content-Type']).toBe("'application/problem+json'");
    expect(headers['gatewayresponse.header.Cache-Control']).toBe("'no-store'");
    for (const [name, value] of Object.entries(definition.headers)) {
      expect(headers[`gatewayresponse.header.${name}`]).toBe(`'${value}'`);
    }
  });

  it('throttles the stage, and the token endpoint more tightly than the rest', () => {
    const [stage] = [...resourcesOf(template(), 'AWS::ApiGateway::Stage').values()];
    const settings = stage?.Properties.MethodSettings as Record<string, unknown>[];
    const everything = settings.find(
      (setting) => setting.ResourcePath === '/*' && setting.HttpMethod === '*',
    );
    const token = settings.find(
      (setting) => setting.ResourcePath === '/~1oauth~1token' && setting.HttpMethod === 'POST',
    );
    expect(everything).toMatchObject({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 });
    expect(token).toMatchObject({
      ThrottlingRateLimit: TOKEN_RATE_LIMIT,
      ThrottlingBurstLimit: TOKEN_BURST_LIMIT,
      // Its own setting must not switch off the logging and metrics every other method has.
      LoggingLevel: 'ERROR',
      DataTraceEnabled: false,
      MetricsEnabled: true,
    });
    expect(TOKEN_METHOD_PATH).toBe('/oauth/token/POST');
  });

  it('runs every function on nodejs24.x and arm64', () => {
    const functions = [...resourcesOf(template(), 'AWS::Lambda::Function').values()];
    // One per route, the authorizer, one per workflow task, the reconciler, the two of webhooks and
    // the batch-start function.
    expect(functions).toHaveLength(ROUTES.length + 1 + Object.keys(WORKFLOW_FUNCTIONS).length + 1 + 2 + 1);
    for (const fn of functions) {
      expect(fn.Properties).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'] });
    }
  });

  it('gives each function the memory lib/function-memory.ts names for its handler', () => {
    const roles = resourcesOf(template(), 'AWS::IAM::Role');
    const entries = new Set<string>();
    for (const fn of resourcesOf(template(), 'AWS::Lambda::Function').values()) {
      const [roleId] = getAttTargets(fn.Properties.Role);
      // Each function's own role says which handler it runs (lib/constructs/function-defaults.ts).
      const entry = String(roles.get(roleId as string)?.Properties.Description).replace(/^Runs /, '');
      entries.add(entry);
      expect(fn.Properties.MemorySize, entry).toBe(memoryOf(entry));
    }
    // A size set for a handler no function runs is a size that has stopped applying.
    for (const entry of Object.keys(FUNCTION_MEMORY_MB)) expect(entries, entry).toContain(entry);
  });

  it('traces every function but the status-event queue reader, and logs each to its own log group with retention', () => {
    const logGroups = resourcesOf(template(), 'AWS::Logs::LogGroup');
    const functions = [...resourcesOf(template(), 'AWS::Lambda::Function').values()];
    const groupsUsed = new Set<string>();
    let queueReaders = 0;
    for (const fn of functions) {
      // The queue reader joins its caller's trace when that was sampled; Lambda samples every other.
      const queueReader = String(fn.Properties.Description).includes('records status events');
      if (queueReader) queueReaders++;
      expect(fn.Properties.TracingConfig).toEqual({ Mode: queueReader ? 'PassThrough' : 'Active' });
      // No source maps are shipped (lib/constructs/bundling.ts), so none is read at a cold start.
      expect(
        (fn.Properties.Environment as { Variables?: Record<string, string> } | undefined)?.Variables
          ?.NODE_OPTIONS,
      ).toBeUndefined();
      const group = (fn.Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
      expect(logGroups.get(group)?.Properties.RetentionInDays).toBeGreaterThan(0);
      groupsUsed.add(group);
    }
    expect(groupsUsed.size).toBe(functions.length);
    expect(queueReaders).toBe(1);
  });

  it('has the table keys and indexes of TABLE_DEFINITION', () => {
    const { partitionKey, sortKey, indexes } = TABLE_DEFINITION;
    template().resourceCountIs('AWS::DynamoDB::Table', 1);
    template().hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: partitionKey, KeyType: 'HASH' },
        { AttributeName: sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes:
        indexes.length === 0
          ? Match.absent()
          : // The local runtime creates its table with these very inputs.
            indexes.map(globalSecondaryIndexInput),
    });
  });

  it('keeps the table: point-in-time recovery, deletion protection, retained, encrypted', () => {
    template().hasResource('AWS::DynamoDB::Table', {
      Properties: Match.objectLike({
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        DeletionProtectionEnabled: true,
        SSESpecification: { SSEEnabled: true },
      }),
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
  });

  it('signs tokens with a retained ECC_NIST_P256 SIGN_VERIFY KMS key (ES256)', () => {
    const signingKeys = [...resourcesOf(template(), 'AWS::KMS::Key').values()].filter(
      (key) => key.Properties.KeyUsage === 'SIGN_VERIFY',
    );
    expect(signingKeys).toHaveLength(1);
    template().hasResource('AWS::KMS::Key', {
      Properties: Match.objectLike({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' }),
      DeletionPolicy: 'Retain',
    });
  });

  it('lets only the token function sign', () => {
    const functions = [...resourcesOf(template(), 'AWS::Lambda::Function').keys()];
    const signers = functions.filter((id) =>
      allowedActions(statementsOfFunction(template(), id)).has('kms:Sign'),
    );
    expect(signers).toEqual([functionOfRoute('issueToken')]);
  });

  it('gives every other function at most kms:GetPublicKey', () => {
    const tokenFunction = functionOfRoute('issueToken');
    for (const id of resourcesOf(template(), 'AWS::Lambda::Function').keys()) {
      if (id === tokenFunction) continue;
      // kms:GenerateMac is the list function's, on the HMAC cursor key; GenerateDataKey and
      // Decrypt are on the webhook secret key (findings.test.ts): none of them signs tokens.
      const kmsActions = [...allowedActions(statementsOfFunction(template(), id))].filter(
        (action) =>
          action.startsWith('kms:') &&
          !['kms:GenerateMac', 'kms:GenerateDataKey', 'kms:Decrypt'].includes(action),
      );
      expect(
        kmsActions.filter((action) => action !== 'kms:GetPublicKey'),
        id,
      ).toEqual([]);
    }
  });

  it('lets the token, key set and authorizer functions read the public key', () => {
    for (const id of [
      functionOfRoute('issueToken'),
      functionOfRoute('getJsonWebKeySet'),
      authorizerFunction(),
    ]) {
      expect(allowedActions(statementsOfFunction(template(), id)), id).toContain('kms:GetPublicKey');
    }
  });

  it('does not let the status function write the table', () => {
    const actions = allowedActions(
      statementsOfFunction(template(), functionOfRoute('getCreditTransferStatus')),
    );
    expect(actions).toContain('dynamodb:GetItem');
    expect(actions).not.toContain('dynamodb:PutItem');
    expect(actions).not.toContain('dynamodb:UpdateItem');
  });

  it('grants wildcard resources to nothing but X-Ray', () => {
    for (const id of resourcesOf(template(), 'AWS::Lambda::Function').keys()) {
      const wildcard = statementsOfFunction(template(), id).filter((statement) =>
        [statement.Resource].flat().includes('*'),
      );
      for (const statement of wildcard) {
        for (const action of [statement.Action].flat()) expect(action, id).toMatch(/^xray:/);
      }
    }
  });

  it('tells the token, key set, discovery and authorizer functions the issuer and audience', () => {
    // (The issuer's stability across API and stage changes: test/infra/stages.test.ts.)
    const tokenFunctions = [
      functionOfRoute('issueToken'),
      functionOfRoute('getJsonWebKeySet'),
      functionOfRoute('getOpenIdConfiguration'),
      functionOfRoute('getAuthorizationServerMetadata'),
      authorizerFunction(),
    ];
    const deployments = [
      ...resourcesOf(template(), 'AWS::ApiGateway::Deployment').keys(),
      ...resourcesOf(template(), 'AWS::ApiGateway::Stage').keys(),
    ];
    for (const id of tokenFunctions) {
      const variables = environmentOf(id);
      expect(Object.keys(variables), id).toEqual(expect.arrayContaining(['ISSUER', 'AUDIENCE']));
      expect(variables.AUDIENCE).toBe('credit-transfers');
      // The issuer names the API, never its deployment or stage resource (that would be a cycle).
      const issuer = JSON.stringify(variables.ISSUER);
      for (const deployment of deployments) expect(issuer).not.toContain(deployment);
    }
  });

  it('names the signing key to exactly the functions that may use it', () => {
    const [keyId] = [...resourcesOf(template(), 'AWS::KMS::Key')]
      .filter(([, key]) => key.Properties.KeyUsage === 'SIGN_VERIFY')
      .map(([id]) => id);
    for (const id of resourcesOf(template(), 'AWS::Lambda::Function').keys()) {
      const usesKey = [...allowedActions(statementsOfFunction(template(), id))].some(
        (action) => action === 'kms:Sign' || action === 'kms:GetPublicKey',
      );
      expect(environmentOf(id).SIGNING_KEY_IDS, id).toEqual(usesKey ? { Ref: keyId } : undefined);
    }
    expect(environmentOf(authorizerFunction()).SIGNING_KEY_IDS).toEqual({ Ref: keyId });
  });

  it('gives the table name to the functions that use the table', () => {
    const [tableId] = resourcesOf(template(), 'AWS::DynamoDB::Table').keys();
    for (const operationId of ['issueToken', 'initiateCreditTransfer', 'getCreditTransferStatus']) {
      expect(environmentOf(functionOfRoute(operationId)).TABLE_NAME, operationId).toEqual({ Ref: tableId });
    }
  });

  it('lets the list function only read: Query on the table and its list indexes, GetItem, BatchGetItem', () => {
    const [tableId] = resourcesOf(template(), 'AWS::DynamoDB::Table').keys();
    const statements = statementsOfFunction(template(), functionOfRoute('listCreditTransfers'));
    const dynamodb = [...allowedActions(statements)].filter((action) => action.startsWith('dynamodb:'));
    expect(dynamodb.sort()).toEqual(['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query']);

    const tableStatement = statements.find((statement) =>
      [statement.Action].flat().includes('dynamodb:Query'),
    );
    const resources = JSON.stringify(tableStatement?.Resource);
    expect(resources).toContain(tableId);
    for (const index of Object.values(LIST_INDEXES)) expect(resources).toContain(`/index/${index.indexName}`);
    expect(resources).not.toContain('/index/*');
    expect(environmentOf(functionOfRoute('listCreditTransfers')).TABLE_NAME).toEqual({ Ref: tableId });
  });

  it('signs list cursors with a secret derived from an HMAC key only the list functions may use', () => {
    const hmacKeys = [...resourcesOf(template(), 'AWS::KMS::Key')].filter(
      ([, key]) => key.Properties.KeySpec === 'HMAC_256',
    );
    expect(hmacKeys).toHaveLength(1);
    const [cursorKeyId, cursorKey] = hmacKeys[0] ?? [];
    expect(cursorKey?.Properties.KeyUsage).toBe('GENERATE_VERIFY_MAC');

    const listFunctions = [
      'listCreditTransfers',
      'listCreditTransferBatches',
      'listWebhookEndpoints',
      'listEvents',
    ].map(functionOfRoute);
    for (const listFunction of listFunctions) {
      expect(environmentOf(listFunction).LIST_CURSOR_KEY_ID).toEqual({ Ref: cursorKeyId });
      const kmsActions = [...allowedActions(statementsOfFunction(template(), listFunction))].filter(
        (action) => action.startsWith('kms:'),
      );
      expect(kmsActions).toEqual(['kms:GenerateMac']);
    }
    for (const id of resourcesOf(template(), 'AWS::Lambda::Function').keys()) {
      if (listFunctions.includes(id)) continue;
      expect(allowedActions(statementsOfFunction(template(), id)), id).not.toContain('kms:GenerateMac');
      expect(environmentOf(id).LIST_CURSOR_KEY_ID, id).toBeUndefined();
    }
  });

  it('outputs the API URL, the table name and the signing key id', () => {
    const outputs = Object.keys(template().toJSON().Outputs as object);
    expect(outputs).toEqual(expect.arrayContaining(['ApiUrl', 'TableName', 'SigningKeyId']));
  });
});
