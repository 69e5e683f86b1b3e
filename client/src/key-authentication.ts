import { createHash, type KeyObject, randomUUID } from 'node:crypto';
import {
  type CryptoKey,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  SignJWT,
} from 'jose';

/** RFC 7523 client assertion type. */
export const JWT_BEARER_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** What the service accepts for client assertions and DPoP proofs (never RS256, HS* or none). */
export type KeyAlgorithm = 'ES256' | 'PS256' | 'EdDSA';

type SigningKey = CryptoKey | KeyObject | JWK;

/** `private_key_jwt`: the client's private key (a CryptoKey, KeyObject or private JWK) and its `kid`. */
export interface PrivateKeyJwtOptions {
  key: SigningKey;
  kid: string;
  /** Default: ES256 for a P-256 key, PS256 for an RSA key, EdDSA for an Ed25519 key. */
  alg?: KeyAlgorithm | undefined;
}

/** A DPoP key pair (RFC 9449); `true` makes an ES256 one for the client instance. */
export type DpopOption = true | { publicKey: CryptoKey | KeyObject; privateKey: CryptoKey | KeyObject };

const algorithmOf = (key: SigningKey, given: KeyAlgorithm | undefined): KeyAlgorithm => {
  if (given !== undefined) return given;
  const jwk = key as JWK;
  if (typeof jwk.kty === 'string') {
    if (jwk.alg === 'ES256' || jwk.alg === 'PS256' || jwk.alg === 'EdDSA') return jwk.alg as KeyAlgorithm;
    if (jwk.kty === 'EC' && jwk.crv === 'P-256') return 'ES256';
    if (jwk.kty === 'RSA') return 'PS256';
    if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return 'EdDSA';
  }
  const object = key as KeyObject;
  if (typeof object.asymmetricKeyType === 'string') {
    if (object.asymmetricKeyType === 'ec' && object.asymmetricKeyDetails?.namedCurve === 'prime256v1')
      return 'ES256';
    if (object.asymmetricKeyType === 'rsa' || object.asymmetricKeyType === 'rsa-pss') return 'PS256';
    if (object.asymmetricKeyType === 'ed25519') return 'EdDSA';
  }
  const algorithm = (key as CryptoKey).algorithm as { name?: string; namedCurve?: string } | undefined;
  if (algorithm?.name === 'ECDSA' && algorithm.namedCurve === 'P-256') return 'ES256';
  if (algorithm?.name === 'RSA-PSS') return 'PS256';
  if (algorithm?.name === 'Ed25519') return 'EdDSA';
  throw new TypeError(
    'privateKeyJwt.key must be a P-256, RSA or Ed25519 private key (or give privateKeyJwt.alg)',
  );
};

/** Signs client assertions (RFC 7523 3) with jose: iss and sub the client id, aud the token endpoint. */
export const assertionSigner = (clientId: string, audience: string, options: PrivateKeyJwtOptions) => {
  const alg = algorithmOf(options.key, options.alg);
  const key: Promise<CryptoKey | KeyObject | Uint8Array> =
    typeof (options.key as JWK).kty === 'string'
      ? importJWK(options.key as JWK, alg)
      : Promise.resolve(options.key as CryptoKey);
  return async (): Promise<string> =>
    new SignJWT({ jti: randomUUID() })
      .setProtectedHeader({ alg, kid: options.kid, typ: 'JWT' })
      .setIssuer(clientId)
      .setSubject(clientId)
      .setAudience(audience)
      .setIssuedAt()
      // Short: the service refuses an assertion that lives more than 60 s.
      .setExpirationTime('55s')
      .sign(await key);
};

/**
 * DPoP proofs (RFC 9449 4) for one key pair: `htm` and `htu` of the request (no query or
 * fragment), a new `jti` each time, `ath` for a resource request, and the last server nonce seen.
 */
export class DpopProver {
  readonly #keys: Promise<{ publicJwk: JWK; privateKey: CryptoKey | KeyObject; alg: KeyAlgorithm }>;
  #nonce: string | undefined;

  constructor(option: DpopOption) {
    this.#keys = (async () => {
      const pair = option === true ? await generateKeyPair('ES256') : option;
      const publicJwk = await exportJWK(pair.publicKey);
      const alg = algorithmOf(publicJwk, undefined);
      const { kty, crv, x, y, n, e } = publicJwk;
      return {
        // Only the public members: a proof must never carry the private key.
        publicJwk: Object.fromEntries(
          Object.entries({ kty, crv, x, y, n, e }).filter(([, value]) => value !== undefined),
        ) as JWK,
        privateKey: pair.privateKey,
        alg,
      };
    })();
  }

  /** The JWK thumbprint the service binds tokens to (cnf.jkt). */
  async thumbprint(): Promise<string> {
    return calculateJwkThumbprint((await this.#keys).publicJwk);
  }

  async proof(method: string, url: string, accessToken?: string): Promise<string> {
    const { publicJwk, privateKey, alg } = await this.#keys;
    const target = new URL(url);
    const claims: Record<string, string> = {
      htm: method.toUpperCase(),
      htu: `${target.protocol}//${target.host}${target.pathname}`,
      jti: randomUUID(),
    };
    if (accessToken !== undefined) {
      claims.ath = createHash('sha256').update(accessToken, 'ascii').digest('base64url');
    }
    if (this.#nonce !== undefined) claims.nonce = this.#nonce;
    return new SignJWT(claims)
      .setProtectedHeader({ alg, typ: 'dpop+jwt', jwk: publicJwk })
      .setIssuedAt()
      .sign(privateKey);
  }

  /** Keeps the nonce a response offers (DPoP-Nonce), for the next proofs. */
  remember(response: Response): void {
    const nonce = response.headers.get('DPoP-Nonce');
    if (nonce !== null && nonce !== '') this.#nonce = nonce;
  }
}

/** Whether a refusal asks for a (new) server nonce: 400 at the token endpoint, 401 at a resource. */
export const asksForNonce = (response: Response, body?: unknown): boolean =>
  response.headers.has('DPoP-Nonce') &&
  ((body as { error?: unknown } | undefined)?.error === 'use_dpop_nonce' ||
    /error="use_dpop_nonce"/.test(response.headers.get('WWW-Authenticate') ?? ''));
