import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { calculateJwkThumbprint, EmbeddedJWK, errors, type JWK, type JWTPayload, jwtVerify } from 'jose';
import { CLIENT_SIGNING_ALGORITHMS } from './client.ts';

/**
 * DPoP proofs (RFC 9449). A proof is fresh for PROOF_WINDOW_SECONDS after its `iat` (and may run
 * PROOF_CLOCK_SKEW_SECONDS ahead of this clock); its jti is remembered that long, so a replay
 * within the window is refused and one after it is refused as stale.
 */
export const DPOP_PROOF_WINDOW_SECONDS = 60;
export const DPOP_PROOF_CLOCK_SKEW_SECONDS = 10;
export const DPOP_ALGORITHMS = CLIENT_SIGNING_ALGORITHMS;

/** Why a proof is refused: RFC 9449 7.1's error code, and what went wrong. */
export class InvalidDpopProofError extends Error {
  override name = 'InvalidDpopProofError';
  constructor(
    message: string,
    readonly error: 'invalid_dpop_proof' | 'use_dpop_nonce' = 'invalid_dpop_proof',
  ) {
    super(message);
  }
}

export interface VerifiedDpopProof {
  /** The RFC 7638 thumbprint of the proof's key: what a bound token's cnf.jkt names. */
  jkt: string;
  jti: string;
  /** Epoch seconds: the proof is stale after it, and its jti need not be remembered longer. */
  staleAt: number;
}

/** The htu a proof must carry: scheme, host and path, no query or fragment (RFC 9449 4.3). */
export const dpopTarget = (url: string): string => {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
};

/** RFC 9449 4.2: `ath` is the base64url SHA-256 of the access token. */
export const accessTokenHash = (accessToken: string): string =>
  createHash('sha256').update(accessToken, 'ascii').digest('base64url');

/**
 * Server nonces (RFC 9449 8), without state: a nonce is the time it was made and an HMAC of it,
 * valid for NONCE_LIFETIME_SECONDS; any nonce still valid is accepted, a new one is offered with
 * each refusal and answer.
 */
export const NONCE_LIFETIME_SECONDS = 300;
export const dpopNonce = (secret: string, now: Date): string => {
  const time = Math.floor(now.getTime() / 1000).toString(36);
  return `${time}.${createHmac('sha256', secret).update(time).digest('base64url').slice(0, 22)}`;
};
const nonceIsValid = (nonce: unknown, secret: string, now: Date): boolean => {
  if (typeof nonce !== 'string' || !/^[0-9a-z]{1,12}\.[A-Za-z0-9_-]{22}$/.test(nonce)) return false;
  const [time = ''] = nonce.split('.');
  const expected = Buffer.from(dpopNonce(secret, new Date(Number.parseInt(time, 36) * 1000)));
  const age = Math.floor(now.getTime() / 1000) - Number.parseInt(time, 36);
  return (
    age >= -DPOP_PROOF_CLOCK_SKEW_SECONDS &&
    age <= NONCE_LIFETIME_SECONDS &&
    expected.length === nonce.length &&
    timingSafeEqual(expected, Buffer.from(nonce))
  );
};

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/**
 * Verifies one DPoP proof with jose: `typ` dpop+jwt, signed ES256, PS256 or EdDSA by the public
 * key in its header; `htm` and `htu` this request's method and public URL; `iat` within the
 * window; a `jti`; `ath` the access token's hash when one is presented; the nonce when required.
 * Whether the jti was seen before is the caller's to check.
 */
export const verifyDpopProof = async (
  proof: string | undefined,
  expected: { method: string; url: string; accessToken?: string; now: Date; nonceSecret?: string },
): Promise<VerifiedDpopProof> => {
  if (proof === undefined || proof.trim() === '')
    throw new InvalidDpopProofError('the DPoP proof is missing');
  let payload: JWTPayload;
  let jwk: JWK;
  try {
    const verified = await jwtVerify(proof.trim(), EmbeddedJWK, {
      typ: 'dpop+jwt',
      algorithms: [...DPOP_ALGORITHMS],
      currentDate: expected.now,
      requiredClaims: ['iat', 'jti', 'htm', 'htu'],
    });
    payload = verified.payload;
    jwk = verified.protectedHeader.jwk as JWK;
  } catch (error) {
    const reason = error instanceof errors.JOSEError ? `${error.code}: ${error.message}` : 'it is not a JWT';
    throw new InvalidDpopProofError(`the DPoP proof is not valid (${reason})`);
  }
  if (PRIVATE_MEMBERS.some((member) => member in jwk)) {
    throw new InvalidDpopProofError('the DPoP proof carries a private key');
  }
  if (payload.htm !== expected.method)
    throw new InvalidDpopProofError('the DPoP proof is for another method');
  let htu: string;
  try {
    htu = dpopTarget(String(payload.htu));
  } catch {
    throw new InvalidDpopProofError('the DPoP proof htu is not a URL');
  }
  if (htu !== dpopTarget(expected.url)) throw new InvalidDpopProofError('the DPoP proof is for another URL');
  const now = Math.floor(expected.now.getTime() / 1000);
  const iat = payload.iat as number;
  if (iat > now + DPOP_PROOF_CLOCK_SKEW_SECONDS)
    throw new InvalidDpopProofError('the DPoP proof iat is in the future');
  if (iat < now - DPOP_PROOF_WINDOW_SECONDS) throw new InvalidDpopProofError('the DPoP proof is too old');
  const jti = payload.jti;
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > 256) {
    throw new InvalidDpopProofError('the DPoP proof jti must be 1 to 256 characters');
  }
  if (expected.accessToken !== undefined && payload.ath !== accessTokenHash(expected.accessToken)) {
    throw new InvalidDpopProofError('the DPoP proof ath is not the hash of this access token');
  }
  if (
    expected.nonceSecret !== undefined &&
    !nonceIsValid(payload.nonce, expected.nonceSecret, expected.now)
  ) {
    throw new InvalidDpopProofError('the DPoP proof must carry a fresh server nonce', 'use_dpop_nonce');
  }
  return {
    jkt: await calculateJwkThumbprint(jwk),
    jti,
    staleAt: Math.max(iat, now) + DPOP_PROOF_WINDOW_SECONDS + DPOP_PROOF_CLOCK_SKEW_SECONDS,
  };
};
