import { Aws, Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  ApiKeySourceType,
  AuthorizationType,
  DomainName,
  EndpointType,
  IdentitySource,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  MockIntegration,
  PassthroughBehavior,
  RequestAuthorizer,
  ResponseTransferMode,
  ResponseType,
  RestApi,
  SecurityPolicy,
  type UsagePlan,
} from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { DEFAULT_TENANT_RATE_LIMIT, type TenantRateLimit } from '#domain/access/tenant-rate-limit';
import type { Route } from '#routes';
import {
  type GatewayResponseDefinition,
  gatewayResponseBody,
  gatewayResponseHeaders,
  methodNotAllowed,
} from '#shared/gateway-responses';
import { ServiceFunction } from './function-defaults.ts';

/** The authorizer is no route: API Gateway calls it before every route that has a scope. */
export const AUTHORIZER_ENTRY = 'lambdas/auth/authorizer.ts';

export interface CreditTransferApiProps {
  readonly stageName: string;
  /** Names the API in the console. */
  readonly apiName: string;
  /**
   * Create the account's API Gateway CloudWatch role (AWS::ApiGateway::Account), an account- and
   * region-wide setting other APIs share: only where the platform has not set it. @default false
   */
  readonly setAccountCloudWatchRole?: boolean;
  /** A WAF web ACL is associated with the stage (otherwise the cdk-nag finding is acknowledged). */
  readonly webAcl?: boolean;
  /**
   * Serve the API under this domain only (a regional custom domain with a TLS 1.2 policy); the
   * default execute-api endpoint is then disabled, so nothing bypasses the domain's settings.
   */
  readonly customDomain?: { readonly domainName: string; readonly certificateArn: string };
  /** Mutual TLS on the custom domain: clients present a certificate from a CA of this truststore. */
  readonly mtlsTruststore?: { readonly bucket: string; readonly key: string; readonly version?: string };
  readonly routes: readonly Route[];
  readonly gatewayResponses: readonly GatewayResponseDefinition[];
  /** Stage-wide steady-state limit, requests per second. @default 50 */
  readonly throttlingRateLimit?: number;
  /** Stage-wide burst limit. @default 100 */
  readonly throttlingBurstLimit?: number;
  /**
   * Each tenant's limit unless it has one of its own (`npm run clients -- set-limit`): the
   * default usage plan's throttle. @default DEFAULT_TENANT_RATE_LIMIT (25 per second, bursts of 50)
   */
  readonly tenantRateLimit?: TenantRateLimit;
  /** @default three months */
  readonly logRetention?: RetentionDays;
  /** Provisioned concurrency of the authorizer and of routes by operationId; none by default. */
  readonly provisionedConcurrency?: {
    readonly authorizer?: number;
    readonly routes?: Readonly<Record<string, number>>;
  };
}

/**
 * The REST API: one resource, method and function per route of the route table; a cached
 * TOKEN authorizer on every route with a scope; Gateway Responses so that the answers API
 * Gateway gives itself carry the same problem body as the handlers' answers.
 */
export class CreditTransferApi extends Construct {
  readonly restApi: RestApi;
  readonly authorizerFunction: ServiceFunction;
  readonly stageName: string;
  /** The URL clients call: the custom domain, else the stage's execute-api URL. */
  readonly publicUrl: string;
  readonly domain?: DomainName;
  /** The usage plan of every tenant without a limit of its own (stack output DefaultUsagePlanId). */
  readonly defaultUsagePlan: UsagePlan;
  /** The stage's access log: one JSON line per request (accessLogFormat). */
  readonly accessLogs: LogGroup;
  private readonly routeFunctions = new Map<string, ServiceFunction>();

  constructor(scope: Construct, id: string, props: CreditTransferApiProps) {
    super(scope, id);
    this.stageName = props.stageName;
    const logRetention = props.logRetention ?? RetentionDays.THREE_MONTHS;

    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: logRetention,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.accessLogs = accessLogs;

    this.restApi = new RestApi(this, 'RestApi', {
      restApiName: props.apiName,
      description: 'Credit transfer API: OAuth 2.0 client credentials, initiation and status',
      endpointTypes: [EndpointType.REGIONAL],
      // Logging needs the account's API Gateway CloudWatch role, a setting of the whole account and
      // region: set by the platform once, by this stack only when asked; kept when the stack goes.
      cloudWatchRole: props.setAccountCloudWatchRole ?? false,
      disableExecuteApiEndpoint: props.customDomain !== undefined,
      // The authorizer names the tenant's API key (usageIdentifierKey): clients send none.
      apiKeySourceType: ApiKeySourceType.AUTHORIZER,
      ...(props.setAccountCloudWatchRole && { cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN }),
      deployOptions: {
        stageName: props.stageName,
        tracingEnabled: true,
        metricsEnabled: true,
        // Errors only, and never request or response bodies: they carry account numbers and names.
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        throttlingRateLimit: props.throttlingRateLimit ?? 50,
        throttlingBurstLimit: props.throttlingBurstLimit ?? 100,
        // The one public endpoint that checks secrets gets a tighter limit against guessing.
        methodOptions: {
          // A method setting replaces the stage's, so logging and metrics are stated again.
          [TOKEN_METHOD_PATH]: {
            throttlingRateLimit: TOKEN_RATE_LIMIT,
            throttlingBurstLimit: TOKEN_BURST_LIMIT,
            loggingLevel: MethodLoggingLevel.ERROR,
            dataTraceEnabled: false,
            metricsEnabled: true,
          },
          // The public documents (key set, metadata, API reference) are read rarely and cached by
          // clients: a limit of their own, so they never take the stage's share of paying calls
          // and their functions need a small reservation (lib/concurrency.ts).
          ...Object.fromEntries(
            props.routes
              .filter(
                (route) => route.scope === undefined && `${route.path}/${route.method}` !== TOKEN_METHOD_PATH,
              )
              .map((route) => [
                `${route.path}/${route.method}`,
                {
                  throttlingRateLimit: PUBLIC_DOCUMENT_RATE_LIMIT,
                  throttlingBurstLimit: PUBLIC_DOCUMENT_BURST_LIMIT,
                  loggingLevel: MethodLoggingLevel.ERROR,
                  dataTraceEnabled: false,
                  metricsEnabled: true,
                },
              ]),
          ),
        },
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: accessLogFormat(),
      },
    });
    // The stack has its own ApiUrl output.
    this.restApi.node.tryRemoveChild('Endpoint');

    this.authorizerFunction = new ServiceFunction(this, 'AuthorizerFunction', {
      entry: AUTHORIZER_ENTRY,
      description: 'Verifies bearer access tokens for the credit transfer API',
      logRetention,
      provisionedConcurrency: props.provisionedConcurrency?.authorizer ?? 0,
    });
    Validations.of(this.authorizerFunction).acknowledge({
      id: 'cdk-validator-cfnguard::lambda_function_public_access_prohibited_check',
      reason:
        "The authorizer's only invoke permission names API Gateway and, as SourceArn, this API's authorizer; the rule reads SourceArn only as a literal or a plain reference, not the Fn::Join an authorizer's ARN is.",
    });
    // A REQUEST authorizer: a DPoP proof is checked against the method, path and headers. Its
    // answers are not cached: API Gateway would key them by the Authorization header alone, and a
    // cached Allow would let a replayed (or absent) proof through with a bound token.
    const authorizer = new RequestAuthorizer(this, 'RequestAuthorizer', {
      authorizerName: 'access-token',
      handler: this.authorizerFunction.invocable,
      identitySources: [IdentitySource.header('Authorization')],
      resultsCacheTtl: Duration.seconds(AUTHORIZER_CACHE_SECONDS),
    });

    for (const route of props.routes) {
      if (this.routeFunctions.has(route.operationId)) {
        throw new Error(`Route table: operationId ${route.operationId} appears twice`);
      }
      const routeFunction = new ServiceFunction(this, `${pascalCase(route.operationId)}Function`, {
        entry: route.entry,
        description: `${route.method} ${route.path}: ${route.summary}`,
        logRetention,
        provisionedConcurrency: props.provisionedConcurrency?.routes?.[route.operationId] ?? 0,
      });
      this.routeFunctions.set(route.operationId, routeFunction);

      const method = this.restApi.root.resourceForPath(route.path).addMethod(
        route.method,
        new LambdaIntegration(routeFunction.invocable, {
          proxy: true,
          allowTestInvoke: false,
          // The handler writes the answer's bytes to Lambda's response stream (routes.ts).
          ...(route.streamed && { responseTransferMode: ResponseTransferMode.STREAM }),
        }),
        route.scope === undefined
          ? { operationName: route.operationId, authorizationType: AuthorizationType.NONE }
          : {
              operationName: route.operationId,
              authorizationType: AuthorizationType.CUSTOM,
              authorizer,
              // Throttled per tenant by the usage plan of the key the authorizer names.
              apiKeyRequired: true,
            },
      );

      if (route.scope === undefined) {
        Validations.of(method).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason: `${route.method} ${route.path} is public by design: the token endpoint authenticates the client by its credentials, the key set and discovery documents are public by OAuth/OpenID convention, and the API description and reference page hold no data.`,
        });
      }
      Validations.of(method).acknowledge({
        id: 'cdk-validator-cfnguard::lambda_function_public_access_prohibited_check',
        reason:
          "The function's only invoke permission names API Gateway and, as SourceArn, this method of this API's stage; the rule reads SourceArn only as a literal or a plain reference, not the Fn::Join an API's ARN is.",
      });
      Validations.of(method).acknowledge({
        id: 'AwsSolutions-COG4',
        reason:
          'Clients are machines using OAuth 2.0 client credentials issued by this service; access tokens are KMS-signed JWTs verified by the Lambda TOKEN authorizer, so there is no Cognito user pool.',
      });
    }

    this.answerOtherMethods(props.routes);

    const tenantLimit = props.tenantRateLimit ?? DEFAULT_TENANT_RATE_LIMIT;
    // Tenants' API keys are added by `npm run clients` (create, admit), not by the stack.
    this.defaultUsagePlan = this.restApi.addUsagePlan('DefaultTenantUsagePlan', {
      name: `${props.apiName}-tenants`,
      description: 'Every tenant without a limit of its own: one API key per tenant, named by the authorizer',
      throttle: { rateLimit: tenantLimit.ratePerSecond, burstLimit: tenantLimit.burst },
      apiStages: [{ api: this.restApi, stage: this.restApi.deploymentStage }],
    });

    for (const definition of props.gatewayResponses) {
      this.restApi.addGatewayResponse(`${pascalCase(definition.type)}Response`, {
        type: ResponseType.of(definition.type),
        statusCode: String(definition.statusCode),
        responseHeaders: quoteHeaderValues(gatewayResponseHeaders(definition)),
        templates: { 'application/json': velocityLiteral(gatewayResponseBody(definition)) },
      });
    }

    Validations.of(this.restApi).acknowledge({
      id: 'AwsSolutions-APIG2',
      reason:
        'Request bodies, headers and parameters are validated by each handler against the zod schemas that also generate the OpenAPI document; API Gateway models would be a second copy that could drift. Failures answer 400 with invalidParams.',
    });
    if (!props.webAcl) {
      Validations.of(this.restApi).acknowledge({
        id: 'AwsSolutions-APIG3',
        reason:
          'WAF is off on this stage by choice (context waf, on by default for prod only): a stage without real clients is limited by stage throttling, the token endpoint limit and the authorizer.',
      });
    }

    if (props.customDomain) {
      this.domain = new DomainName(this, 'Domain', {
        domainName: props.customDomain.domainName,
        certificate: Certificate.fromCertificateArn(this, 'Certificate', props.customDomain.certificateArn),
        endpointType: EndpointType.REGIONAL,
        securityPolicy: SecurityPolicy.TLS_1_2,
        ...(props.mtlsTruststore && {
          mtls: {
            bucket: Bucket.fromBucketName(this, 'Truststore', props.mtlsTruststore.bucket),
            key: props.mtlsTruststore.key,
            ...(props.mtlsTruststore.version !== undefined && { version: props.mtlsTruststore.version }),
          },
        }),
      });
      // The domain's root is the stage: the issuer and every URL under it carry no stage path.
      this.domain.addBasePathMapping(this.restApi, { stage: this.restApi.deploymentStage });
    }
    // Every absolute URL a function writes (discovery, Location, the document's server) starts
    // with this, never with the request's Host. The stage name is the literal one: a reference to
    // the stage would make each function depend on the deployment that depends on it.
    this.publicUrl = props.customDomain
      ? `https://${props.customDomain.domainName}`
      : `https://${this.restApi.restApiId}.execute-api.${Aws.REGION}.${Aws.URL_SUFFIX}/${props.stageName}`;
    for (const routeFunction of this.routeFunctions.values()) {
      routeFunction.function.addEnvironment('PUBLIC_URL', this.publicUrl);
    }
    const cloudWatchRole = this.restApi.node.tryFindChild('CloudWatchRole');
    if (cloudWatchRole) {
      Validations.of(cloudWatchRole).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          "API Gateway's account-level logging role: the AWS managed policy is the documented one and only allows writing API Gateway's own log groups.",
      });
    }
  }

  /** The function that serves a route of the route table. */
  functionFor(operationId: string): ServiceFunction {
    const found = this.routeFunctions.get(operationId);
    if (!found) throw new Error(`No function for operation ${operationId}`);
    return found;
  }

  /**
   * A method a known path does not have is answered 405 with `Allow` by a catch-all (ANY) method
   * of the path's resource: API Gateway prefers the path's own methods, and without it answers
   * an unknown method as an unknown path (404). A mock integration, so no function runs for it.
   */
  private answerOtherMethods(routes: readonly Route[]): void {
    const methodsByPath = new Map<string, string[]>();
    for (const route of routes)
      methodsByPath.set(route.path, [...(methodsByPath.get(route.path) ?? []), route.method]);
    for (const [path, methods] of methodsByPath) {
      const answer = methodNotAllowed(methods);
      const headers = Object.keys(answer.headers).map((name) => `method.response.header.${name}`);
      const method = this.restApi.root.resourceForPath(path).addMethod(
        'ANY',
        new MockIntegration({
          passthroughBehavior: PassthroughBehavior.WHEN_NO_MATCH,
          requestTemplates: { 'application/json': '{"statusCode": 405}' },
          // The default response (no selection pattern): whatever the mock answers, the client gets the 405.
          integrationResponses: [
            {
              statusCode: '405',
              responseParameters: Object.fromEntries(
                Object.entries(quoteHeaderValues(answer.headers)).map(([name, value]) => [
                  `method.response.header.${name}`,
                  value,
                ]),
              ),
              responseTemplates: { 'application/json': velocityLiteral(answer.body) },
            },
          ],
        }),
        {
          authorizationType: AuthorizationType.NONE,
          methodResponses: [
            {
              statusCode: '405',
              responseParameters: Object.fromEntries(headers.map((name) => [name, true])),
            },
          ],
        },
      );
      Validations.of(method).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason: `ANY ${path} only answers 405 for the methods the path does not have; it reads nothing and calls no function.`,
      });
      Validations.of(method).acknowledge({
        id: 'AwsSolutions-COG4',
        reason: 'A fixed 405 from a mock integration: there is nothing to authorize.',
      });
    }
  }
}

/**
 * How long API Gateway reuses an authorizer's answer for the same token: no token is accepted
 * more than this long after its `exp` (the local server keeps the same bound).
 */
/** 0: every call is authorized afresh (DPoP proofs are single-use); see docs/authentication.md. */
export const AUTHORIZER_CACHE_SECONDS = 0;

/** Stage method path of the token endpoint, as API Gateway names it in method settings. */
export const TOKEN_METHOD_PATH = '/oauth/token/POST';
export const TOKEN_RATE_LIMIT = 10;
export const TOKEN_BURST_LIMIT = 20;
/** Each public document's own limit (requests per second, burst): those of the token endpoint. */
export const PUBLIC_DOCUMENT_RATE_LIMIT = TOKEN_RATE_LIMIT;
export const PUBLIC_DOCUMENT_BURST_LIMIT = TOKEN_BURST_LIMIT;

/** One JSON line per request, with the fields the Logs Insights queries of docs/operations.md ("Observing") use. */
const accessLogFormat = (): AccessLogFormat =>
  AccessLogFormat.custom(
    JSON.stringify({
      requestId: AccessLogField.contextRequestId(),
      // The dimension of the metrics read from this log (lib/constructs/monitoring.ts).
      stage: AccessLogField.contextStage(),
      extendedRequestId: AccessLogField.contextExtendedRequestId(),
      requestTime: AccessLogField.contextRequestTime(),
      sourceIp: AccessLogField.contextIdentitySourceIp(),
      userAgent: AccessLogField.contextIdentityUserAgent(),
      httpMethod: AccessLogField.contextHttpMethod(),
      resourcePath: AccessLogField.contextResourcePath(),
      path: AccessLogField.contextPath(),
      protocol: AccessLogField.contextProtocol(),
      status: AccessLogField.contextStatus(),
      responseLength: AccessLogField.contextResponseLength(),
      responseLatency: AccessLogField.contextResponseLatency(),
      integrationStatus: AccessLogField.contextIntegrationStatus(),
      integrationLatency: AccessLogField.contextIntegrationLatency(),
      authorizerStatus: AccessLogField.contextAuthorizerStatus(),
      authorizerLatency: AccessLogField.contextAuthorizerLatency(),
      clientId: AccessLogField.contextAuthorizerPrincipalId(),
      errorResponseType: AccessLogField.contextErrorResponseType(),
      xrayTraceId: AccessLogField.contextXrayTraceId(),
    }),
  );

/** API Gateway reads a header value as a mapping expression: a literal goes in single quotes. */
const quoteHeaderValues = (headers: Record<string, string>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers).map(([name, value]) => {
      if (value.includes("'")) throw new Error(`Gateway response header ${name} cannot hold a single quote`);
      return [name, `'${value}'`];
    }),
  );

/**
 * A Gateway Response template is Velocity: `$` starts a reference and `#` a directive.
 * The bodies are fixed JSON, used as they are once it is certain neither appears.
 */
const velocityLiteral = (text: string): string => {
  if (/[$#]/.test(text)) throw new Error(`Gateway response body is not a Velocity literal: ${text}`);
  return text;
};

const pascalCase = (name: string): string =>
  name
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part !== '')
    .map((part) =>
      part === part.toUpperCase()
        ? part.charAt(0) + part.slice(1).toLowerCase()
        : part.charAt(0).toUpperCase() + part.slice(1),
    )
    .join('');
