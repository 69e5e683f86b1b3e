import * as z from 'zod/mini';
import { described, optionalField } from '../commons/text.ts';
import { toInvalidParams } from '../commons/validation.ts';
import { assertionIssuer, JWT_BEARER_ASSERTION_TYPE } from './client-assertion.ts';
import { InvalidClientError, InvalidTokenRequestError, UnsupportedGrantTypeError } from './token-errors.ts';

export const CLIENT_CREDENTIALS_GRANT = 'client_credentials';
export const MAX_CLIENT_ASSERTION_LENGTH = 8192;

/** Spec 4.5's request fields; RFC 6749 says unknown parameters are ignored, so they are. */
export const tokenRequestSchema = z.object({
  grant_type: described(z.literal(CLIENT_CREDENTIALS_GRANT), 'The only grant this server issues.'),
  client_id: optionalField(
    z.string(),
    'With client_secret, unless the client authenticates with HTTP Basic.',
  ),
  client_secret: optionalField(
    z.string(),
    'With client_id, unless the client authenticates with HTTP Basic.',
  ),
  scope: optionalField(
    z.string(),
    'Space-separated scopes; when absent, every scope the client is allowed is granted.',
  ),
  client_assertion_type: optionalField(
    z.string().check(z.maxLength(JWT_BEARER_ASSERTION_TYPE.length)),
    `private_key_jwt (RFC 7523): ${JWT_BEARER_ASSERTION_TYPE}, with client_assertion.`,
  ),
  client_assertion: optionalField(
    // Far above a signed assertion of the allowed algorithms (a PS256 one with a 4096-bit key is ~1 KB).
    z.string().check(z.maxLength(MAX_CLIENT_ASSERTION_LENGTH)),
    'private_key_jwt: a JWT signed ES256, PS256 or EdDSA by a key of the client; iss and sub the client id, aud the issuer, exp at most 60 s ahead, a jti used once.',
  ),
});

export const tokenResponseSchema = z.object({
  access_token: described(z.string(), 'A signed JWT; verify it with the keys at /.well-known/jwks.json.'),
  token_type: described(
    z.enum(['Bearer', 'DPoP']),
    'DPoP when the request carried a DPoP proof: the token is bound to its key (RFC 9449).',
  ),
  expires_in: described(z.int(), 'Lifetime in seconds (3600).'),
  scope: described(z.string(), 'Space-separated granted scopes.'),
});
export type TokenResponse = z.infer<typeof tokenResponseSchema>;

export type ClientCredentials =
  | { clientId: string; secret: string; method: 'client_secret_basic' | 'client_secret_post' }
  | { clientId: string; assertion: string; method: 'private_key_jwt' };

export interface TokenRequest {
  credentials: ClientCredentials;
  /** The scope parameter as sent, or undefined when absent. */
  scope: string | undefined;
  /** Where the request came from, as the gateway saw it (failed authentications are counted by it). */
  sourceAddress: string;
  /** The DPoP header (RFC 9449), when the client asks for a bound token. */
  dpopProof: string | undefined;
}

/** The request's parameters by name, from a form or a JSON body. */
export type TokenRequestParameters = Record<string, unknown>;

/** RFC 6749 2.3.1: id and secret are form-urlencoded before they are joined and base64-encoded. */
const basicCredentials = (authorization: string): { clientId: string; secret: string } => {
  const [scheme, encoded, ...rest] = authorization.trim().split(/\s+/);
  if (scheme?.toLowerCase() !== 'basic') {
    throw new InvalidClientError('The token endpoint accepts HTTP Basic client authentication only');
  }
  const malformed = () => new InvalidClientError('The HTTP Basic credentials are malformed');
  if (encoded === undefined || rest.length > 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) throw malformed();
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const separator = decoded.indexOf(':');
  if (separator < 0) throw malformed();
  const formDecode = (value: string) => decodeURIComponent(value.replace(/\+/g, ' '));
  try {
    return {
      clientId: formDecode(decoded.slice(0, separator)),
      secret: formDecode(decoded.slice(separator + 1)),
    };
  } catch {
    throw malformed();
  }
};

/** RFC 7521 4.2 / RFC 7523 2.2: a JWT assertion, and no other client authentication beside it. */
const assertionCredentials = (
  authorization: string | undefined,
  body: z.infer<typeof tokenRequestSchema>,
): ClientCredentials => {
  if (body.client_assertion_type !== JWT_BEARER_ASSERTION_TYPE) {
    throw new InvalidClientError(`The client_assertion_type must be ${JWT_BEARER_ASSERTION_TYPE}`);
  }
  if (body.client_assertion === undefined) {
    throw new InvalidTokenRequestError('The client_assertion is missing', [
      { name: 'client_assertion', reason: 'is required with client_assertion_type' },
    ]);
  }
  if ((authorization !== undefined && authorization.trim() !== '') || body.client_secret !== undefined) {
    throw new InvalidTokenRequestError('A request authenticates the client one way only', [
      { name: 'client_assertion', reason: 'must not be sent with a client secret' },
    ]);
  }
  const issuer = assertionIssuer(body.client_assertion);
  if (issuer === undefined)
    throw new InvalidClientError('The client_assertion is not a JWT naming its client in iss');
  // RFC 7521 4.2: a client_id sent beside the assertion names the same client.
  if (body.client_id !== undefined && body.client_id !== issuer) {
    throw new InvalidClientError('The client_id differs from the client the assertion names');
  }
  return { clientId: issuer, assertion: body.client_assertion, method: 'private_key_jwt' };
};

const credentialsOf = (
  authorization: string | undefined,
  body: z.infer<typeof tokenRequestSchema>,
): ClientCredentials => {
  if (body.client_assertion_type !== undefined || body.client_assertion !== undefined) {
    return assertionCredentials(authorization, body);
  }
  if (authorization !== undefined && authorization.trim() !== '') {
    const basic = basicCredentials(authorization);
    // RFC 6749 2.3: a client uses one authentication method per request.
    if (body.client_secret !== undefined) {
      throw new InvalidTokenRequestError(
        'Send the client secret either in HTTP Basic or in the body, not both',
        [{ name: 'client_secret', reason: 'must not be sent with HTTP Basic credentials' }],
      );
    }
    if (body.client_id !== undefined && body.client_id !== basic.clientId) {
      throw new InvalidTokenRequestError('The client_id differs from the HTTP Basic client id', [
        { name: 'client_id', reason: 'differs from the HTTP Basic client id' },
      ]);
    }
    return { ...basic, method: 'client_secret_basic' };
  }
  if (body.client_id === undefined || body.client_secret === undefined) {
    throw new InvalidClientError(
      'Client authentication is required: client_id and client_secret, or HTTP Basic',
    );
  }
  return { clientId: body.client_id, secret: body.client_secret, method: 'client_secret_post' };
};

/**
 * A token request from its parameters (a JSON body, spec 4.5, or a form body, RFC 6749) and
 * headers: Basic or body credentials, or a client assertion.
 */
export const tokenRequestOf = (
  parameters: TokenRequestParameters,
  headers: {
    authorization: string | undefined;
    /** Where the request came from, as the gateway saw it. */
    sourceAddress: string;
    dpopProof: string | undefined;
  },
): TokenRequest => {
  // RFC 6749 3.1: a parameter sent without a value is treated as omitted.
  for (const [name, value] of Object.entries(parameters)) if (value === '') delete parameters[name];

  const grantType = parameters.grant_type;
  if (typeof grantType === 'string' && grantType !== CLIENT_CREDENTIALS_GRANT) {
    throw new UnsupportedGrantTypeError(`The only grant type supported is ${CLIENT_CREDENTIALS_GRANT}`);
  }
  const result = tokenRequestSchema.safeParse(parameters, {
    error: (issue) => (issue.input === undefined ? 'is required' : undefined),
  });
  if (!result.success) {
    throw new InvalidTokenRequestError(
      'The token request is not valid',
      toInvalidParams(result.error.issues),
    );
  }
  return {
    credentials: credentialsOf(headers.authorization, result.data),
    scope: result.data.scope,
    sourceAddress: headers.sourceAddress,
    dpopProof: headers.dpopProof,
  };
};
