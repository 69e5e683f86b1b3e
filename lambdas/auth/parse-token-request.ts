import type { APIGatewayProxyEvent } from 'aws-lambda';
import { InvalidTokenRequestError } from '#domain/access/token-errors';
import { type TokenRequest, type TokenRequestParameters, tokenRequestOf } from '#domain/access/token-request';
import { InvalidRequestError } from '#domain/commons/errors';
import { headerValue } from '#shared/http-event';
import { boundedRawBody, parseJsonObjectText, UnsupportedMediaTypeError } from '#shared/middleware';

const FORM = 'application/x-www-form-urlencoded';
const MEDIA_TYPES = `${FORM} or application/json`;

const mediaTypeOf = (contentType: string): string => contentType.split(';')[0]?.trim().toLowerCase() ?? '';

const formParameters = (body: string): TokenRequestParameters => {
  const parameters: TokenRequestParameters = {};
  const form = new URLSearchParams(body);
  for (const name of new Set(form.keys())) {
    const values = form.getAll(name);
    // RFC 6749 3.2: parameters must not be included more than once.
    if (values.length > 1) {
      throw new InvalidTokenRequestError(`The parameter ${name} is repeated`, [
        { name, reason: 'must not be repeated' },
      ]);
    }
    parameters[name] = values[0];
  }
  return parameters;
};

const jsonParameters = (body: string): TokenRequestParameters => {
  let parsed: unknown;
  try {
    parsed = parseJsonObjectText(body);
  } catch (error) {
    // The same refusal, in the token endpoint's RFC 6749 form.
    if (error instanceof InvalidRequestError)
      throw new InvalidTokenRequestError(error.message, error.invalidParams);
    throw error;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new InvalidTokenRequestError('The request body must be a JSON object', [
      { name: '(body)', reason: 'must be a JSON object' },
    ]);
  }
  return parsed as TokenRequestParameters;
};

const bodyParameters = (event: APIGatewayProxyEvent): TokenRequestParameters => {
  const raw = boundedRawBody(event);
  const contentType = headerValue(event, 'content-type');
  if (raw.trim() === '' && contentType === undefined) return {};
  const mediaType = mediaTypeOf(contentType ?? '');
  if (mediaType === FORM) return formParameters(raw);
  if (mediaType === 'application/json') return jsonParameters(raw);
  throw new UnsupportedMediaTypeError(MEDIA_TYPES);
};

/** Reads a token request from a JSON body (spec 4.5) or a form body (RFC 6749), with Basic or body credentials. */
export const parseTokenRequest = (event: APIGatewayProxyEvent): TokenRequest =>
  tokenRequestOf(bodyParameters(event), {
    authorization: headerValue(event, 'authorization'),
    // Set by API Gateway (and the local gateway) from the connection, never from a header.
    sourceAddress: event.requestContext?.identity?.sourceIp ?? 'unknown',
    dpopProof: headerValue(event, 'dpop'),
  });
