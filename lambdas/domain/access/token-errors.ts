import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { InvalidParam } from '#domain/commons/errors';
import { InvalidRequestError } from '#domain/commons/errors';
import { logger } from '#shared/logger';
import { PayloadTooLargeError, toProblemResponse, UnsupportedMediaTypeError } from '#shared/middleware';
import { type ErrorCode, problemResponse } from '#shared/problem';

/** The token endpoint's refusals (RFC 6749 section 5.2), each with its status and error code. */
export abstract class TokenRequestError extends Error {
  abstract readonly status: 400 | 401 | 429;
  abstract readonly error: ErrorCode;
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

export const CLIENT_AUTHENTICATION_CHALLENGE = 'Basic realm="credit-transfers"';

/**
 * Answers token endpoint errors in the RFC 6749 form: `Content-Type: application/json` (OAuth
 * client libraries refuse anything else on a token error), the problem fields kept in the body.
 * Runs before problemResponses(), which still answers everything unexpected.
 */
export const tokenErrorResponses = (): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> => ({
  onError: async ({ error }) => {
    let response: APIGatewayProxyResult;
    if (error instanceof TokenRequestError) {
      logger.info('Token request refused', { error: error.error, reason: error.message });
      response = problemResponse(error.status, error.error, error.message, {
        invalidParams: error.invalidParams,
        headers:
          error instanceof InvalidClientError
            ? { 'WWW-Authenticate': CLIENT_AUTHENTICATION_CHALLENGE }
            : error instanceof ClientAuthenticationThrottledError
              ? { 'Retry-After': String(error.retryAfterSeconds) }
              : error instanceof InvalidDpopProofRequestError && error.nonce !== undefined
                ? { 'DPoP-Nonce': error.nonce }
                : {},
      });
    } else if (
      error instanceof PayloadTooLargeError ||
      error instanceof UnsupportedMediaTypeError ||
      error instanceof InvalidRequestError
    ) {
      response = toProblemResponse(error);
    } else {
      return undefined;
    }
    return {
      ...response,
      headers: { ...response.headers, 'Content-Type': 'application/json', Pragma: 'no-cache' },
    };
  },
});
