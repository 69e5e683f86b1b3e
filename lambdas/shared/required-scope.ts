import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { splitScopes } from '#domain/access/scopes';
import { ROUTES, type Route } from '#routes';
import { headerValue } from './http-event.ts';

/** The scheme a refusal names: the one the token was sent with (RFC 9449 7.1 for a DPoP-bound token). */
export type TokenScheme = 'Bearer' | 'DPoP';

/** A verified token without the scope its route requires: 403 naming that scope (RFC 6750 3.1). */
export class InsufficientScopeError extends Error {
  override name = 'InsufficientScopeError';
  constructor(
    readonly scope: string,
    readonly scheme: TokenScheme,
  ) {
    super(`The access token does not carry the scope ${scope}`);
  }
}

/** `WWW-Authenticate` of a 403 insufficient_scope (RFC 6750 3, RFC 9449 7.1). */
export const insufficientScopeChallenge = (error: InsufficientScopeError): string =>
  `${error.scheme} realm="credit-transfers", error="insufficient_scope", scope="${error.scope}", error_description="${error.message}"`;

const schemeOf = (event: APIGatewayProxyEvent): TokenScheme =>
  /^dpop\s/i.test(headerValue(event, 'Authorization')?.trim() ?? '') ? 'DPoP' : 'Bearer';

/**
 * The route's scope, checked here rather than by the authorizer's policy: API Gateway answers a
 * Deny with one fixed response, which cannot name the scope of the route that was refused. The
 * authorizer lets a verified token reach every protected route; this check, in every handler's
 * middleware, is what keeps each route to its scope.
 */
export const requiredScope = <E extends APIGatewayProxyEvent = APIGatewayProxyEvent>(
  routes: readonly Route[] = ROUTES,
): MiddlewareObj<E, APIGatewayProxyResult> => ({
  before: async ({ event }) => {
    const route = routes.find(({ method, path }) => method === event.httpMethod && path === event.resource);
    const authorizer = event.requestContext?.authorizer;
    if (route === undefined) {
      // An authorized request always comes through a route of the table; one that does not is a wiring fault.
      if (authorizer) throw new Error(`No route ${event.httpMethod} ${event.resource} in the route table`);
      return;
    }
    if (route.scope === undefined) return;
    const granted = splitScopes(typeof authorizer?.scope === 'string' ? authorizer.scope : undefined);
    if (!granted.includes(route.scope)) throw new InsufficientScopeError(route.scope, schemeOf(event));
  },
});
