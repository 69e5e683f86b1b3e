import type { InvalidParam } from '../commons/errors.ts';

/** The error codes of the token endpoint's refusals: RFC 6749 5.2, RFC 9449 7.1 and 8, and its rate limit. */
export type TokenErrorCode =
  | 'invalid_request'
  | 'unsupported_grant_type'
  | 'invalid_client'
  | 'invalid_scope'
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  | 'rate_limited';

/** The token endpoint's refusals (RFC 6749 section 5.2), each with its status and error code. */
export abstract class TokenRequestError extends Error {
  abstract readonly status: 400 | 401 | 429;
  abstract readonly error: TokenErrorCode;
  constructor(
    message: string,
    readonly invalidParams: InvalidParam[] = [],
  ) {
    super(message);
  }
}

// Names are written out: bundles are minified without keeping class names.
export class InvalidTokenRequestError extends TokenRequestError {
  override name = 'InvalidTokenRequestError';
  readonly status = 400;
  readonly error = 'invalid_request';
}

export class UnsupportedGrantTypeError extends TokenRequestError {
  override name = 'UnsupportedGrantTypeError';
  readonly status = 400;
  readonly error = 'unsupported_grant_type';
}

export class InvalidClientError extends TokenRequestError {
  override name = 'InvalidClientError';
  readonly status = 401;
  readonly error = 'invalid_client';
}

export class InvalidScopeError extends TokenRequestError {
  override name = 'InvalidScopeError';
  readonly status = 400;
  readonly error = 'invalid_scope';
}

/** RFC 9449 5.2 / 8: the token request's DPoP proof is missing, bad, or needs a server nonce. */
export class InvalidDpopProofRequestError extends TokenRequestError {
  override name = 'InvalidDpopProofRequestError';
  readonly status = 400;
  constructor(
    message: string,
    readonly error: 'invalid_dpop_proof' | 'use_dpop_nonce' = 'invalid_dpop_proof',
    /** The nonce to use next (DPoP-Nonce), when the server asks for one. */
    readonly nonce?: string,
  ) {
    super(message);
  }
}

/** Too many failed authentications for one client id: 429 with Retry-After, before any secret is checked. */
export class ClientAuthenticationThrottledError extends TokenRequestError {
  override name = 'ClientAuthenticationThrottledError';
  readonly status = 429;
  readonly error = 'rate_limited';
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}
