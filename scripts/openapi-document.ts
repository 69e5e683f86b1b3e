import * as z from 'zod/mini';
import {
  createDocument,
  type oas31,
  type ZodOpenApiOperationObject,
  type ZodOpenApiOverride,
  type ZodOpenApiPathItemObject,
  type ZodOpenApiResponseObject,
} from 'zod-openapi';
import { CLIENT_AUTHENTICATION_CHALLENGE } from '#auth/token-error-responses';
import type { authorizationServerMetadata } from '#domain/access/authorization-server-metadata';
import { CLIENT_ID_PATTERN } from '#domain/access/client';
import { ACCESS_TOKEN_LIFETIME_SECONDS } from '#domain/access/issue-access-token';
import { MAX_SECRET_LENGTH, MIN_SECRET_LENGTH } from '#domain/access/register-client';
import { SCOPE_DESCRIPTIONS, SCOPES } from '#domain/access/scopes';
import { tokenRequestSchema, tokenResponseSchema } from '#domain/access/token-request';
import type { JsonWebKeySet } from '#domain/access/token-signer';
import {
  atMostCharacters,
  described,
  lengthBoundedText,
  optionalField,
  patternLength,
} from '#domain/commons/text';
import { cancellationRequestSchema } from '#domain/credit-transfers/cancel-credit-transfer';
import {
  creditTransferRequestSchema,
  creditTransferSchema,
  idempotencyKeySchema,
  paymentIdSchema,
  servicerHeadersSchema,
} from '#domain/credit-transfers/credit-transfer';
import { POLL_AFTER_SECONDS } from '#domain/credit-transfers/get-credit-transfer-status';
import { DEFAULT_MAX_VALUE_DATE_DAYS } from '#domain/credit-transfers/initiate-credit-transfer';
import {
  CURSOR_MAX_LENGTH,
  listCreditTransfersQuerySchema,
  MAX_LIMIT,
} from '#domain/credit-transfers/list-filters';
import {
  batchAcceptedSchema,
  batchPageSchema,
  batchRequestSchema,
  batchSummarySchema,
} from '#domain/iso20022/batch-schemas';
import { listBatchesQuerySchema } from '#domain/iso20022/list-batches';
import { MAX_BATCH_BYTES, MAX_BATCH_TRANSACTIONS } from '#domain/iso20022/submit-batch';
import { approvalDecisionRequestSchema } from '#domain/payment-controls/decide-approval';
import { batchDecisionResultSchema } from '#domain/payment-controls/decide-batch-approval';
import { limitUsageQuerySchema } from '#domain/payment-controls/limit-usage';
import { listVersionsQuerySchema, MAX_VERSIONS_PAGE } from '#domain/payment-controls/manage-payment-controls';
import { limitSchema, MAX_LIMITS, paymentControlsSchema } from '#domain/payment-controls/payment-controls';
import { listEventsQuerySchema } from '#domain/webhooks/list-events';
import {
  createdWebhookEndpointSchema,
  createWebhookEndpointRequestSchema,
  deliveryAttemptSchema,
  MAX_ENDPOINTS_PER_TENANT,
  redeliveryRequestSchema,
  redeliveryResultSchema,
  rotatedWebhookSecretSchema,
  webhookEndpointIdSchema,
  webhookEndpointSchema,
} from '#domain/webhooks/webhook-endpoint';
import {
  listWebhookDeliveriesQuerySchema,
  listWebhookEndpointsQuerySchema,
  MAX_REDELIVERIES_PER_REQUEST,
} from '#domain/webhooks/webhook-endpoints';
import { EVENT_RETENTION_DAYS, EVENT_SETTLE_MS, webhookEventSchema } from '#domain/webhooks/webhook-event';
import { ROUTES, type Route } from '#routes';
import { gatewayResponse } from '#shared/gateway-responses';
import { MAX_BODY_BYTES, MAX_JSON_DEPTH } from '#shared/middleware';
import {
  type ErrorCode,
  MAX_INVALID_PARAM_TEXT,
  MAX_INVALID_PARAMS,
  PROBLEM_CONTENT_TYPE,
  type ProblemBody,
} from '#shared/problem';
import { codeSamplesOf, SDK_INSTALLATION } from './openapi-code-samples.ts';
import {
  CANCELLATION_KEY_EXAMPLE,
  CANCELLATION_REQUEST_EXAMPLE,
  COMPONENT_EXAMPLES,
  CREDIT_TRANSFER_EXAMPLE,
  DECISION_KEY_EXAMPLE,
  IDEMPOTENCY_KEY_EXAMPLE,
  INITIATION_EXAMPLE,
  JSON_WEB_KEY_SET_EXAMPLE,
  LIST_EXAMPLE,
  OPENAPI_DOCUMENT_EXAMPLE,
  OPENID_CONFIGURATION_EXAMPLE,
  PAYMENT_CONTROLS_EXAMPLE,
  PAYMENT_ID_EXAMPLE,
  problemExample,
  SETTLED_EXAMPLE,
  TOKEN_REQUEST_EXAMPLE,
  TOKEN_RESPONSE_EXAMPLE,
  tokenProblemExample,
} from './openapi-examples.ts';

/**
 * The OpenAPI 3.1 document of the service, made by zod-openapi from the route table (which
 * operations exist) and the zod schemas (what they take and answer). `OPERATIONS` holds what
 * the route table does not: parameters, bodies, responses and prose, one entry per operationId.
 * It lives in scripts/ because it reads the auth handlers' schemas; functions serve the
 * committed openapi/openapi.json that `npm run openapi` writes from it.
 */

export const API_TITLE = 'Credit Transfers API';
/** The version of the payments interface definition (spec section 9). */
export const API_VERSION = '0.7.0';

export type OpenApiDocument = oas31.OpenAPIObject;

// Answers and the token endpoint's fields are bounded by length only: an error names whatever
// field a client sent, and the token endpoint reads no text beyond comparing it. Request schemas
// from the domain carry their own rules (no control characters in text).
const text = lengthBoundedText;
const named = <T extends z.ZodMiniType>(schema: T, id: string): T => schema.check(z.meta({ id }));

// ---------------------------------------------------------------------------------------------
// Schemas of answers whose handlers have no zod schema of their own (the error body, the key
// set, the discovery metadata), and the token endpoint's schemas with the bounds it applies.

const ERROR_CODES = [
  'invalid_request',
  'unauthorized',
  'invalid_token',
  'insufficient_scope',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'payment_not_cancellable',
  'approval_already_decided',
  'payment_not_pending',
  'precondition_failed',
  'precondition_required',
  'webhook_endpoint_disabled',
  'too_many_webhook_endpoints',
  'payload_too_large',
  'request_timeout',
  'request_header_fields_too_large',
  'unsupported_media_type',
  'idempotency_key_reused',
  'message_id_reused',
  'rate_limited',
  'internal_error',
  'service_unavailable',
  'invalid_client',
  'invalid_grant',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_dpop_proof',
  'use_dpop_nonce',
] as const satisfies readonly ErrorCode[];

/** The one error body (`#shared/problem`): RFC 9457 problem plus the spec's `error` fields. */
export const problemSchema = named(
  z.strictObject({
    type: described(text(1, 256), 'URI reference naming the problem type (RFC 9457).'),
    title: described(text(1, 64), 'Short summary of the status code.'),
    status: described(z.int().check(z.gte(400), z.lte(599)), 'The HTTP status code.'),
    detail: described(text(0, 2048), 'What went wrong with this request.'),
    error: described(z.enum(ERROR_CODES), 'Machine-readable error code (snake_case).'),
    error_description: described(text(0, 2048), 'Same text as `detail`, under the name the spec uses.'),
    invalidParams: optionalField(
      z
        .array(
          z.strictObject({
            name: described(
              text(0, MAX_INVALID_PARAM_TEXT),
              'The field, header or parameter, as a path such as `creditor.name`.',
            ),
            reason: described(text(0, MAX_INVALID_PARAM_TEXT), 'Why it was refused.'),
          }),
        )
        .check(z.maxLength(MAX_INVALID_PARAMS)),
      'On a 400: every offending field.',
    ),
  }),
  'Problem',
);

// The schema and `ProblemBody` must describe the same object; this fails to compile if they drift.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const problemMatchesBody: Same<z.infer<typeof problemSchema>, ProblemBody> = true;
void problemMatchesBody;

/** Space-separated scopes: at most all of them once (RFC 6749 3.3). */
const SCOPE_LIST_MAX_LENGTH = SCOPES.join(' ').length;
/** A signed JWT of this issuer's claims stays far below this. */
const ACCESS_TOKEN_MAX_LENGTH = 4096;

/** A field of a handler's schema with more checks (the bounds the handler applies elsewhere). */
const narrowed = <T extends z.ZodMiniType>(field: T, ...checks: z.core.$ZodCheck<z.output<T>>[]) =>
  field.check(...checks);

/** The same, for an optional field: the checks go on the value, the description stays. */
const narrowedOptional = (field: z.ZodMiniOptional<z.ZodMiniString>, ...checks: z.core.$ZodCheck<string>[]) =>
  optionalField(field.def.innerType.check(...checks), z.globalRegistry.get(field)?.description ?? '');

/**
 * The token endpoint's request (`#domain/access/token-request`), with the bounds the issuer applies:
 * a client id outside CLIENT_ID_PATTERN or a secret longer than any registered one is refused
 * as `invalid_client`.
 */
const tokenRequestShape = tokenRequestSchema.shape;
export const documentedTokenRequestSchema = named(
  z.extend(tokenRequestSchema, {
    client_id: narrowedOptional(tokenRequestShape.client_id, z.regex(CLIENT_ID_PATTERN), patternLength(64)),
    client_secret: narrowedOptional(
      tokenRequestShape.client_secret,
      z.minLength(MIN_SECRET_LENGTH),
      atMostCharacters(MAX_SECRET_LENGTH),
    ),
    scope: narrowedOptional(tokenRequestShape.scope, atMostCharacters(SCOPE_LIST_MAX_LENGTH)),
  }),
  'TokenRequest',
);

const tokenResponseShape = tokenResponseSchema.shape;
export const documentedTokenResponseSchema = named(
  z.extend(tokenResponseSchema, {
    access_token: narrowed(tokenResponseShape.access_token, z.maxLength(ACCESS_TOKEN_MAX_LENGTH)),
    expires_in: narrowed(tokenResponseShape.expires_in, z.gte(1), z.lte(ACCESS_TOKEN_LIFETIME_SECONDS)),
    scope: narrowed(tokenResponseShape.scope, z.maxLength(SCOPE_LIST_MAX_LENGTH)),
  }),
  'TokenResponse',
);

/** The key set `#auth/key-set` answers. */
export const jsonWebKeySetSchema = named(
  z.strictObject({
    keys: described(
      z
        .array(
          z.discriminatedUnion('kty', [
            z.strictObject({
              kty: z.literal('EC'),
              crv: z.literal('P-256'),
              x: described(text(43, 43), 'The point x coordinate, base64url.'),
              y: described(text(43, 43), 'The point y coordinate, base64url.'),
              kid: described(text(1, 64), 'Key id (RFC 7638 thumbprint), the `kid` of the token header.'),
              alg: described(z.literal('ES256'), 'ECDSA P-256 with SHA-256 (FAPI 2.0).'),
              use: z.literal('sig'),
            }),
            z.strictObject({
              kty: z.literal('RSA'),
              n: described(text(1, 1024), 'RSA modulus, base64url.'),
              e: described(text(1, 16), 'RSA public exponent, base64url.'),
              kid: described(text(1, 64), 'Key id (RFC 7638 thumbprint), the `kid` of the token header.'),
              alg: described(
                z.literal('RS256'),
                'RSASSA-PKCS1-v1_5 with SHA-256: keys made before the move to ES256.',
              ),
              use: z.literal('sig'),
            }),
          ]),
        )
        .check(z.maxLength(10)),
      'The signing key, and during a rotation the next or previous one.',
    ),
  }),
  'JsonWebKeySet',
);

const shortList = (maximum: number) => z.array(text(1, 64)).check(z.maxLength(maximum));

/** The metadata `#auth/openid-configuration` answers (`#domain/access/authorization-server-metadata`, RFC 8414). */
export const openIdConfigurationSchema = named(
  z.strictObject({
    issuer: described(text(1, 512), 'The `iss` of every access token.'),
    token_endpoint: text(1, 512),
    jwks_uri: text(1, 512),
    grant_types_supported: shortList(10),
    token_endpoint_auth_methods_supported: shortList(10),
    token_endpoint_auth_signing_alg_values_supported: described(
      shortList(10),
      'What a private_key_jwt client assertion may be signed with (RFC 7523).',
    ),
    dpop_signing_alg_values_supported: described(
      shortList(10),
      'What a DPoP proof may be signed with (RFC 9449).',
    ),
    scopes_supported: shortList(SCOPES.length),
    response_types_supported: described(shortList(10), 'Empty: there is no authorization endpoint.'),
    service_documentation: described(text(1, 512), 'This reference page.'),
  }),
  'OpenIdConfiguration',
);

// The schemas must accept what the handlers answer; these fail to compile if they drift.
type Accepts<Schema, Value> = [Value] extends [Schema] ? true : false;
const keySetMatches: Accepts<z.infer<typeof jsonWebKeySetSchema>, JsonWebKeySet> = true;
const metadataMatches: Accepts<
  z.infer<typeof openIdConfigurationSchema>,
  ReturnType<typeof authorizationServerMetadata>
> = true;
void keySetMatches;
void metadataMatches;

const openApiDocumentSchema = named(
  z.looseObject({ openapi: z.literal('3.1.0'), info: z.looseObject({ version: text(1, 32) }) }),
  'OpenApiDocument',
);

// ---------------------------------------------------------------------------------------------
// Parameters.

const servicerHeaders = {
  servicerId: described(servicerHeadersSchema.shape.servicerId, 'Account servicer identification: the bank.'),
  servicerBranchId: described(
    servicerHeadersSchema.shape.servicerBranchId,
    'Account servicer at branch or centre level.',
  ),
};

/** A parameter with the value the reference page's request sample sends. */
const withParamExample = <T extends z.ZodMiniType>(schema: T, example: string): T =>
  schema.check(z.meta({ param: { example } }));

/**
 * `idempotencyId` (the spec's name) and `Idempotency-Key` (the common one), read as one key. The
 * sample sends only `idempotencyId`: two names for one key in one request would have to match.
 */
const idempotencyHeaders = (behaviour: string, example: string) => ({
  idempotencyId: withParamExample(
    optionalField(idempotencyKeySchema, `Identifier the client reuses when it repeats a call. ${behaviour}`),
    example,
  ),
  'Idempotency-Key': optionalField(
    idempotencyKeySchema,
    'Accepted as another name of `idempotencyId`; when both are sent they must be equal.',
  ),
});

/**
 * A parameter whose example the reference page shows unticked (`x-disabled`, Scalar's extension of
 * the Example object): the sample and the try-it leave it out until the reader ticks it.
 */
const withOfferedExample = <T extends z.ZodMiniType>(schema: T, example: string): T =>
  schema.check(z.meta({ param: { examples: { offered: { value: example, 'x-disabled': true } } } }));

// The list sample and try-it send no filter: every transfer of the client, so a list right after
// a first initiation shows it (a filter of the sample's would answer [] on a fresh service). The
// status filter, an enum, would otherwise be sent with its first value (`Received`).
const documentedListQuery = z.extend(listCreditTransfersQuerySchema, {
  'status.eq': withOfferedExample(listCreditTransfersQuerySchema.shape['status.eq'], 'Rejected'),
});

const paymentIdPath = z.strictObject({
  paymentId: withParamExample(
    described(paymentIdSchema, 'The paymentId the initiation answered.'),
    PAYMENT_ID_EXAMPLE,
  ),
});

// ---------------------------------------------------------------------------------------------
// Responses.

interface Header {
  schema: z.ZodMiniType;
  description: string;
  required?: boolean;
}

type Headers = Record<string, Header>;

/** Headers of a 202: where the status is, and whether this answer replays an earlier request. */
const acceptedHeaders = (request: string, compared: string): Headers => ({
  Location: {
    schema: text(1, 512),
    description:
      'The status operation of this credit transfer: an absolute URL under the public URL the service is ' +
      'configured with (never one taken from the request).',
    required: true,
  },
  'Idempotent-Replayed': {
    schema: z.enum(['true']),
    description: `Present (\`true\`) when this answer replays an earlier ${request} with the same idempotency key and ${compared}.`,
  },
});

const RETRY_AFTER_SECONDS = z.int().check(z.gte(0), z.lte(86_400));
const gatewayRetryAfter = Number(gatewayResponse('THROTTLED').headers['Retry-After'] ?? 1);
const RETRY_AFTER: Header = {
  schema: RETRY_AFTER_SECONDS,
  description: `Seconds to wait before retrying (${gatewayRetryAfter} when the gateway throttles).`,
  required: true,
};

const WWW_AUTHENTICATE: Header = {
  schema: text(1, 256),
  description: 'The Bearer challenge (RFC 6750), naming the error.',
  required: true,
};

/** What a client may keep of a status report, and the tag that names it (RFC 9110 8.8.3). */
const statusCacheHeaders: Headers = {
  ETag: {
    schema: text(3, 64),
    description:
      'Strong entity tag of this status report; it changes whenever the report does. Send it as ' +
      '`If-None-Match` to ask whether anything changed.',
    required: true,
  },
  'Cache-Control': {
    schema: z.enum(['private, no-cache']),
    description: 'The client may keep the report, but must revalidate it (with `If-None-Match`) before use.',
    required: true,
  },
  'Retry-After': {
    schema: RETRY_AFTER_SECONDS,
    description: `On a transfer that is not final yet: seconds to wait before asking again (${POLL_AFTER_SECONDS}). Absent once the status is final.`,
  },
};

type ErrorStatus =
  | 400
  | 401
  | 403
  | 404
  | 408
  | 409
  | 412
  | 413
  | 415
  | 422
  | 428
  | 429
  | 431
  | 500
  | 502
  | 503
  | 504;

interface ErrorResponse {
  description: string;
  headers?: Headers;
}

const ERROR_RESPONSES: Record<ErrorStatus, ErrorResponse> = {
  400: {
    description: 'The request is not valid (`invalid_request`); `invalidParams` names every offending field.',
  },
  401: {
    description:
      'The access token is missing, malformed, expired or not valid for this API (`unauthorized`, ' +
      '`invalid_token`). Obtain a new token and retry.',
    headers: { 'WWW-Authenticate': WWW_AUTHENTICATE },
  },
  403: {
    description:
      'The access token does not carry the scope this operation requires (`insufficient_scope`); ' +
      '`error_description` and `WWW-Authenticate` (`error="insufficient_scope", scope="..."`) name it.',
    headers: { 'WWW-Authenticate': WWW_AUTHENTICATE },
  },
  404: {
    description: 'No credit transfer with this paymentId for this tenant (`not_found`).',
  },
  408: {
    description: 'The request was not received in time; send it again, whole.',
  },
  409: {
    description:
      'The credit transfer is past the point where it can be cancelled (`payment_not_cancellable`).',
  },
  412: {
    description:
      'If-Match names another version than the current one (`precondition_failed`): read it again, apply the change, send it with its ETag.',
  },
  428: {
    description: 'The change was sent without If-Match (`precondition_required`).',
  },
  413: {
    description: `The request body is larger than ${MAX_BODY_BYTES / 1024} KiB (\`payload_too_large\`).`,
  },
  415: {
    description: 'The request body is not `application/json` (`unsupported_media_type`).',
  },
  422: {
    description:
      'The idempotency key was used before with a different request body (`idempotency_key_reused`).',
  },
  429: {
    description: 'Too many requests (`rate_limited`); retry after the number of seconds in `Retry-After`.',
    headers: { 'Retry-After': RETRY_AFTER },
  },
  431: {
    description: 'The request headers are too large; send fewer or shorter headers.',
  },
  500: {
    description: 'An internal error occurred (`internal_error`); the request may be retried.',
  },
  502: {
    description: `${gatewayResponse('INTEGRATION_FAILURE').description} (\`internal_error\`).`,
  },
  503: {
    description:
      'A service the operation depends on did not answer in time (`service_unavailable`); nothing is ' +
      'known to be wrong with the request: retry it after the number of seconds in `Retry-After`.',
    headers: { 'Retry-After': RETRY_AFTER },
  },
  504: {
    description: `${gatewayResponse('INTEGRATION_TIMEOUT').description} (\`internal_error\`).`,
  },
};

/** Statuses any operation can answer: the gateway and the server in front of every handler. */
const ALWAYS: readonly ErrorStatus[] = [408, 429, 431, 500, 502, 503, 504];

interface ErrorOverride {
  description?: string;
  headers?: Headers;
  /** Media types of the Problem body, when not application/problem+json alone. */
  mediaTypes?: readonly string[];
  /** The body shown for it, when not the service's usual refusal of this status. */
  example?: ProblemBody;
}

/** Response headers as zod-openapi takes them: an object schema, optional where not required. */
const headersObject = (headers: Headers) =>
  z.object(
    Object.fromEntries(
      Object.entries(headers).map(([name, { schema, description, required }]) => [
        name,
        required ? described(schema, description) : optionalField(schema, description),
      ]),
    ),
  );

/** The error responses of an operation (with those of ALWAYS), each with the Problem body. */
const errors = (
  statuses: readonly ErrorStatus[],
  overrides: Partial<Record<ErrorStatus, ErrorOverride>> = {},
): Record<string, ZodOpenApiResponseObject> =>
  Object.fromEntries(
    [...new Set([...statuses, ...ALWAYS])]
      .sort((a, b) => a - b)
      .map((status) => {
        const override = overrides[status] ?? {};
        const description = override.description ?? ERROR_RESPONSES[status].description;
        const headers = override.headers ?? ERROR_RESPONSES[status].headers;
        const mediaTypes = override.mediaTypes ?? [PROBLEM_CONTENT_TYPE];
        const example = override.example ?? problemExample(status);
        const response: ZodOpenApiResponseObject = {
          description,
          ...(headers && { headers: headersObject(headers) }),
          content: Object.fromEntries(mediaTypes.map((type) => [type, { schema: problemSchema, example }])),
        };
        return [String(status), response];
      }),
  );

const json = (schema: z.ZodMiniType, example?: unknown) => ({
  'application/json': { schema, ...(example !== undefined && { example }) },
});

export { CREDIT_TRANSFER_EXAMPLE, INITIATION_EXAMPLE };

/** A pain.001 of one transaction, the example of the batch's XML body. */
const PAIN_001_EXAMPLE =
  '<?xml version="1.0" encoding="UTF-8"?>\n<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"><CstmrCdtTrfInitn>' +
  '<GrpHdr><MsgId>PAYROLL-2026-12-A</MsgId><CreDtTm>2026-11-26T09:30:00Z</CreDtTm><NbOfTxs>1</NbOfTxs><InitgPty><Nm>Example Manufacturing Ltd</Nm></InitgPty></GrpHdr>' +
  '<PmtInf><PmtInfId>SALARIES-DEC</PmtInfId><PmtMtd>TRF</PmtMtd><ReqdExctnDt><Dt>2026-12-01</Dt></ReqdExctnDt>' +
  '<Dbtr><Nm>Example Manufacturing Ltd</Nm></Dbtr><DbtrAcct><Id><Othr><Id>001-DDA-01-123456</Id></Othr></Id></DbtrAcct>' +
  '<DbtrAgt><FinInstnId><BICFI>EXMPNL2A</BICFI></FinInstnId></DbtrAgt><CdtTrfTxInf><PmtId><EndToEndId>E2E-SAL-DEC-0001</EndToEndId></PmtId>' +
  '<Amt><InstdAmt Ccy="EUR">3150.25</InstdAmt></Amt><Cdtr><Nm>Ana Ruiz</Nm></Cdtr><CdtrAcct><Id><IBAN>DE89370400440532013000</IBAN></Id></CdtrAcct>' +
  '</CdtTrfTxInf></PmtInf></CstmrCdtTrfInitn></Document>\n';

/** A pain.002 as the service writes it (trimmed to one transaction), the example of every XML answer. */
const PAIN_002_EXAMPLE =
  '<?xml version="1.0" encoding="UTF-8"?>\n<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.10">' +
  '<CstmrPmtStsRpt><GrpHdr><MsgId>5f0c2e9a41b7d8e4fa3c26d9b8a7f1e2071</MsgId><CreDtTm>2026-12-01T00:00:01.977Z</CreDtTm></GrpHdr>' +
  '<OrgnlGrpInfAndSts><OrgnlMsgId>PAYROLL-2026-12-A</OrgnlMsgId><OrgnlMsgNmId>pain.001.001.09</OrgnlMsgNmId></OrgnlGrpInfAndSts>' +
  '<OrgnlPmtInfAndSts><OrgnlPmtInfId>SUPPLIERS-DEC</OrgnlPmtInfId><TxInfAndSts><OrgnlEndToEndId>INV-2026-0457</OrgnlEndToEndId>' +
  '<TxSts>RJCT</TxSts><StsRsnInf><Rsn><Cd>AM04</Cd></Rsn><AddtlInf>InsufficientFunds</AddtlInf></StsRsnInf>' +
  '<AccptncDtTm>2026-12-01T00:00:01.977Z</AccptncDtTm></TxInfAndSts></OrgnlPmtInfAndSts></CstmrPmtStsRpt>\n</Document>\n';

/** A pain document as text: its schema is ISO's XSD, named in the description. */
const xml = (description: string, example = PAIN_002_EXAMPLE) => ({
  'application/xml': {
    schema: described(z.string().check(z.maxLength(MAX_BATCH_BYTES)), description),
    example,
  },
});

// ---------------------------------------------------------------------------------------------
// Webhook endpoints and events (issue 17).

const webhookEndpointPath = z.strictObject({ id: webhookEndpointIdSchema() });
const ENDPOINT_NOT_FOUND = {
  404: { description: 'No webhook endpoint with this id for this client (`not_found`).' },
} as const;
const paginationCursorHeader = headersObject({
  'Pagination-Cursor': {
    schema: text(0, CURSOR_MAX_LENGTH),
    description: 'Position of the next page: send it as `cursor`. Empty on the last page.',
    required: true,
  },
});

const WEBHOOK_OPERATIONS: Readonly<Record<string, OperationDetails>> = {
  createWebhookEndpoint: {
    tags: ['Webhooks'],
    description:
      'Registers an endpoint: every event of the client (or of the types named) is sent to it as an HTTP POST ' +
      'with the headers `webhook-id` (the event id, the same on every retry), `webhook-timestamp` and ' +
      '`webhook-signature`, as the Standard Webhooks specification defines them. The answer carries the signing ' +
      'secret, this once only. A delivery answered with anything but 2xx within 10 seconds is retried after 5 s, ' +
      '5 min, 30 min, 2 h, 5 h, 10 h and 10 h; an endpoint failing for three days, or answering 410 Gone, is ' +
      `disabled. A client registers at most ${MAX_ENDPOINTS_PER_TENANT} endpoints.`,
    requestBody: {
      description: 'The endpoint.',
      required: true,
      content: json(createWebhookEndpointRequestSchema, COMPONENT_EXAMPLES.WebhookEndpointRequest),
    },
    responses: {
      '201': {
        description: 'Registered, with its signing secret.',
        content: json(createdWebhookEndpointSchema, COMPONENT_EXAMPLES.CreatedWebhookEndpoint),
      },
      ...errors([400, 401, 403, 409, 413, 415], {
        400: {
          description:
            'The request is not valid (`invalid_request`): among others, a URL that is not https, carries ' +
            'credentials, or whose host is or resolves to an address that is not public.',
        },
        409: {
          description: `The client has ${MAX_ENDPOINTS_PER_TENANT} endpoints already (\`too_many_webhook_endpoints\`).`,
        },
      }),
    },
  },
  listWebhookEndpoints: {
    tags: ['Webhooks'],
    description: 'The client’s webhook endpoints, oldest first, a page at a time.',
    requestParams: { query: listWebhookEndpointsQuerySchema },
    responses: {
      '200': {
        description: 'A page of endpoints (possibly empty).',
        content: json(z.array(webhookEndpointSchema).check(z.maxLength(MAX_LIMIT)), [
          COMPONENT_EXAMPLES.WebhookEndpoint,
        ]),
        headers: paginationCursorHeader,
      },
      ...errors([400, 401, 403]),
    },
  },
  getWebhookEndpoint: {
    tags: ['Webhooks'],
    description: 'One webhook endpoint. Another client’s endpoint answers 404, as an unknown one does.',
    requestParams: { path: webhookEndpointPath },
    responses: {
      '200': {
        description: 'The endpoint.',
        content: json(webhookEndpointSchema, COMPONENT_EXAMPLES.WebhookEndpoint),
      },
      ...errors([400, 401, 403, 404], ENDPOINT_NOT_FOUND),
    },
  },
  deleteWebhookEndpoint: {
    tags: ['Webhooks'],
    description: 'Deletes the endpoint: nothing more is sent to it, deliveries still queued included.',
    requestParams: { path: webhookEndpointPath },
    responses: {
      '204': { description: 'Deleted.' },
      ...errors([400, 401, 403, 404], ENDPOINT_NOT_FOUND),
    },
  },
  rotateWebhookSecret: {
    tags: ['Webhooks'],
    description:
      'Replaces the signing secret. The one it replaces keeps signing beside the new one for 24 hours: every ' +
      'delivery meanwhile carries both signatures, so a receiver can switch to the new secret at its own pace.',
    requestParams: { path: webhookEndpointPath },
    requestBody: {
      description: 'Nothing, or `{}`.',
      required: false,
      content: json(z.strictObject({}), {}),
    },
    responses: {
      '200': {
        description: 'The endpoint with its new secret.',
        content: json(rotatedWebhookSecretSchema, COMPONENT_EXAMPLES.RotatedWebhookSecret),
      },
      ...errors([400, 401, 403, 404, 413, 415], ENDPOINT_NOT_FOUND),
    },
  },
  listWebhookDeliveries: {
    tags: ['Webhooks'],
    description: 'The most recent delivery attempts to the endpoint (kept 30 days), newest first.',
    requestParams: { path: webhookEndpointPath, query: listWebhookDeliveriesQuerySchema },
    responses: {
      '200': {
        description: 'The attempts.',
        content: json(z.array(deliveryAttemptSchema).check(z.maxLength(MAX_LIMIT)), [
          COMPONENT_EXAMPLES.WebhookDeliveryAttempt,
        ]),
      },
      ...errors([400, 401, 403, 404], ENDPOINT_NOT_FOUND),
    },
  },
  redeliverWebhookEvents: {
    tags: ['Webhooks'],
    description:
      'Queues events again for the endpoint: one (`eventId`), or every event recorded since a time (`since`), ' +
      `at most ${MAX_REDELIVERIES_PER_REQUEST} per request. Each is delivered with its own id and schedule.`,
    requestParams: { path: webhookEndpointPath },
    requestBody: {
      description: 'What to send again.',
      required: true,
      content: json(redeliveryRequestSchema, COMPONENT_EXAMPLES.WebhookRedeliveryRequest),
    },
    responses: {
      '202': {
        description: 'Queued.',
        content: json(redeliveryResultSchema, COMPONENT_EXAMPLES.WebhookRedeliveryResult),
      },
      ...errors([400, 401, 403, 404, 409, 413, 415], {
        404: { description: 'No webhook endpoint, or no event, with this id for this client (`not_found`).' },
        409: { description: 'The endpoint is disabled (`webhook_endpoint_disabled`).' },
      }),
    },
  },
  listEvents: {
    tags: ['Events'],
    description:
      'The client’s events, oldest first, each exactly the body its webhook deliveries send (the same `id`). ' +
      `Kept ${EVENT_RETENTION_DAYS} days: a consumer that was away catches up with ` +
      '`createdAt.gte`, then follows `Pagination-Cursor` page by page. ' +
      'Recent events are listed at once. The cursor handed back never moves past the events of the last ' +
      `${EVENT_SETTLE_MS / 1000} seconds (an event can be written a moment after a later one, earlier in the order): ` +
      'a reader that follows it never misses an event, and may see a recent one again (drop repeats by `id`). ' +
      'A catch-up ends on a page with an empty `Pagination-Cursor`, or on one that brings no new event.',
    requestParams: { query: listEventsQuerySchema },
    responses: {
      '200': {
        description: 'A page of events (possibly empty).',
        content: json(z.array(webhookEventSchema).check(z.maxLength(MAX_LIMIT)), [COMPONENT_EXAMPLES.Event]),
        headers: paginationCursorHeader,
      },
      ...errors([400, 401, 403]),
    },
  },
};

// ---------------------------------------------------------------------------------------------
// Payment controls: approval rules and limits (docs/approvals.md).

const controlsETag = headersObject({
  ETag: {
    schema: text(3, 16),
    description:
      'Strong entity tag of this version of the payment controls: send it as `If-Match` to change them.',
    required: true,
  },
});

const paymentControlsVersionSchema = z.strictObject({
  version: described(z.int().check(z.gte(1), z.lte(999_999_999)), 'The version number, from 1.'),
  etag: described(text(3, 16), 'Its entity tag, as the ETag header named it.'),
  clientId: described(text(1, 64), 'The client that stored it.'),
  createdAt: described(z.iso.datetime().check(z.maxLength(35)), 'When it was stored (UTC).'),
  controls: paymentControlsSchema,
});

const usedAmount = () =>
  described(
    z.string().check(z.maxLength(40), z.regex(/^[0-9]+(\.[0-9]+)?$/)),
    'An amount in the limit’s currency, with its ISO 4217 minor unit.',
  );

const limitUsageSchema = z.strictObject({
  limits: z
    .array(
      z.strictObject({
        ...limitSchema.shape,
        period: described(z.enum(['day', 'month']), 'A calendar day or month in UTC.'),
        periodStart: described(
          z.iso.datetime().check(z.maxLength(35)),
          'The current period’s first instant (UTC).',
        ),
        periodEnd: described(
          z.iso.datetime().check(z.maxLength(35)),
          'The next period’s first instant (UTC).',
        ),
        usedAmount: usedAmount(),
        usedCount: described(z.int().check(z.gte(0)), 'Transfers counted in the period.'),
        remainingAmount: optionalField(
          usedAmount(),
          'What the period still admits, never below zero (with maxAmount).',
        ),
        remainingCount: optionalField(
          z.int().check(z.gte(0)),
          'Transfers the period still admits (with maxCount).',
        ),
      }),
    )
    .check(z.maxLength(MAX_LIMITS)),
});

const PAYMENT_CONTROLS_OPERATIONS: Readonly<Record<string, OperationDetails>> = {
  getPaymentControlsUsage: {
    tags: ['Payment controls'],
    description:
      'For one account and currency, each `day` and `month` limit that covers it (its own, and those of every ' +
      'account) with its current period and what the period has used: transfers are counted when they arrive ' +
      '(in flight included), given back when they end Rejected or Cancelled, and kept when they settle. A transfer ' +
      'approved past a limit counts too, so usage may pass the limit; what remains is then zero. A `transaction` ' +
      'limit counts nothing across transfers and is not listed.',
    requestParams: { query: limitUsageQuerySchema },
    responses: {
      '200': {
        description: 'The limits that cover the account in the currency, with their usage.',
        content: json(limitUsageSchema, {
          limits: [
            {
              debtorAccountId: 'DE89370400440532013000',
              currency: 'EUR',
              period: 'day',
              maxAmount: '50000.00',
              maxCount: 100,
              onBreach: 'reject',
              periodStart: '2026-12-08T00:00:00.000Z',
              periodEnd: '2026-12-09T00:00:00.000Z',
              usedAmount: '12500.00',
              usedCount: 3,
              remainingAmount: '37500.00',
              remainingCount: 97,
            },
          ],
        }),
      },
      ...errors([400, 401, 403]),
    },
  },
  getPaymentControls: {
    tags: ['Payment controls'],
    description:
      'The tenant’s approval rules, approval expiry and limits, with their ETag. Before the first change, the ' +
      'empty document (no rule, no limit, expiry P7D) with ETag `"0"`.',
    responses: {
      '200': {
        description: 'The current payment controls.',
        headers: controlsETag,
        content: json(paymentControlsSchema, PAYMENT_CONTROLS_EXAMPLE),
      },
      ...errors([400, 401, 403]),
    },
  },
  putPaymentControls: {
    tags: ['Payment controls'],
    description:
      'Replaces the tenant’s payment controls with a new version. `If-Match` must name the current ETag once a ' +
      'version exists (428 without it, 412 when it is stale); the first change may leave it out. A document that ' +
      'breaks a rule is refused whole, every problem named in `invalidParams`. A change applies to transfers ' +
      'initiated after it. A rule matches a transfer when each condition it names holds; the matching rule that ' +
      'needs the most approvals applies. A limit without `debtorAccountId` applies to each account of the tenant ' +
      'on its own; periods are calendar days and months in UTC.',
    requestParams: {
      header: z.strictObject({
        'If-Match': optionalField(text(1, 256), 'The ETag of the version this change replaces.'),
      }),
    },
    requestBody: {
      description:
        'The whole document; `approvalRules` and `limits` default to none, `approvalExpiry` to P7D.',
      required: true,
      content: json(paymentControlsSchema, PAYMENT_CONTROLS_EXAMPLE),
    },
    responses: {
      '200': {
        description: 'Stored: the document as it now is, with its new ETag.',
        headers: controlsETag,
        content: json(paymentControlsSchema, PAYMENT_CONTROLS_EXAMPLE),
      },
      ...errors([400, 401, 403, 412, 413, 415, 428]),
    },
  },
  listPaymentControlsVersions: {
    tags: ['Payment controls'],
    description:
      `Every version of the payment controls, newest first, with the client that stored it and when; at most ${MAX_VERSIONS_PAGE} ` +
      'a page: the next page is `before` the last version listed.',
    requestParams: { query: listVersionsQuerySchema },
    responses: {
      '200': {
        description: 'The versions, newest first.',
        content: json(z.array(paymentControlsVersionSchema).check(z.maxLength(MAX_VERSIONS_PAGE)), [
          {
            version: 1,
            etag: '"1"',
            clientId: 'treasury-admin',
            createdAt: '2026-11-24T09:15:02.118Z',
            controls: PAYMENT_CONTROLS_EXAMPLE,
          },
        ]),
      },
      ...errors([400, 401, 403]),
    },
  },
};

// ---------------------------------------------------------------------------------------------
// The operations, by operationId. Adding a route to ROUTES with one of these ids is all it
// takes to document it.

export type TagName =
  | 'Credit transfers'
  | 'Payment controls'
  | 'Webhooks'
  | 'Events'
  | 'Authorization'
  | 'Documentation';

const TAGS: Record<TagName, string> = {
  'Credit transfers': 'Initiate, read, list and cancel credit transfers.',
  Webhooks:
    'Endpoints the service pushes events to, signed per the Standard Webhooks specification and retried for days. See docs/webhooks.md.',
  'Payment controls':
    'Approval rules (four eyes) and limits on what the tenant’s accounts pay. See docs/approvals.md.',
  Events: 'Every event the service delivered, kept and listable for at least a year.',
  Authorization: 'Access tokens (OAuth 2.0 client credentials) and the keys that verify them.',
  Documentation: 'This contract, as a document and as a page.',
};

export type OperationDetails = Omit<ZodOpenApiOperationObject, 'operationId' | 'summary' | 'tags'> & {
  tags: readonly TagName[];
  description: string;
  /**
   * An operation of the reference page itself (the page, its script): in the contract the tests
   * check responses against, left out of the document the service serves (lambdas/api/openapi-document.ts).
   */
  'x-internal'?: true;
};

/** The token endpoint answers its own refusals as RFC 6749 prescribes: application/json. */
const tokenError = (status: 400 | 401 | 413 | 415) =>
  ({ mediaTypes: ['application/json'], example: tokenProblemExample(status) }) as const;

export const OPERATIONS: Readonly<Record<string, OperationDetails>> = {
  ...WEBHOOK_OPERATIONS,
  ...PAYMENT_CONTROLS_OPERATIONS,
  issueToken: {
    tags: ['Authorization'],
    description:
      'Exchanges client credentials for an access token (OAuth 2.0 client credentials grant, RFC 6749 ' +
      'section 4.4). The body is JSON or a form. The client authenticates with `client_id` and ' +
      '`client_secret` in the body, or with HTTP Basic (RFC 6749 section 2.3.1), not both. Without `scope`, ' +
      'every scope the client is allowed is granted. The token is a JWT to send as ' +
      `\`Authorization: Bearer <token>\`; it expires after ${ACCESS_TOKEN_LIFETIME_SECONDS} seconds. No refresh ` +
      'token is issued: request a new token before expiry, and when a call answers 401. Refusals follow ' +
      'RFC 6749 section 5.2: `Content-Type: application/json`, with the `error` codes it names. Repeated ' +
      'failed client authentication is throttled with 429 and `Retry-After`.',
    // Client authentication, not an access token. The document describes one way, the client
    // credentials in the body (which no security scheme expresses), so that the request a reader
    // copies sends them once; HTTP Basic is accepted too, as the description says.
    security: [],
    requestBody: {
      description:
        'The grant type, the client credentials (unless sent with HTTP Basic) and the scopes asked for. ' +
        'The example is the client `npm start` registers: it works as it is against a local service.',
      required: true,
      content: {
        'application/json': { schema: documentedTokenRequestSchema, example: TOKEN_REQUEST_EXAMPLE },
        'application/x-www-form-urlencoded': {
          schema: documentedTokenRequestSchema,
          example: TOKEN_REQUEST_EXAMPLE,
        },
      },
    },
    responses: {
      '200': {
        description: 'The access token. Never cached (`Cache-Control: no-store`).',
        content: json(documentedTokenResponseSchema, TOKEN_RESPONSE_EXAMPLE),
      },
      ...errors([400, 401, 413, 415], {
        400: {
          description:
            'The request is not valid (`invalid_request`), names another grant type (`unsupported_grant_type`) ' +
            'or a scope the client may not have (`invalid_scope`).',
          ...tokenError(400),
        },
        401: {
          description:
            'Client authentication failed: unknown client, wrong secret, or none sent (`invalid_client`).',
          headers: {
            'WWW-Authenticate': {
              ...WWW_AUTHENTICATE,
              description: `The HTTP Basic challenge: \`${CLIENT_AUTHENTICATION_CHALLENGE}\`.`,
            },
          },
          ...tokenError(401),
        },
        413: { ...ERROR_RESPONSES[413], ...tokenError(413) },
        415: {
          description:
            'The request body is neither `application/x-www-form-urlencoded` nor `application/json` ' +
            '(`unsupported_media_type`).',
          ...tokenError(415),
        },
        429: {
          description:
            'Too many requests, or too many failed client authentications (`rate_limited`); retry after ' +
            'the number of seconds in `Retry-After`.',
          headers: { 'Retry-After': RETRY_AFTER },
          // The endpoint's own throttling answers in its RFC 6749 form, the gateway's as a problem.
          mediaTypes: ['application/json', PROBLEM_CONTENT_TYPE],
          example: tokenProblemExample(429),
        },
      }),
    },
  },
  getJsonWebKeySet: {
    tags: ['Authorization'],
    description: 'The public keys (JWK Set, RFC 7517) that verify the signature of access tokens.',
    responses: {
      '200': { description: 'The key set.', content: json(jsonWebKeySetSchema, JSON_WEB_KEY_SET_EXAMPLE) },
      ...errors([]),
    },
  },
  getAuthorizationServerMetadata: {
    tags: ['Authorization'],
    description:
      'Authorization server metadata at the RFC 8414 path: the same document as the OpenID Connect discovery path.',
    responses: {
      '200': {
        description: 'The metadata.',
        content: json(openIdConfigurationSchema, OPENID_CONFIGURATION_EXAMPLE),
      },
      ...errors([]),
    },
  },
  getOpenIdConfiguration: {
    tags: ['Authorization'],
    description:
      'Authorization server metadata (OpenID Connect Discovery): issuer, token endpoint and key set.',
    responses: {
      '200': {
        description: 'The metadata.',
        content: json(openIdConfigurationSchema, OPENID_CONFIGURATION_EXAMPLE),
      },
      ...errors([]),
    },
  },
  initiateCreditTransfer: {
    tags: ['Credit transfers'],
    description:
      'Instruction to pay an amount to an ultimate beneficiary on behalf of an originator. The answer is an ' +
      'asynchronous acceptance: 202 with the credit transfer, its `paymentId` and its first status; follow it ' +
      'with the status operation (the `Location` header). The amount must be above zero and have no more ' +
      "fractional digits than its currency's ISO 4217 minor unit (`check.amount` likewise with " +
      '`check.currency`); every currency must be an active ISO 4217 code. A `valueDate` before today (UTC), or ' +
      `more than ${DEFAULT_MAX_VALUE_DATE_DAYS} days after it (the default of the service's \`MAX_VALUE_DATE_DAYS\`), ` +
      'is refused; a later one holds the transfer until that date. Amounts and all other values are stored ' +
      'and echoed exactly as sent.\n\n' +
      'Idempotency: with `idempotencyId` (or `Idempotency-Key`), a repeat with the same body and servicer ' +
      'headers answers 202 with the same paymentId, its current status and `Idempotent-Replayed: true`, however ' +
      'often and however concurrently it is sent; a repeat with anything different answers 422. A refused ' +
      'request claims no key. Without the header, every request is a new payment. Generate a new key for ' +
      'each payment (a UUID) and keep it with the payment: a key reused for another payment with the same ' +
      'body answers the first payment again and pays nothing.\n\n' +
      'Sandbox (local and non-production stages): the outcome follows the suffix of `debtorAccountId`: ' +
      '`-blocked` (Rejected, BlockedAccount), `-closed` (ClosedAccountNumber), `-nofunds` (InsufficientFunds), ' +
      '`-forbidden` (TransactionForbidden), `-sanctioned` (RegulatoryReason), `-hold` (stays before settlement ' +
      'for a while, so a cancellation can win); anything else settles (AcceptedSettlementCompleted).',
    requestParams: {
      header: z.strictObject({
        ...idempotencyHeaders(
          'Generate a new one for each payment (a UUID: `uuidgen`, `crypto.randomUUID()`) and keep it with ' +
            'the payment, to send again only when repeating that payment (after a timeout or a lost answer). ' +
            'A repeat with the same body and servicer headers answers with the same paymentId and ' +
            '`Idempotent-Replayed: true` and pays nothing, so a key reused for another payment would answer ' +
            'the first one; anything different is refused with 422. Keys never expire. Without it, every ' +
            'request is a new payment.',
          IDEMPOTENCY_KEY_EXAMPLE,
        ),
        ...servicerHeaders,
      }),
    },
    requestBody: {
      description: 'The credit transfer: the fields of the spec without the four the service sets.',
      required: true,
      content: json(creditTransferRequestSchema, INITIATION_EXAMPLE),
    },
    responses: {
      '202': {
        description: 'Accepted: the credit transfer with its paymentId and status.',
        content: json(creditTransferSchema, CREDIT_TRANSFER_EXAMPLE),
        headers: headersObject(acceptedHeaders('initiation', 'body')),
      },
      ...errors([400, 401, 403, 413, 415, 422]),
    },
  },
  submitCreditTransferBatch: {
    tags: ['Credit transfers'],
    description:
      'Many credit transfers in one request: JSON (`{"creditTransfers": [...]}`, each element exactly the body ' +
      'of a single initiation) or a pain.001 message (`Content-Type: application/xml`, `pain.001.001.09` or ' +
      "`pain.001.001.03`), validated against its version's official XSD, then `NbOfTxs` and `CtrlSum` of the " +
      'group header and of each `PmtInf`, then every rule of a single initiation. Any fault refuses the whole ' +
      'message with 400 naming each XML path (or JSON field), and nothing is stored. DTDs and entities are ' +
      `refused. At most ${MAX_BATCH_TRANSACTIONS} transfers or 5 MB (413). docs/iso20022.md maps each element.\n\n` +
      "Idempotency: `idempotencyId` as on a single initiation; a pain.001's `GrpHdr/MsgId` is unique per " +
      'tenant as well: the same message again is a replay (202, `Idempotent-Replayed: true`), another message ' +
      'with a used MsgId is refused with 422 `message_id_reused`.\n\n' +
      'The answer is 202 with the batch and each paymentId in message order, or with `Accept: application/xml` ' +
      'a pain.002.001.10 group status report (`GrpSts` ACCP).',
    requestParams: {
      header: z.strictObject({
        ...idempotencyHeaders(
          'Generate a new one for each batch (a UUID) and keep it with the batch: a repeat with the same body ' +
            'answers with the same batch and `Idempotent-Replayed: true` and pays nothing; anything different is ' +
            'refused with 422.',
          IDEMPOTENCY_KEY_EXAMPLE,
        ),
        ...servicerHeaders,
      }),
    },
    requestBody: {
      description: 'The batch: JSON, or a pain.001.001.09 / pain.001.001.03 Document.',
      required: true,
      content: {
        ...json(batchRequestSchema, COMPONENT_EXAMPLES.CreditTransferBatchRequest),
        ...xml(
          'A pain.001.001.09 or pain.001.001.03 Document (ISO 20022 customer credit transfer initiation).',
          PAIN_001_EXAMPLE,
        ),
      },
    },
    responses: {
      '202': {
        description: "Accepted: the batch, and each transfer's paymentId in message order; or its pain.002.",
        content: {
          ...json(batchAcceptedSchema, COMPONENT_EXAMPLES.CreditTransferBatchAccepted),
          ...xml('A pain.002.001.10 group status report: OrgnlGrpInfAndSts with GrpSts ACCP.'),
        },
      },
      ...errors([400, 401, 403, 413, 415, 422]),
    },
  },
  listCreditTransferBatches: {
    tags: ['Credit transfers'],
    description:
      "The client's batches (its tenant's), newest first, a page at a time: each with its status, group status " +
      'and counts as `GET /v1/payments/credit-transfer-batches/{batchId}` shows them, without the transfers. ' +
      '`messageId.eq` finds the batch of a message; `createdAt.gte` and `createdAt.lte` bound the acceptance ' +
      'time. Pass the `Pagination-Cursor` of a page as `cursor`, with the same filters, to read the next one.',
    requestParams: { query: listBatchesQuerySchema, header: z.strictObject(servicerHeaders) },
    responses: {
      '200': {
        description: 'A page of batches (possibly empty).',
        content: json(z.array(batchSummarySchema).check(z.maxLength(MAX_LIMIT)), [
          COMPONENT_EXAMPLES.CreditTransferBatchSummary,
        ]),
        headers: paginationCursorHeader,
      },
      ...errors([400, 401, 403]),
    },
  },
  getCreditTransferBatch: {
    tags: ['Credit transfers'],
    description:
      "A batch with each transfer's paymentId and current status, in message order, a hundred at a time " +
      '(`next` is the `cursor` of the following page); with `Accept: application/xml`, a pain.002.001.10 with ' +
      "one `TxInfAndSts` per transfer (`OrgnlEndToEndId`, `TxSts`, reason code). Another tenant's batch answers " +
      '404, exactly as an unknown one.',
    requestParams: {
      path: z.strictObject({
        batchId: described(z.string().check(z.maxLength(36)), 'The batchId the submission answered.'),
      }),
      query: z.strictObject({
        cursor: optionalField(z.string().check(z.maxLength(10)), 'The `next` of the previous page.'),
      }),
      header: z.strictObject(servicerHeaders),
    },
    responses: {
      '200': {
        description: 'The batch and a page of its transfers; or its pain.002.',
        content: {
          ...json(batchPageSchema, COMPONENT_EXAMPLES.CreditTransferBatch),
          ...xml('A pain.002.001.10 with one TxInfAndSts per transfer.'),
        },
      },
      ...errors([400, 401, 403, 404]),
    },
  },
  getCreditTransferNotification: {
    tags: ['Credit transfers'],
    description:
      "A camt.054.001.08 debit notification (`BkToCstmrDbtCdtNtfctn`) of the transfer, valid against ISO's schema: " +
      'once it settled, one booked debit entry (`Ntry`) of its debtor account with the amount, booking and value ' +
      'dates, `AcctSvcrRef` (the paymentId without hyphens), `BkTxCd` PMNT/ICDT (ESCT under the SEPA service ' +
      'level, else OTHR) and, in `Refs`, the original `MsgId`, `PmtInfId`, `InstrId` and `EndToEndId`. Before ' +
      "it settles (and when it ends rejected or cancelled) the notification holds the account and no entry. Another tenant's " +
      'paymentId answers 404, exactly as an unknown one.',
    requestParams: { path: paymentIdPath, header: z.strictObject(servicerHeaders) },
    responses: {
      '200': {
        description: 'The debit notification.',
        content: xml('A camt.054.001.08 BkToCstmrDbtCdtNtfctn: one Ntry once the transfer settled.'),
      },
      ...errors([400, 401, 403, 404]),
    },
  },
  getCreditTransferBatchNotification: {
    tags: ['Credit transfers'],
    description:
      'A camt.054.001.08 debit notification (`BkToCstmrDbtCdtNtfctn`) of what the batch has settled so far: one ' +
      '`Ntfctn` per debtor account of the batch, with one booked debit entry (`Ntry`) per settled transfer ' +
      '(amount, booking and value dates, `AcctSvcrRef`, `BkTxCd`, and in `Refs` the original `MsgId`, ' +
      '`PmtInfId`, `InstrId` and `EndToEndId`), or, for a pain.001 payment group whose `BtchBookg` is `true` or ' +
      'absent, one batch entry of its settled transfers (their sum, `NtryDtls/Btch` with `PmtInfId`, `NbOfTxs` ' +
      "and `TtlAmt`, one `TxDtls` per transfer). Nothing settled yet: the accounts with no entry. Another tenant's " +
      'batch answers 404, exactly as an unknown one.',
    requestParams: {
      path: z.strictObject({
        batchId: described(z.string().check(z.maxLength(36)), 'The batchId the submission answered.'),
      }),
      header: z.strictObject(servicerHeaders),
    },
    responses: {
      '200': {
        description: 'The debit notification.',
        content: xml(
          'A camt.054.001.08 BkToCstmrDbtCdtNtfctn: one Ntry per settled transfer, or per payment group booked as a batch.',
        ),
      },
      ...errors([400, 401, 403, 404]),
    },
  },
  getCreditTransferStatus: {
    tags: ['Credit transfers'],
    description:
      'The current status report of a credit transfer: its fields as initiated, with `status`, ' +
      '`statusReason` and the `date` of the status. A paymentId of another tenant answers 404, exactly as an ' +
      'unknown one, whatever `If-None-Match` says.\n\n' +
      'Polling: send the `ETag` of the last report as `If-None-Match`; while nothing changed the answer is ' +
      `304 with no body. Until the status is final, wait the \`Retry-After\` seconds (${POLL_AFTER_SECONDS}) ` +
      'between calls; once it is `AcceptedSettlementCompleted`, `Rejected` or `Cancelled` it never changes again.',
    requestParams: {
      path: paymentIdPath,
      header: z.strictObject({
        'If-None-Match': optionalField(
          text(1, 1024),
          'The `ETag` of a report the client holds (or a list of them, or `*`): a 304 answers that it is current.',
        ),
        ...servicerHeaders,
      }),
    },
    responses: {
      '200': {
        description: 'The status report; with `Accept: application/xml`, its pain.002.',
        content: {
          ...json(creditTransferSchema, SETTLED_EXAMPLE),
          ...xml('A pain.002.001.10 of this transfer: TxSts, the reason code, OrgnlEndToEndId.'),
        },
        headers: headersObject(statusCacheHeaders),
      },
      '304': {
        description: 'Not modified: the report named by `If-None-Match` is current. No body.',
        headers: headersObject(statusCacheHeaders),
      },
      ...errors([400, 401, 403, 404]),
    },
  },
  listCreditTransfers: {
    tags: ['Credit transfers'],
    description:
      'The credit transfers that match every filter given, newest first, a page at a time. Pass the ' +
      '`Pagination-Cursor` of a page as `cursor`, with the same filters, to read the next one. Unknown or ' +
      'repeated query parameters are refused.',
    requestParams: {
      query: documentedListQuery,
      header: z.strictObject(servicerHeaders),
    },
    responses: {
      '200': {
        description: 'A page of matching credit transfers (possibly empty).',
        content: json(z.array(creditTransferSchema).check(z.maxLength(MAX_LIMIT)), LIST_EXAMPLE),
        headers: headersObject({
          'Pagination-Cursor': {
            schema: text(0, CURSOR_MAX_LENGTH),
            description: 'Position of the next page: send it as `cursor`. Empty on the last page.',
            required: true,
          },
          'Pagination-Total': {
            schema: z.string().check(z.regex(/^[0-9]{1,10}\+?$/), z.maxLength(11)),
            description:
              'Number of credit transfers that matched the filters when paging began. Counting stops after ' +
              '10,000 index entries: past that the value is the matches counted followed by `+` (for example ' +
              "`10000+`), a lower bound. Every page of one paging repeats the first page's value.",
            required: true,
          },
        }),
      },
      ...errors([400, 401, 403]),
    },
  },
  cancelCreditTransfer: {
    tags: ['Credit transfers'],
    description:
      'Requests the cancellation of a credit transfer. The answer is an asynchronous acceptance: 202 with the ' +
      'credit transfer; the status becomes `Cancelled` (statusReason `RequestedByCustomer`) if the cancellation ' +
      'wins before settlement.',
    requestParams: {
      path: paymentIdPath,
      header: z.strictObject({
        ...idempotencyHeaders('Send the same value when repeating the request.', CANCELLATION_KEY_EXAMPLE),
        ...servicerHeaders,
      }),
    },
    requestBody: {
      description: 'Why the cancellation is requested.',
      required: false,
      content: json(named(cancellationRequestSchema, 'CancellationRequest'), CANCELLATION_REQUEST_EXAMPLE),
    },
    responses: {
      '202': {
        description: 'Accepted: the credit transfer as it is now.',
        content: json(creditTransferSchema, CREDIT_TRANSFER_EXAMPLE),
        headers: headersObject(acceptedHeaders('cancellation', 'cancellationReason')),
      },
      ...errors([400, 401, 403, 404, 409, 413, 415, 422]),
    },
  },
  decideCreditTransferApproval: {
    tags: ['Payment controls'],
    description:
      'Approves or rejects a credit transfer that waits in `Pending` because it met an approval rule of the tenant ' +
      '(docs/approvals.md). The client that initiated the transfer may not decide (403), and each other client ' +
      'decides once (409 `approval_already_decided`). Enough approvals start the lifecycle as an initiation does ' +
      '(`Received`, then on); one rejection ends it `Rejected` (`OrderCancelled`, DS02). A transfer that is not ' +
      'pending, or whose approval expired, answers 409 `payment_not_pending`.',
    requestParams: {
      path: paymentIdPath,
      header: z.strictObject({
        ...idempotencyHeaders('A repeat with the same decision answers it again.', DECISION_KEY_EXAMPLE),
      }),
    },
    requestBody: {
      description: 'The decision, and why.',
      required: true,
      content: json(approvalDecisionRequestSchema, {
        decision: 'approve',
        reason: 'Checked against the invoice',
      }),
    },
    responses: {
      '200': {
        description: 'Decided: the credit transfer as it is now.',
        content: json(creditTransferSchema, CREDIT_TRANSFER_EXAMPLE),
        headers: headersObject({
          'Idempotent-Replayed': acceptedHeaders('decision', 'body')['Idempotent-Replayed'] as Header,
        }),
      },
      ...errors([400, 401, 403, 404, 409, 413, 415, 422], {
        403: {
          description:
            'The token lacks `transactions:approve` (`insufficient_scope`), or the caller initiated the transfer ' +
            '(`forbidden`): the approver is always another client.',
          headers: {
            'WWW-Authenticate': {
              ...WWW_AUTHENTICATE,
              required: false,
              description: 'With `insufficient_scope`: the Bearer challenge naming the scope.',
            },
          },
        },
        409: {
          description:
            'The client decided already (`approval_already_decided`), or the transfer does not wait for approval ' +
            '(`payment_not_pending`: not pending, or its approval expired).',
        },
      }),
    },
  },
  decideCreditTransferBatchApproval: {
    tags: ['Payment controls'],
    description:
      'Approves or rejects, in one call, every transfer of a batch that its approval rules held in `Pending` ' +
      '(docs/approvals.md): each is decided exactly as the single decision route decides it. The client that ' +
      'submitted the batch may not decide (403). A held transfer that cannot be decided (no longer pending, ' +
      'decided by this client already, its approval expired) is listed in `notDecided` with why; the others ' +
      "are decided. A repeat with the same idempotency key and decision answers the same counts. Another tenant's " +
      'batch answers 404, exactly as an unknown one.',
    requestParams: {
      path: z.strictObject({
        batchId: described(z.string().check(z.maxLength(36)), 'The batchId the submission answered.'),
      }),
      header: z.strictObject({
        ...idempotencyHeaders(
          'A repeat with the same decision repeats each decision, and answers the same counts.',
          DECISION_KEY_EXAMPLE,
        ),
      }),
    },
    requestBody: {
      description: 'The decision on every held transfer, and why.',
      required: true,
      content: json(approvalDecisionRequestSchema, { decision: 'approve', reason: 'Payroll of November' }),
    },
    responses: {
      '200': {
        description: 'How many held transfers were decided, and each one that was not, with why.',
        content: json(batchDecisionResultSchema, {
          batchId: '0c7e9f52-4a4e-4f43-9d0f-6f1d2b8a7c31',
          decision: 'approve',
          decided: 2,
          notDecided: [
            {
              paymentId: '5b2d8c3e-9f1a-4e6b-8d7c-2a1b0c9d8e7f',
              reason: 'payment_not_pending',
              description: 'The credit transfer is Cancelled and no longer waits for approval',
            },
          ],
        }),
      },
      ...errors([400, 401, 403, 404, 413, 415, 422], {
        403: {
          description:
            'The token lacks `transactions:approve` (`insufficient_scope`), or the caller submitted the batch ' +
            '(`forbidden`): the approver is always another client.',
          headers: {
            'WWW-Authenticate': {
              ...WWW_AUTHENTICATE,
              required: false,
              description: 'With `insufficient_scope`: the Bearer challenge naming the scope.',
            },
          },
        },
      }),
    },
  },
  listCreditTransferApprovals: {
    tags: ['Payment controls'],
    description:
      'The decisions on a credit transfer, oldest first: the client, its decision and reason, when, the access ' +
      'token’s `jti` and, for a DPoP-bound token, the key thumbprint. A transfer never held for approval has none.',
    requestParams: { path: paymentIdPath },
    responses: {
      '200': {
        description: 'The decisions.',
        content: json(
          z
            .array(
              z.strictObject({
                clientId: text(1, 64),
                decision: z.enum(['approve', 'reject']),
                reason: z.optional(text(1, 1025)),
                at: z.iso.datetime().check(z.maxLength(35)),
                tokenId: optionalField(text(1, 256), 'The `jti` of the access token the decision came with.'),
                dpopThumbprint: optionalField(
                  text(1, 128),
                  'The JWK thumbprint of the DPoP key the token was bound to.',
                ),
              }),
            )
            .check(z.maxLength(3)),
          [
            {
              clientId: 'treasury-approver',
              decision: 'approve',
              at: '2026-11-24T09:20:11.402Z',
              tokenId: '0192f3a6-1b2c-7d3e-8f40-5a6b7c8d9e0f',
            },
          ],
        ),
      },
      ...errors([400, 401, 403, 404]),
    },
  },
  getOpenApiDocument: {
    tags: ['Documentation'],
    description:
      'This API as an OpenAPI 3.1 document, generated from the same schemas that validate requests.',
    responses: {
      '200': {
        description: 'The OpenAPI document.',
        content: json(openApiDocumentSchema, OPENAPI_DOCUMENT_EXAMPLE),
      },
      ...errors([]),
    },
  },
  getReferencePage: {
    'x-internal': true,
    tags: ['Documentation'],
    description: 'A reference page of every operation, rendered in the browser from the OpenAPI document.',
    responses: {
      '200': { description: 'The page.', content: { 'text/html': {} } },
      ...errors([]),
    },
  },
  getReferencePageScript: {
    'x-internal': true,
    tags: ['Documentation'],
    description: 'The script the reference page loads to render the OpenAPI document (Scalar API Reference).',
    responses: {
      '200': { description: 'The script.', content: { 'text/javascript': {} } },
      ...errors([]),
    },
  },
};

// ---------------------------------------------------------------------------------------------
// The document.

const TOKEN_DESCRIPTION =
  'Access token from `POST /oauth/token` (client credentials grant): a JWT signed with ES256 (or RS256 by a ' +
  'key made before the move to ES256), verifiable with the keys at `/.well-known/jwks.json`, valid for 3600 ' +
  'seconds, carrying the granted scopes. Tokens are issued and verified following the JSON Web Token Best ' +
  'Current Practices (RFC8725): each key has one fixed signature algorithm, named in the key set and never ' +
  'taken from the token; issuer, audience and expiry are checked on every call.';

/** What the reference page's auth panel shows first: how to get a token there, then what it is. */
const CLIENT_CREDENTIALS_DESCRIPTION =
  'Enter a client id and secret and choose Authorize: the reference page asks `POST /oauth/token` for an ' +
  'access token (client credentials grant, the credentials sent with HTTP Basic) and sends it with every ' +
  'request you try. Locally the client `npm start` registers is `local-client`, secret `local-client-secret`. ' +
  TOKEN_DESCRIPTION;

/**
 * Security scheme names as the reference page shows them (it shows the key, and keys may hold
 * only letters, digits, `.`, `-` and `_`).
 */
export const ACCESS_TOKEN_SCHEME = 'Access-token-Bearer';
export const CLIENT_CREDENTIALS_SCHEME = 'OAuth-2.0-client-credentials';

const DOCUMENT_DESCRIPTION = `Credit transfer payments API: initiate a credit transfer, read its status, list \
and cancel credit transfers. The data model follows ISO 20022 vocabulary.

**Authentication.** Every \`/v1\` call carries \`Authorization: Bearer <token>\`, a token from \
\`POST /oauth/token\` with the client credentials grant. Each operation names the scope it requires. Tokens \
expire after 3600 seconds: obtain a new one before expiry, and when a call answers 401. Keep the client secret \
server-side.

**Errors.** Every error answers \`application/problem+json\`: an RFC 9457 problem (\`type\`, \`title\`, \
\`status\`, \`detail\`) that also carries \`error\` (a snake_case code) and \`error_description\`; a 400 lists \
the offending fields in \`invalidParams\`. The token endpoint sends the same body as \`application/json\`, as \
OAuth 2.0 clients expect.

**Values.** Amounts are decimal strings; they and every other value are stored and echoed exactly as sent. \
Lengths count characters (Unicode code points), as JSON Schema's \`maxLength\` does. Header names are \
case-insensitive. An amount ends in a digit (\`1.\` is refused) and, with a currency, has at most as many \
fractional digits as the currency's ISO 4217 minor unit (EUR 2, JPY 0, BHD 3); a currency without one (XAU, \
XDR) and an amount without a currency keep the 8 the pattern allows. Text fields refuse control characters \
(U+0000-U+001F, U+007F-U+009F), each field named in \`invalidParams\`; only the free text of \`purpose\` and \
\`cancellationReason\` may hold line feed and tab. A JSON body nests objects and arrays at most \
${MAX_JSON_DEPTH} levels deep; deeper is a 400.`;

const INT32 = 2 ** 31;

/**
 * Bounds the schemas imply but zod does not write: the length of a calendar date (its pattern
 * allows exactly 10 characters) and the integer format the OWASP rules ask for.
 */
const addImpliedBounds: ZodOpenApiOverride = ({ jsonSchema }) => {
  if (jsonSchema.type === 'string' && jsonSchema.format === 'date' && jsonSchema.maxLength === undefined) {
    jsonSchema.maxLength = 'YYYY-MM-DD'.length;
  }
  if (jsonSchema.type === 'integer' && jsonSchema.format === undefined) {
    const { minimum, maximum } = jsonSchema;
    const fitsInt32 =
      typeof minimum === 'number' && typeof maximum === 'number' && minimum >= -INT32 && maximum < INT32;
    jsonSchema.format = fitsInt32 ? 'int32' : 'int64';
  }
};

/** A component schema with its example (the schemas of this document are all objects). */
const withExample = <Schema>(name: string, schema: Schema): Schema => {
  const example = COMPONENT_EXAMPLES[name];
  if (example === undefined)
    throw new Error(`No example for schema ${name}; add one to scripts/openapi-examples.ts`);
  if (typeof schema !== 'object' || schema === null) throw new Error(`Schema ${name} is not an object`);
  return { ...schema, examples: [example] };
};

/**
 * Either way to the same bearer token, each naming the scope: the client credentials flow first,
 * so the reference page's auth panel offers it first and fetches the token itself from a client
 * id and secret; a token obtained elsewhere can still be pasted as a bearer token.
 */
const securityOf = (scope: string): ZodOpenApiOperationObject['security'] => [
  { [CLIENT_CREDENTIALS_SCHEME]: [scope] },
  { [ACCESS_TOKEN_SCHEME]: [scope] },
];

const operationOf = (route: Route, details: OperationDetails): ZodOpenApiOperationObject => {
  const scopeNote = route.scope ? `\n\nRequires scope \`${route.scope}\`.` : '\n\nNeeds no access token.';
  const codeSamples = codeSamplesOf(route.operationId);
  return {
    ...details,
    operationId: route.operationId,
    summary: route.summary,
    description: `${details.description}${scopeNote}`,
    tags: [...details.tags],
    security: details.security ?? (route.scope ? securityOf(route.scope) : []),
    ...(codeSamples.length > 0 && { 'x-codeSamples': codeSamples }),
  };
};

/**
 * The OpenAPI document of the given routes (by default the service's route table). Every route
 * needs an entry in OPERATIONS; entries without a route are left out.
 */
export const buildOpenApiDocument = (routes: readonly Route[] = ROUTES): OpenApiDocument => {
  const paths: Record<string, ZodOpenApiPathItemObject> = {};
  const tags = new Set<TagName>();
  for (const route of routes) {
    const details = OPERATIONS[route.operationId];
    if (!details) {
      throw new Error(
        `No OpenAPI entry for operation ${route.operationId}; add one to OPERATIONS in scripts/openapi-document.ts`,
      );
    }
    const pathItem = paths[route.path] ?? {};
    paths[route.path] = pathItem;
    const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
    if (pathItem[method]) throw new Error(`Two routes for ${route.method} ${route.path}`);
    pathItem[method] = operationOf(route, details);
    for (const tag of details.tags) tags.add(tag);
  }
  const document = createDocument(
    {
      openapi: '3.1.0',
      info: {
        title: API_TITLE,
        version: API_VERSION,
        description: DOCUMENT_DESCRIPTION,
        // The reference page's introduction shows this instead of a list of generic HTTP clients.
        'x-scalar-sdk-installation': [{ lang: 'TypeScript', description: SDK_INSTALLATION }],
      },
      servers: [
        {
          // The service serves this document with `url` set to its configured public URL
          // (lambdas/api/openapi-document.ts); the committed copy names npm start's address.
          url: '{publicUrl}',
          description:
            'The deployment that serves this document, at the public URL it is configured with: local (npm ' +
            'start), sandbox and test stages, or production.',
          variables: {
            publicUrl: {
              default: 'http://127.0.0.1:3000',
              description: 'The public URL of the deployment; `npm start` listens on http://127.0.0.1:3000.',
            },
          },
          'x-internal': false,
        },
      ],
      tags: [...tags].map((name) => ({ name, description: TAGS[name] })),
      paths,
      components: {
        securitySchemes: {
          [ACCESS_TOKEN_SCHEME]: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: TOKEN_DESCRIPTION,
          },
          [CLIENT_CREDENTIALS_SCHEME]: {
            type: 'oauth2',
            description: CLIENT_CREDENTIALS_DESCRIPTION,
            flows: { clientCredentials: { tokenUrl: '/oauth/token', scopes: { ...SCOPE_DESCRIPTIONS } } },
          },
        },
      },
    },
    { override: addImpliedBounds, reused: 'inline', cycles: 'throw' },
  );
  // Components in name order, so the committed document changes only where the contract does;
  // each with its example, which the reference page shows.
  const schemas = document.components?.schemas ?? {};
  const sorted = Object.fromEntries(
    Object.entries(schemas)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, schema]) => [name, withExample(name, schema)]),
  );
  return { ...document, components: { ...document.components, schemas: sorted } } as OpenApiDocument;
};
