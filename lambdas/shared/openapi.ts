import { z } from 'zod';
import { ACCESS_TOKEN_LIFETIME_SECONDS } from '#auth/issue-access-token';
import type { authorizationServerMetadata } from '#auth/openid-configuration';
import { MAX_SECRET_LENGTH, MIN_SECRET_LENGTH } from '#auth/register-client';
import { CLIENT_AUTHENTICATION_CHALLENGE } from '#auth/token-errors';
import { tokenRequestSchema, tokenResponseSchema } from '#auth/token-request';
import { cancellationRequestSchema } from '#domain/cancel-credit-transfer';
import { CLIENT_ID_PATTERN } from '#domain/client';
import {
  creditTransferRequestSchema,
  creditTransferSchema,
  idempotencyKeySchema,
  paymentIdSchema,
  servicerHeadersSchema,
} from '#domain/credit-transfer';
import { CURSOR_MAX_LENGTH, listCreditTransfersQuerySchema, MAX_LIMIT } from '#domain/list-filters';
import { SCOPE_DESCRIPTIONS, SCOPES } from '#domain/scopes';
import type { JsonWebKeySet } from '#domain/token-signer';
import { ROUTES, type Route } from '#routes';
import { gatewayResponse } from './gateway-responses.ts';
import { MAX_BODY_BYTES } from './middleware.ts';
import {
  type ErrorCode,
  MAX_INVALID_PARAM_TEXT,
  MAX_INVALID_PARAMS,
  PROBLEM_CONTENT_TYPE,
  type ProblemBody,
} from './problem.ts';

/**
 * The OpenAPI 3.1 document of the service, derived from the route table (which operations
 * exist) and the zod schemas (what they take and answer). `OPERATIONS` holds what the route
 * table does not: parameters, bodies, responses and prose, one entry per operationId.
 * An entry whose route is not in the table is not emitted, so the document describes exactly
 * the routes the service serves.
 */

export const OPENAPI_VERSION = '3.1.0';
export const API_TITLE = 'Credit Transfers API';
/** The version of the payments interface definition (spec section 9). */
export const API_VERSION = '0.7.0';

// ---------------------------------------------------------------------------------------------
// Document types: the parts of OpenAPI 3.1 this builder writes.

export type JsonSchema = { [keyword: string]: unknown };

export interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  description?: string;
  schema: JsonSchema;
}

export interface HeaderObject {
  description: string;
  required?: boolean;
  schema: JsonSchema;
}

export interface MediaTypeObject {
  schema?: JsonSchema;
}

export interface ResponseObject {
  description: string;
  headers?: Record<string, HeaderObject>;
  content?: Record<string, MediaTypeObject>;
}

export interface RequestBodyObject {
  description: string;
  required: boolean;
  content: Record<string, MediaTypeObject>;
}

export type SecurityRequirement = Record<string, string[]>;

export interface OperationObject {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  security: SecurityRequirement[];
  parameters?: ParameterObject[];
  requestBody?: RequestBodyObject;
  responses: Record<string, ResponseObject>;
}

export type HttpMethod = 'get' | 'post';
export type PathItemObject = Partial<Record<HttpMethod, OperationObject>>;

export interface OpenApiDocument {
  openapi: typeof OPENAPI_VERSION;
  info: { title: string; version: string; description: string };
  servers: { url: string; description: string; 'x-internal': boolean }[];
  tags: { name: string; description: string }[];
  paths: Record<string, PathItemObject>;
  components: {
    schemas: Record<string, JsonSchema>;
    securitySchemes: Record<string, JsonSchema>;
  };
}

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
  'payload_too_large',
  'unsupported_media_type',
  'idempotency_key_reused',
  'rate_limited',
  'internal_error',
  'service_unavailable',
  'invalid_client',
  'invalid_grant',
  'unsupported_grant_type',
  'invalid_scope',
] as const satisfies readonly ErrorCode[];

/** The one error body (`#shared/problem`): RFC 9457 problem plus the spec's `error` fields. */
export const problemSchema = z.strictObject({
  type: z.string().max(256).describe('URI reference naming the problem type (RFC 9457).'),
  title: z.string().max(64).describe('Short summary of the status code.'),
  status: z.int().min(400).max(599).describe('The HTTP status code.'),
  detail: z.string().max(2048).describe('What went wrong with this request.'),
  error: z.enum(ERROR_CODES).describe('Machine-readable error code (snake_case).'),
  error_description: z.string().max(2048).describe('Same text as `detail`, under the name the spec uses.'),
  invalidParams: z
    .array(
      z.strictObject({
        name: z
          .string()
          .max(MAX_INVALID_PARAM_TEXT)
          .describe('The field, header or parameter, as a path such as `creditor.name`.'),
        reason: z.string().max(MAX_INVALID_PARAM_TEXT).describe('Why it was refused.'),
      }),
    )
    .max(MAX_INVALID_PARAMS)
    .optional()
    .describe('On a 400: every offending field.'),
});

// The schema and `ProblemBody` must describe the same object; this fails to compile if they drift.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const problemMatchesBody: Same<z.infer<typeof problemSchema>, ProblemBody> = true;
void problemMatchesBody;

/** A field of a handler's schema with the bounds the document states, keeping its description. */
const bounded = <T extends z.ZodType>(field: T, narrow: (schema: T) => z.ZodType): z.ZodType => {
  const schema = narrow(field);
  return field.description === undefined ? schema : schema.describe(field.description);
};

/** Space-separated scopes: at most all of them once (RFC 6749 3.3). */
const SCOPE_LIST_MAX_LENGTH = SCOPES.join(' ').length;

/**
 * The token endpoint's request (`#auth/token-request`), with the bounds the issuer applies:
 * a client id outside CLIENT_ID_PATTERN or a secret longer than any registered one is refused
 * as `invalid_client`.
 */
const tokenRequestShape = tokenRequestSchema.shape;
export const documentedTokenRequestSchema = tokenRequestSchema.extend({
  client_id: bounded(tokenRequestShape.client_id, (field) =>
    field.unwrap().regex(CLIENT_ID_PATTERN).optional(),
  ),
  client_secret: bounded(tokenRequestShape.client_secret, (field) =>
    field.unwrap().min(MIN_SECRET_LENGTH).max(MAX_SECRET_LENGTH).optional(),
  ),
  scope: bounded(tokenRequestShape.scope, (field) => field.unwrap().max(SCOPE_LIST_MAX_LENGTH).optional()),
});

/** A signed JWT of this issuer's claims stays far below this. */
const ACCESS_TOKEN_MAX_LENGTH = 4096;

const tokenResponseShape = tokenResponseSchema.shape;
export const documentedTokenResponseSchema = tokenResponseSchema.extend({
  access_token: bounded(tokenResponseShape.access_token, (field) => field.max(ACCESS_TOKEN_MAX_LENGTH)),
  expires_in: bounded(tokenResponseShape.expires_in, (field) =>
    field.min(1).max(ACCESS_TOKEN_LIFETIME_SECONDS),
  ),
  scope: bounded(tokenResponseShape.scope, (field) => field.max(SCOPE_LIST_MAX_LENGTH)),
});

/** The key set `#auth/key-set` answers. */
export const jsonWebKeySetSchema = z.strictObject({
  keys: z
    .array(
      z.strictObject({
        kty: z.literal('RSA'),
        n: z.string().max(1024).describe('RSA modulus, base64url.'),
        e: z.string().max(16).describe('RSA public exponent, base64url.'),
        kid: z.string().max(64).describe('Key id (RFC 7638 thumbprint), the `kid` of the token header.'),
        alg: z.literal('RS256'),
        use: z.literal('sig'),
      }),
    )
    .max(10)
    .describe('The signing key, and during a rotation the next or previous one.'),
});

/** The metadata `#auth/openid-configuration` answers (RFC 8414). */
export const openIdConfigurationSchema = z.strictObject({
  issuer: z.string().max(512).describe('The `iss` of every access token.'),
  token_endpoint: z.string().max(512),
  jwks_uri: z.string().max(512),
  grant_types_supported: z.array(z.string().max(64)).max(10),
  token_endpoint_auth_methods_supported: z.array(z.string().max(64)).max(10),
  scopes_supported: z.array(z.string().max(64)).max(SCOPES.length),
  response_types_supported: z
    .array(z.string().max(64))
    .max(10)
    .describe('Empty: there is no authorization endpoint.'),
  service_documentation: z.string().max(512).describe('This reference page.'),
});

// The schemas must accept what the handlers answer; these fail to compile if they drift.
type Accepts<Schema, Value> = [Value] extends [Schema] ? true : false;
const keySetMatches: Accepts<z.infer<typeof jsonWebKeySetSchema>, JsonWebKeySet> = true;
const metadataMatches: Accepts<
  z.infer<typeof openIdConfigurationSchema>,
  ReturnType<typeof authorizationServerMetadata>
> = true;
void keySetMatches;
void metadataMatches;

const openApiDocumentSchema = z.looseObject({ openapi: z.literal(OPENAPI_VERSION) });

// ---------------------------------------------------------------------------------------------
// Parameters.

const servicerHeaders = {
  servicerId: servicerHeadersSchema.shape.servicerId.describe('Account servicer identification: the bank.'),
  servicerBranchId: servicerHeadersSchema.shape.servicerBranchId.describe(
    'Account servicer at branch or centre level.',
  ),
};

/** `idempotencyId` (the spec's name) and `Idempotency-Key` (the common one), read as one key. */
const idempotencyHeaders = (behaviour: string) => ({
  idempotencyId: idempotencyKeySchema
    .optional()
    .describe(`Identifier the client reuses when it repeats a call. ${behaviour}`),
  'Idempotency-Key': idempotencyKeySchema
    .optional()
    .describe('Accepted as another name of `idempotencyId`; when both are sent they must be equal.'),
});

const paymentIdPath = z.strictObject({
  paymentId: paymentIdSchema.describe('The paymentId the initiation answered.'),
});

// ---------------------------------------------------------------------------------------------
// Bodies and responses.

/** Headers of a 202: where the status is, and whether this answer replays an earlier request. */
const acceptedHeaders = (request: string, compared: string) => ({
  Location: {
    schema: z.string().max(512),
    description: 'The status operation of this credit transfer.',
    required: true,
  },
  'Idempotent-Replayed': {
    schema: z.enum(['true']),
    description: `Present (\`true\`) when this answer replays an earlier ${request} with the same idempotency key and ${compared}.`,
  },
});

type ZodObjectSchema = z.ZodObject<z.ZodRawShape>;

interface BodyDetails {
  schema: z.ZodType;
  /** Component name for a schema without a zod `id`; schemas with an id are named by it. */
  component?: string;
}

interface HeaderDetails {
  schema: z.ZodType;
  description: string;
  required?: boolean;
}

interface ResponseDetails {
  description: string;
  /** Media type to schema; a media type without a schema is documented without one. */
  content?: Record<string, BodyDetails | undefined>;
  headers?: Record<string, HeaderDetails>;
}

interface RequestBodyDetails {
  description: string;
  required: boolean;
  content: Record<string, BodyDetails>;
}

export type TagName = 'Credit transfers' | 'Authorization' | 'Documentation';

const TAGS: Record<TagName, string> = {
  'Credit transfers': 'Initiate, read, list and cancel credit transfers.',
  Authorization: 'Access tokens (OAuth 2.0 client credentials) and the keys that verify them.',
  Documentation: 'This contract, as a document and as a page.',
};

export interface OperationDetails {
  tags: readonly TagName[];
  description: string;
  pathParameters?: ZodObjectSchema;
  queryParameters?: ZodObjectSchema;
  headers?: ZodObjectSchema;
  requestBody?: RequestBodyDetails;
  responses: Record<string, ResponseDetails>;
  /** Replaces the security the route's scope implies (a bearer token with that scope, or none). */
  security?: SecurityRequirement[];
}

const problem: BodyDetails = { schema: problemSchema, component: 'Problem' };

const retryAfter = Number(gatewayResponse('THROTTLED').headers['Retry-After'] ?? 1);
const RETRY_AFTER: HeaderDetails = {
  schema: z.int().min(0).max(86_400),
  description: `Seconds to wait before retrying (${retryAfter} when the gateway throttles).`,
  required: true,
};

const WWW_AUTHENTICATE: HeaderDetails = {
  schema: z.string().max(256),
  description: 'The Bearer challenge (RFC 6750), naming the error.',
  required: true,
};

type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 500;

const ERROR_RESPONSES: Record<ErrorStatus, ResponseDetails> = {
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
    description: 'The access token does not carry the scope this operation requires (`insufficient_scope`).',
    headers: { 'WWW-Authenticate': WWW_AUTHENTICATE },
  },
  404: {
    description: 'No credit transfer with this paymentId for this tenant (`not_found`).',
  },
  409: {
    description:
      'The credit transfer is past the point where it can be cancelled (`payment_not_cancellable`).',
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
  500: {
    description: 'An internal error occurred (`internal_error`); the request may be retried.',
  },
};

interface ErrorOverride {
  description: string;
  headers?: Record<string, HeaderDetails>;
  /** The media type of the Problem body, when it is not application/problem+json. */
  mediaType?: string;
}

/**
 * The error responses of an operation, each with the Problem body. An override replaces the
 * description, headers and media type of its status.
 */
const errors = (
  statuses: readonly ErrorStatus[],
  overrides: Partial<Record<ErrorStatus, ErrorOverride>> = {},
): Record<string, ResponseDetails> =>
  Object.fromEntries(
    statuses.map((status) => {
      const override = overrides[status];
      const { description, headers } = override ?? ERROR_RESPONSES[status];
      const response: ResponseDetails = {
        description,
        content: { [override?.mediaType ?? PROBLEM_CONTENT_TYPE]: problem },
        ...(headers && { headers }),
      };
      return [String(status), response];
    }),
  );

const json = (schema: z.ZodType, component?: string): Record<string, BodyDetails> => ({
  'application/json': { schema, ...(component !== undefined && { component }) },
});

const creditTransferResponse = json(creditTransferSchema);

// ---------------------------------------------------------------------------------------------
// The operations, by operationId. Adding a route to ROUTES with one of these ids is all it
// takes to document it.

export const OPERATIONS: Readonly<Record<string, OperationDetails>> = {
  issueToken: {
    tags: ['Authorization'],
    description:
      'Exchanges client credentials for an access token (OAuth 2.0 client credentials grant, RFC 6749 ' +
      'section 4.4). The body is JSON or a form. The client authenticates with `client_id` and ' +
      '`client_secret` in the body, or with HTTP Basic (RFC 6749 section 2.3.1), not both. Without `scope`, ' +
      'every scope the client is allowed is granted. The token is a JWT to send as ' +
      `\`Authorization: Bearer <token>\`; it expires after ${ACCESS_TOKEN_LIFETIME_SECONDS} seconds. No refresh ` +
      'token is issued: request a new token before expiry, and when a call answers 401. Refusals follow ' +
      'RFC 6749 section 5.2: `Content-Type: application/json`, with the `error` codes it names.',
    // Client authentication, not an access token: HTTP Basic, or (the empty requirement) the
    // credentials in the body, which no security scheme can express.
    security: [{ clientSecretBasic: [] }, {}],
    requestBody: {
      description:
        'The grant type, the client credentials (unless sent with HTTP Basic) and the scopes asked for.',
      required: true,
      content: {
        'application/json': { schema: documentedTokenRequestSchema, component: 'TokenRequest' },
        'application/x-www-form-urlencoded': {
          schema: documentedTokenRequestSchema,
          component: 'TokenRequest',
        },
      },
    },
    responses: {
      '200': {
        description: 'The access token. Never cached (`Cache-Control: no-store`).',
        content: json(documentedTokenResponseSchema, 'TokenResponse'),
      },
      ...errors([400, 401, 413, 415, 429, 500], {
        400: {
          description:
            'The request is not valid (`invalid_request`), names another grant type (`unsupported_grant_type`) ' +
            'or a scope the client may not have (`invalid_scope`).',
          mediaType: 'application/json',
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
          mediaType: 'application/json',
        },
        413: { ...ERROR_RESPONSES[413], mediaType: 'application/json' },
        415: {
          description:
            'The request body is neither `application/x-www-form-urlencoded` nor `application/json` ' +
            '(`unsupported_media_type`).',
          mediaType: 'application/json',
        },
        429: {
          description:
            'Too many failed client authentications for this client id (10 within 60 seconds), or too many ' +
            'requests (`rate_limited`); retry after the number of seconds in `Retry-After`.',
          headers: ERROR_RESPONSES[429].headers,
          mediaType: 'application/json',
        },
      }),
    },
  },
  getJsonWebKeySet: {
    tags: ['Authorization'],
    description: 'The public keys (JWK Set, RFC 7517) that verify the signature of access tokens.',
    responses: {
      '200': { description: 'The key set.', content: json(jsonWebKeySetSchema, 'JsonWebKeySet') },
      ...errors([429, 500]),
    },
  },
  getAuthorizationServerMetadata: {
    tags: ['Authorization'],
    description:
      'Authorization server metadata at the RFC 8414 path: the same document as the OpenID Connect discovery path.',
    responses: {
      '200': {
        description: 'The metadata.',
        content: json(openIdConfigurationSchema, 'OpenIdConfiguration'),
      },
      ...errors([429, 500]),
    },
  },
  getOpenIdConfiguration: {
    tags: ['Authorization'],
    description:
      'Authorization server metadata (OpenID Connect Discovery): issuer, token endpoint and key set.',
    responses: {
      '200': {
        description: 'The metadata.',
        content: json(openIdConfigurationSchema, 'OpenIdConfiguration'),
      },
      ...errors([429, 500]),
    },
  },
  initiateCreditTransfer: {
    tags: ['Credit transfers'],
    description:
      'Instruction to pay an amount to an ultimate beneficiary on behalf of an originator. The answer is an ' +
      'asynchronous acceptance: 202 with the credit transfer, its `paymentId` and its first status; follow it ' +
      'with the status operation (the `Location` header). The amount must be above zero. A `valueDate` before ' +
      'today (UTC) is refused; a later one holds the transfer until that date. Amounts and all other values ' +
      'are stored and echoed exactly as sent.\n\n' +
      'Idempotency: with `idempotencyId` (or `Idempotency-Key`), a repeat with the same body and servicer ' +
      'headers answers 202 with the same paymentId, its current status and `Idempotent-Replayed: true`, however ' +
      'often and however concurrently it is sent; a repeat with anything different answers 422. A refused ' +
      'request claims no key. Without the header, every request is a new payment.\n\n' +
      'Sandbox (local and non-production stages): the outcome follows the suffix of `debtorAccountId`: ' +
      '`-blocked` (Rejected, BlockedAccount), `-closed` (ClosedAccountNumber), `-nofunds` (InsufficientFunds), ' +
      '`-forbidden` (TransactionForbidden), `-sanctioned` (RegulatoryReason), `-hold` (stays before settlement ' +
      'for a while, so a cancellation can win); anything else settles (AcceptedSettlementCompleted).',
    headers: z.strictObject({
      ...idempotencyHeaders(
        'A repeat with the same body and servicer headers answers with the same paymentId and ' +
          '`Idempotent-Replayed: true`; anything different is refused with 422. Keys never expire. Without it, ' +
          'every request is a new payment.',
      ),
      ...servicerHeaders,
    }),
    requestBody: {
      description: 'The credit transfer: the fields of the spec without the four the service sets.',
      required: true,
      content: json(creditTransferRequestSchema),
    },
    responses: {
      '202': {
        description: 'Accepted: the credit transfer with its paymentId and status.',
        content: creditTransferResponse,
        headers: acceptedHeaders('initiation', 'body'),
      },
      ...errors([400, 401, 403, 413, 415, 422, 429, 500]),
    },
  },
  getCreditTransferStatus: {
    tags: ['Credit transfers'],
    description:
      'The current status report of a credit transfer: its fields as initiated, with `status`, ' +
      '`statusReason` and the `date` of the status. A paymentId of another tenant answers 404, exactly as an ' +
      'unknown one.',
    pathParameters: paymentIdPath,
    headers: z.strictObject(servicerHeaders),
    responses: {
      '200': { description: 'The status report.', content: creditTransferResponse },
      ...errors([400, 401, 403, 404, 429, 500]),
    },
  },
  listCreditTransfers: {
    tags: ['Credit transfers'],
    description:
      'The credit transfers that match every filter given, newest first, a page at a time. Pass the ' +
      '`Pagination-Cursor` of a page as `cursor`, with the same filters, to read the next one. Unknown or ' +
      'repeated query parameters are refused.',
    queryParameters: listCreditTransfersQuerySchema,
    headers: z.strictObject(servicerHeaders),
    responses: {
      '200': {
        description: 'A page of matching credit transfers (possibly empty).',
        content: json(z.array(creditTransferSchema).max(MAX_LIMIT)),
        headers: {
          'Pagination-Cursor': {
            schema: z.string().max(CURSOR_MAX_LENGTH),
            description: 'Position of the next page: send it as `cursor`. Empty on the last page.',
            required: true,
          },
          'Pagination-Total': {
            schema: z.string().regex(/^[0-9]{1,10}$/),
            description: 'Number of credit transfers that matched the filters when paging began.',
            required: true,
          },
        },
      },
      ...errors([400, 401, 403, 429, 500]),
    },
  },
  cancelCreditTransfer: {
    tags: ['Credit transfers'],
    description:
      'Requests the cancellation of a credit transfer. The answer is an asynchronous acceptance: 202 with the ' +
      'credit transfer; the status becomes `Cancelled` (statusReason `RequestedByCustomer`) if the cancellation ' +
      'wins before settlement.',
    pathParameters: paymentIdPath,
    headers: z.strictObject({
      ...idempotencyHeaders('Send the same value when repeating the request.'),
      ...servicerHeaders,
    }),
    requestBody: {
      description: 'Why the cancellation is requested.',
      required: false,
      content: json(cancellationRequestSchema, 'CancellationRequest'),
    },
    responses: {
      '202': {
        description: 'Accepted: the credit transfer as it is now.',
        content: creditTransferResponse,
        headers: acceptedHeaders('cancellation', 'cancellationReason'),
      },
      ...errors([400, 401, 403, 404, 409, 413, 415, 422, 429, 500]),
    },
  },
  getOpenApiDocument: {
    tags: ['Documentation'],
    description:
      'This API as an OpenAPI 3.1 document, generated from the same schemas that validate requests.',
    responses: {
      '200': {
        description: 'The OpenAPI document.',
        content: json(openApiDocumentSchema, 'OpenApiDocument'),
      },
      ...errors([429, 500]),
    },
  },
  getReferencePage: {
    tags: ['Documentation'],
    description: 'A reference page of every operation, rendered from the OpenAPI document; no scripts.',
    responses: {
      '200': { description: 'The page.', content: { 'text/html': undefined } },
      ...errors([429, 500]),
    },
  },
};

// ---------------------------------------------------------------------------------------------
// zod to JSON Schema, with reusable parts moved to components.

const COMPONENT_REF = '#/components/schemas/';
const DEFS_REF = '#/$defs/';

/**
 * The longest string a regular expression can match, when it is anchored at both ends and has no
 * unbounded repetition; otherwise undefined. Lets a pattern that bounds the length (a date, a
 * country code) say so as `maxLength`.
 */
export const patternMaxLength = (pattern: string): number | undefined => {
  let position = 0;
  const peek = (): string | undefined => pattern[position];

  const parseQuantifier = (atom: number): number => {
    const next = peek();
    let result = atom;
    if (next === '*' || next === '+') {
      position += 1;
      result = atom === 0 ? 0 : Number.POSITIVE_INFINITY;
    } else if (next === '?') {
      position += 1;
    } else if (next === '{') {
      const match = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(position));
      if (!match) return atom;
      position += match[0].length;
      const upper = match[2] === undefined ? Number(match[1]) : match[3] === '' ? Infinity : Number(match[3]);
      result = atom === 0 ? 0 : atom * upper;
    } else {
      return atom;
    }
    if (peek() === '?') position += 1; // lazy
    return result;
  };

  const parseEscape = (): number => {
    position += 1; // backslash
    const letter = peek();
    position += 1;
    if (letter === undefined) return Number.NaN;
    if (letter === 'b' || letter === 'B') return 0;
    if (/[1-9k]/.test(letter)) return Number.NaN; // back reference: length unknown
    if (letter === 'u' && peek() === '{') position = pattern.indexOf('}', position) + 1;
    else if (letter === 'u') position += 4;
    else if (letter === 'x') position += 2;
    else if (letter === 'c') position += 1;
    else if ((letter === 'p' || letter === 'P') && peek() === '{')
      position = pattern.indexOf('}', position) + 1;
    return 1;
  };

  const parseClass = (): number => {
    position += 1; // [
    while (position < pattern.length && peek() !== ']') position += peek() === '\\' ? 2 : 1;
    position += 1; // ]
    return 1;
  };

  // Returns the longest match of each top-level alternative.
  const parseAlternatives = (): number[] => {
    const alternatives: number[] = [];
    let length = 0;
    while (position < pattern.length && peek() !== ')') {
      const next = peek();
      if (next === '|') {
        alternatives.push(length);
        length = 0;
        position += 1;
        continue;
      }
      let atom: number;
      if (next === '(') {
        position += 1;
        const lookaround = /^\?(=|!|<=|<!)/.exec(pattern.slice(position));
        if (lookaround) position += lookaround[0].length;
        else if (pattern.startsWith('?:', position)) position += 2;
        else if (pattern.startsWith('?<', position)) position = pattern.indexOf('>', position) + 1;
        const inner = Math.max(...parseAlternatives());
        position += 1; // )
        atom = lookaround ? 0 : inner;
      } else if (next === '[') {
        atom = parseClass();
      } else if (next === '\\') {
        atom = parseEscape();
      } else if (next === '^' || next === '$') {
        position += 1;
        atom = 0;
      } else {
        position += 1;
        atom = 1;
      }
      length += parseQuantifier(atom);
    }
    alternatives.push(length);
    return alternatives;
  };

  if (!pattern.startsWith('^') || !pattern.endsWith('$') || pattern.endsWith('\\$')) return undefined;
  const alternatives = parseAlternatives();
  if (position !== pattern.length || alternatives.length !== 1) return undefined;
  const [longest] = alternatives;
  return longest !== undefined && Number.isFinite(longest) ? longest : undefined;
};

/**
 * RFC 3339 date-time with a nanosecond fraction and an offset: 2026-01-31T23:59:59.123456789+01:00.
 * The format itself bounds no length (any number of fraction digits); no meaningful value is longer.
 */
const DATE_TIME_MAX_LENGTH = 35;

const INT32 = 2 ** 31;

/** Adds the bounds a schema implies but zod does not write: maxLength of bounded patterns and formats, integer formats. */
const addImpliedBounds = ({ jsonSchema }: { jsonSchema: JsonSchema }): void => {
  if (jsonSchema.type === 'string' && jsonSchema.maxLength === undefined && jsonSchema.enum === undefined) {
    const fromPattern =
      typeof jsonSchema.pattern === 'string' ? patternMaxLength(jsonSchema.pattern) : undefined;
    const fromFormat = jsonSchema.format === 'date-time' ? DATE_TIME_MAX_LENGTH : undefined;
    const maxLength = fromPattern ?? fromFormat;
    if (maxLength !== undefined && jsonSchema.const === undefined) jsonSchema.maxLength = maxLength;
  }
  if (jsonSchema.type === 'integer' && jsonSchema.format === undefined) {
    const { minimum, maximum } = jsonSchema;
    const fitsInt32 =
      typeof minimum === 'number' && typeof maximum === 'number' && minimum >= -INT32 && maximum < INT32;
    jsonSchema.format = fitsInt32 ? 'int32' : 'int64';
  }
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Rewrites every `#/$defs/X` reference to `#/components/schemas/X`. */
const rewriteRefs = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (!isObject(value)) return value;
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === '$ref' && typeof item === 'string') {
      if (!item.startsWith(DEFS_REF)) throw new Error(`Unexpected $ref ${item} in a generated schema`);
      result[key] = `${COMPONENT_REF}${item.slice(DEFS_REF.length)}`;
    } else {
      result[key] = rewriteRefs(item);
    }
  }
  return result;
};

const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, item: unknown) =>
    isObject(item) ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => a.localeCompare(b))) : item,
  );

/**
 * Converts zod schemas for one document: request parts with io `input`, responses with io
 * `output`; every schema with a zod `id` becomes a component, referenced by `$ref`.
 */
class SchemaConverter {
  readonly components: Record<string, JsonSchema> = {};

  private addComponent(name: string, schema: JsonSchema): void {
    const existing = this.components[name];
    if (existing !== undefined && canonical(existing) !== canonical(schema)) {
      throw new Error(
        `Schema component ${name} differs between its uses (request and response?); give each its own id`,
      );
    }
    this.components[name] = schema;
  }

  convert(schema: z.ZodType, io: 'input' | 'output', component?: string): JsonSchema {
    const generated = z.toJSONSchema(schema, {
      target: 'draft-2020-12',
      io,
      unrepresentable: 'throw',
      cycles: 'ref',
      reused: 'inline',
      override: addImpliedBounds,
    }) as JsonSchema;
    const { $schema: _dialect, $defs, ...root } = generated;
    for (const [name, definition] of Object.entries(isObject($defs) ? $defs : {})) {
      this.addComponent(name, rewriteRefs(definition) as JsonSchema);
    }
    const rewritten = rewriteRefs(root) as JsonSchema;
    if (component === undefined || typeof rewritten.$ref === 'string') return rewritten;
    this.addComponent(component, rewritten);
    return { $ref: `${COMPONENT_REF}${component}` };
  }

  /** The properties of a zod object as parameters, in declaration order. */
  parameters(schema: ZodObjectSchema, location: ParameterObject['in']): ParameterObject[] {
    const object = this.convert(schema, 'input');
    const properties = isObject(object.properties) ? object.properties : {};
    const required = new Set(Array.isArray(object.required) ? object.required : []);
    return Object.entries(properties).map(([name, property]) => {
      const { description, ...propertySchema } = property as JsonSchema;
      return {
        name,
        in: location,
        required: location === 'path' || required.has(name),
        ...(typeof description === 'string' && { description }),
        schema: propertySchema,
      };
    });
  }

  content(
    content: Record<string, BodyDetails | undefined>,
    io: 'input' | 'output',
  ): Record<string, MediaTypeObject> {
    return Object.fromEntries(
      Object.entries(content).map(([mediaType, body]) => [
        mediaType,
        body === undefined ? {} : { schema: this.convert(body.schema, io, body.component) },
      ]),
    );
  }
}

// ---------------------------------------------------------------------------------------------
// The document.

const TOKEN_DESCRIPTION =
  'Access token from `POST /oauth/token` (client credentials grant): a JWT signed with RS256, verifiable with ' +
  'the keys at `/.well-known/jwks.json`, valid for 3600 seconds, carrying the granted scopes. Tokens are ' +
  'issued and verified following the JSON Web Token Best Current Practices (RFC8725): one fixed signature ' +
  'algorithm, never taken from the token; issuer, audience and expiry are checked on every call.';

const CLIENT_BASIC_DESCRIPTION =
  'Client authentication at the token endpoint only (RFC 6749 section 2.3.1): HTTP Basic with the ' +
  'form-urlencoded client id and secret. Over TLS only. Every other operation takes a bearer token.';

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
Header names are case-insensitive.`;

const methodOf = (route: Route): HttpMethod => route.method.toLowerCase() as HttpMethod;

const buildOperation = (
  route: Route,
  details: OperationDetails,
  converter: SchemaConverter,
): OperationObject => {
  const parameters = [
    ...(details.pathParameters ? converter.parameters(details.pathParameters, 'path') : []),
    ...(details.queryParameters ? converter.parameters(details.queryParameters, 'query') : []),
    ...(details.headers ? converter.parameters(details.headers, 'header') : []),
  ];
  const scopeNote = route.scope ? `\n\nRequires scope \`${route.scope}\`.` : '\n\nNeeds no access token.';
  const responses: Record<string, ResponseObject> = {};
  for (const [status, response] of Object.entries(details.responses)) {
    responses[status] = {
      description: response.description,
      ...(response.headers && {
        headers: Object.fromEntries(
          Object.entries(response.headers).map(([name, header]) => [
            name,
            {
              description: header.description,
              ...(header.required && { required: true }),
              schema: converter.convert(header.schema, 'output'),
            },
          ]),
        ),
      }),
      ...(response.content && { content: converter.content(response.content, 'output') }),
    };
  }
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: `${details.description}${scopeNote}`,
    tags: [...details.tags],
    security: details.security ?? (route.scope ? [{ bearerAuth: [route.scope] }] : []),
    ...(parameters.length > 0 && { parameters }),
    ...(details.requestBody && {
      requestBody: {
        description: details.requestBody.description,
        required: details.requestBody.required,
        content: converter.content(details.requestBody.content, 'input'),
      },
    }),
    responses,
  };
};

/**
 * The OpenAPI document of the given routes (by default the service's route table). Every route
 * needs an entry in OPERATIONS; entries without a route are left out.
 */
export const buildOpenApiDocument = (routes: readonly Route[] = ROUTES): OpenApiDocument => {
  const converter = new SchemaConverter();
  const paths: Record<string, PathItemObject> = {};
  const tags = new Set<TagName>();
  for (const route of routes) {
    const details = OPERATIONS[route.operationId];
    if (!details) {
      throw new Error(
        `No OpenAPI entry for operation ${route.operationId}; add one to OPERATIONS in openapi.ts`,
      );
    }
    const pathItem = paths[route.path] ?? {};
    paths[route.path] = pathItem;
    const method = methodOf(route);
    if (pathItem[method]) throw new Error(`Two routes for ${route.method} ${route.path}`);
    pathItem[method] = buildOperation(route, details, converter);
    for (const tag of details.tags) tags.add(tag);
  }
  return {
    openapi: OPENAPI_VERSION,
    info: { title: API_TITLE, version: API_VERSION, description: DOCUMENT_DESCRIPTION },
    servers: [
      {
        // Relative to this document, which the service serves at its root: the same origin locally
        // (npm start), behind a custom domain, and under the stage path of the execute-api URL.
        url: '.',
        description:
          'The deployment that serves this document: local (npm start), sandbox and test stages, or production.',
        'x-internal': false,
      },
    ],
    tags: [...tags].map((name) => ({ name, description: TAGS[name] })),
    paths,
    components: {
      schemas: Object.fromEntries(
        Object.entries(converter.components).sort(([a], [b]) => a.localeCompare(b)),
      ),
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: TOKEN_DESCRIPTION },
        clientSecretBasic: { type: 'http', scheme: 'basic', description: CLIENT_BASIC_DESCRIPTION },
        oauth2: {
          type: 'oauth2',
          description: TOKEN_DESCRIPTION,
          flows: { clientCredentials: { tokenUrl: '/oauth/token', scopes: SCOPE_DESCRIPTIONS } },
        },
      },
    },
  };
};

let built: OpenApiDocument | undefined;

/** The service's document, built once per container. */
export const openApiDocument = (): OpenApiDocument => {
  built ??= buildOpenApiDocument();
  return built;
};
