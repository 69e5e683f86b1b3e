import { createLocalJWKSet, decodeJwt, errors, type JWTPayload, jwtVerify } from 'jose';
import { CLIENT_SIGNING_ALGORITHMS, type ClientJwkSet } from './client.ts';

/** RFC 7523 2.2: the client_assertion_type of a JWT client assertion. */
export const JWT_BEARER_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** An assertion expires at most this far ahead: its jti is remembered that long, no longer. */
export const MAX_ASSERTION_LIFETIME_SECONDS = 60;
/** How far ahead of this server's clock a client's may run (iat, nbf). */
export const ASSERTION_CLOCK_SKEW_SECONDS = 10;

export class InvalidAssertionError extends Error {
  override name = 'InvalidAssertionError';
}

/** The client id an assertion names (`iss`), read before its signature is checked: only to find its keys. */
export const assertionIssuer = (assertion: string): string | undefined => {
  try {
    const { iss } = decodeJwt(assertion);
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
};

export interface VerifiedAssertion {
  jti: string;
  /** Epoch seconds: until then the jti must not be used again. */
  exp: number;
}

/**
 * Verifies a private_key_jwt client assertion (RFC 7523 3, RFC 7521 5.2) with jose: signed by one
 * of the client's keys with ES256, PS256 or EdDSA (never none, HS* or RS256); `iss` and `sub` the
 * client; `aud` one of `audiences` (the issuer identifier, or the token endpoint's URL); `exp`
 * not past and at most 60 s ahead; `iat` and `nbf` at most 10 s ahead; a `jti`. Whether the jti
 * was used before is the caller's to check.
 */
export const verifyClientAssertion = async (
  assertion: string,
  options: { clientId: string; jwks: ClientJwkSet; audiences: string[]; now: Date },
): Promise<VerifiedAssertion> => {
  const nowSeconds = Math.floor(options.now.getTime() / 1000);
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(
      assertion,
      createLocalJWKSet(options.jwks as Parameters<typeof createLocalJWKSet>[0]),
      {
        algorithms: [...CLIENT_SIGNING_ALGORITHMS],
        issuer: options.clientId,
        subject: options.clientId,
        audience: options.audiences,
        requiredClaims: ['exp', 'jti'],
        currentDate: options.now,
        // Only nbf is given leeway; exp is checked without any below.
        clockTolerance: ASSERTION_CLOCK_SKEW_SECONDS,
      },
    ));
  } catch (error) {
    if (error instanceof errors.JOSEError)
      throw new InvalidAssertionError(`client assertion refused: ${error.code}: ${error.message}`);
    throw new InvalidAssertionError('client assertion refused: it is not a JWT');
  }
  const { exp, iat, jti } = payload as { exp: number; iat?: number; jti: unknown };
  if (exp <= nowSeconds) throw new InvalidAssertionError('client assertion refused: it has expired');
  if (exp > nowSeconds + MAX_ASSERTION_LIFETIME_SECONDS) {
    throw new InvalidAssertionError(
      `client assertion refused: exp is more than ${MAX_ASSERTION_LIFETIME_SECONDS} s ahead`,
    );
  }
  if (iat !== undefined && iat > nowSeconds + ASSERTION_CLOCK_SKEW_SECONDS) {
    throw new InvalidAssertionError('client assertion refused: iat is in the future');
  }
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > 256) {
    throw new InvalidAssertionError('client assertion refused: jti must be 1 to 256 characters');
  }
  return { jti, exp };
};
