import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import {
  ClientAuthenticationThrottledError,
  InvalidClientError,
  InvalidDpopProofRequestError,
  TokenRequestError,
} from '#domain/access/token-errors';
import { InvalidRequestError } from '#domain/commons/errors';
import { logger } from '#shared/logger';
import { PayloadTooLargeError, toProblemResponse, UnsupportedMediaTypeError } from '#shared/middleware';
import { problemResponse } from '#shared/problem';

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
