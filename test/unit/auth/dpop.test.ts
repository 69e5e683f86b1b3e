import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { accessTokenHash, dpopNonce, InvalidDpopProofError, verifyDpopProof } from '#domain/access/dpop';

/**
 * One DPoP proof's checks (RFC 9449 4.3), each at its bound: a proof one step inside is accepted,
 * one step outside refused with the reason.
 */
/** The bounds as docs/authentication.md gives them, written out so that a changed constant shows. */
const DPOP_PROOF_WINDOW_SECONDS = 60;
const DPOP_PROOF_CLOCK_SKEW_SECONDS = 10;
const NONCE_LIFETIME_SECONDS = 300;
const NOW = new Date('2031-05-06T07:08:09.000Z');
const NOW_SECONDS = NOW.getTime() / 1000;
const URL_ = 'https://api.example.test/v1/payments/credit-transfers';
const TOKEN = 'access-token-of-the-client';
const NONCE_SECRET = 'nonce-secret';

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
let privateKey: PrivateKey;
let publicJwk: JWK;
let rsa: { privateKey: PrivateKey; publicJwk: JWK } | undefined;
const rsaPair = async () => {
  if (rsa === undefined) {
    const pair = await generateKeyPair('PS256', { extractable: true });
    rsa = { privateKey: pair.privateKey, publicJwk: await exportJWK(pair.publicKey) };
  }
  return rsa;
};

beforeAll(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  privateKey = pair.privateKey;
  publicJwk = await exportJWK(pair.publicKey);
});

const proof = (claims: Record<string, unknown> = {}, jwk: JWK = publicJwk) =>
  new SignJWT({ htm: 'POST', htu: URL_, iat: NOW_SECONDS, jti: 'proof-1', ...claims })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
    .sign(privateKey);

const verify = async (
  claims: Record<string, unknown> = {},
  expected: Partial<Parameters<typeof verifyDpopProof>[1]> = {},
) => verifyDpopProof(await proof(claims), { method: 'POST', url: URL_, now: NOW, ...expected });

const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(InvalidDpopProofError);
  expect((error as Error).name).toBe('InvalidDpopProofError');
  return error as InvalidDpopProofError;
};

describe('a DPoP proof', () => {
  it('is accepted for its method and URL, and names its key, its jti and when it goes stale', async () => {
    const verified = await verify();
    expect(verified).toEqual({
      jkt: await calculateJwkThumbprint(publicJwk),
      jti: 'proof-1',
      staleAt: NOW_SECONDS + DPOP_PROOF_WINDOW_SECONDS + DPOP_PROOF_CLOCK_SKEW_SECONDS,
    });
  });

  it('is refused for another method', async () => {
    expect((await refusal(verify({ htm: 'GET' }))).message).toBe('the DPoP proof is for another method');
    expect((await refusal(verify({}, { method: 'GET' }))).message).toMatch(/another method/);
  });

  it('is refused for another URL, the query and fragment aside', async () => {
    expect((await refusal(verify({ htu: `${URL_}/other` }))).message).toMatch(/another URL/);
    expect((await refusal(verify({ htu: 'not a url' }))).message).toMatch(/htu is not a URL/);
    await expect(verify({}, { url: `${URL_}?limit=2#top` })).resolves.toMatchObject({ jti: 'proof-1' });
  });

  it(`is fresh for ${DPOP_PROOF_WINDOW_SECONDS} s after its iat, and up to ${DPOP_PROOF_CLOCK_SKEW_SECONDS} s ahead of this clock`, async () => {
    const oldest = NOW_SECONDS - DPOP_PROOF_WINDOW_SECONDS;
    await expect(verify({ iat: oldest })).resolves.toMatchObject({
      staleAt: NOW_SECONDS + DPOP_PROOF_WINDOW_SECONDS + DPOP_PROOF_CLOCK_SKEW_SECONDS,
    });
    expect((await refusal(verify({ iat: oldest - 1 }))).message).toBe('the DPoP proof is too old');

    const newest = NOW_SECONDS + DPOP_PROOF_CLOCK_SKEW_SECONDS;
    // Stale a whole window after its iat, however far ahead it ran.
    await expect(verify({ iat: newest })).resolves.toMatchObject({
      staleAt: newest + DPOP_PROOF_WINDOW_SECONDS + DPOP_PROOF_CLOCK_SKEW_SECONDS,
    });
    expect((await refusal(verify({ iat: newest + 1 }))).message).toBe('the DPoP proof iat is in the future');
  });

  it('needs a jti of 1 to 256 characters', async () => {
    await expect(verify({ jti: 'j'.repeat(256) })).resolves.toMatchObject({ jti: 'j'.repeat(256) });
    expect((await refusal(verify({ jti: 'j'.repeat(257) }))).message).toMatch(/jti must be 1 to 256/);
    expect((await refusal(verify({ jti: '' }))).message).toMatch(/jti must be 1 to 256/);
    expect((await refusal(verify({ jti: 7 }))).message).toMatch(/jti must be 1 to 256/);
  });

  it("carries the hash of the access token presented with it, not any token's", async () => {
    await expect(verify({ ath: accessTokenHash(TOKEN) }, { accessToken: TOKEN })).resolves.toBeDefined();
    expect(
      (await refusal(verify({ ath: accessTokenHash('another-token') }, { accessToken: TOKEN }))).message,
    ).toBe('the DPoP proof ath is not the hash of this access token');
    expect((await refusal(verify({}, { accessToken: TOKEN }))).message).toMatch(/ath is not the hash/);
  });

  it.each([
    ['d', 'ES256'],
    ['k', 'ES256'],
    ['p', 'PS256'],
    ['q', 'PS256'],
    ['dp', 'PS256'],
    ['dq', 'PS256'],
    ['qi', 'PS256'],
    ['oth', 'PS256'],
  ] as const)(
    'is refused when the key in its header carries the private member %s (%s)',
    async (member, alg) => {
      const pair = alg === 'ES256' ? { privateKey, publicJwk } : await rsaPair();
      const value = member === 'oth' ? [{ r: 'AQAB', d: 'AQAB', t: 'AQAB' }] : 'AQAB';
      const withPrivate = { ...pair.publicJwk, [member]: value } as JWK;
      const signed = await new SignJWT({ htm: 'POST', htu: URL_, iat: NOW_SECONDS, jti: 'proof-1' })
        .setProtectedHeader({ alg, typ: 'dpop+jwt', jwk: withPrivate })
        .sign(pair.privateKey);
      // The same proof with the public key alone is accepted: the private member is the reason.
      const { [member]: _private, ...publicOnly } = withPrivate;
      const error = await refusal(verifyDpopProof(signed, { method: 'POST', url: URL_, now: NOW }));
      // jose itself refuses a key with `d` (it is a private key); the others only this check does.
      expect(error.message).toMatch(member === 'd' ? /private key|not valid/ : /carries a private key/);
      const accepted = await new SignJWT({ htm: 'POST', htu: URL_, iat: NOW_SECONDS, jti: 'proof-1' })
        .setProtectedHeader({ alg, typ: 'dpop+jwt', jwk: publicOnly })
        .sign(pair.privateKey);
      await expect(verifyDpopProof(accepted, { method: 'POST', url: URL_, now: NOW })).resolves.toBeDefined();
    },
  );

  it('is refused when it is no JWT, or signed by another key than the one in its header', async () => {
    await refusal(verifyDpopProof('not.a.jwt', { method: 'POST', url: URL_, now: NOW }));
    await refusal(verifyDpopProof('  ', { method: 'POST', url: URL_, now: NOW }));
    const other = await exportJWK((await generateKeyPair('ES256', { extractable: true })).publicKey);
    expect(
      (await refusal(verifyDpopProof(await proof({}, other), { method: 'POST', url: URL_, now: NOW })))
        .message,
    ).toMatch(/not valid/);
  });
});

describe('a DPoP proof as jose reads it', () => {
  const signedWith = (header: Record<string, unknown>, claims: Record<string, unknown>) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: publicJwk, ...header })
      .sign(privateKey);
  const claims = { htm: 'POST', htu: URL_, iat: NOW_SECONDS, jti: 'proof-1' };
  const expected = { method: 'POST', url: URL_, now: NOW };

  it('is missing when absent or blank, and read without the blanks around it', async () => {
    expect((await refusal(verifyDpopProof(undefined, expected))).message).toBe('the DPoP proof is missing');
    expect((await refusal(verifyDpopProof(' \t ', expected))).message).toBe('the DPoP proof is missing');
    await expect(verifyDpopProof(`  ${await proof()}\t`, expected)).resolves.toMatchObject({
      jti: 'proof-1',
    });
  });

  it.each(['iat', 'jti', 'htm', 'htu'])('is refused without its %s claim', async (claim) => {
    const { [claim as keyof typeof claims]: _left, ...others } = claims;
    expect((await refusal(verifyDpopProof(await signedWith({}, others), expected))).message).toMatch(
      new RegExp(
        `^the DPoP proof is not valid \\(ERR_JWT_CLAIM_VALIDATION_FAILED: missing required "${claim}" claim`,
      ),
    );
  });

  it('is refused with another typ, or signed with an algorithm not offered', async () => {
    expect(
      (await refusal(verifyDpopProof(await signedWith({ typ: 'JWT' }, claims), expected))).message,
    ).toMatch(
      /^the DPoP proof is not valid \(ERR_JWT_CLAIM_VALIDATION_FAILED: unexpected "typ" JWT header value\)$/,
    );
    const es384 = await generateKeyPair('ES384', { extractable: true });
    const es384Proof = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES384', typ: 'dpop+jwt', jwk: await exportJWK(es384.publicKey) })
      .sign(es384.privateKey);
    expect((await refusal(verifyDpopProof(es384Proof, expected))).message).toMatch(
      /ERR_JOSE_ALG_NOT_ALLOWED/,
    );
  });

  it('says when it could not be read as a JWT at all', async () => {
    const broken = await signedWith({ jwk: { ...publicJwk, oth: 'not a list' } }, claims);
    expect((await refusal(verifyDpopProof(broken, expected))).message).toBe(
      'the DPoP proof is not valid (it is not a JWT)',
    );
  });
});

describe("a DPoP proof's server nonce", () => {
  const withNonce = (madeAt: Date) =>
    verify({ nonce: dpopNonce(NONCE_SECRET, madeAt) }, { nonceSecret: NONCE_SECRET });
  const secondsFromNow = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);

  it(`is valid for ${NONCE_LIFETIME_SECONDS} s after it was made, and refused after`, async () => {
    await expect(withNonce(NOW)).resolves.toBeDefined();
    await expect(withNonce(secondsFromNow(-NONCE_LIFETIME_SECONDS))).resolves.toBeDefined();
    const stale = await refusal(withNonce(secondsFromNow(-NONCE_LIFETIME_SECONDS - 1)));
    expect(stale).toMatchObject({
      error: 'use_dpop_nonce',
      message: 'the DPoP proof must carry a fresh server nonce',
    });
  });

  it(`may be made up to ${DPOP_PROOF_CLOCK_SKEW_SECONDS} s ahead of this clock, not more`, async () => {
    await expect(withNonce(secondsFromNow(DPOP_PROOF_CLOCK_SKEW_SECONDS))).resolves.toBeDefined();
    expect(await refusal(withNonce(secondsFromNow(DPOP_PROOF_CLOCK_SKEW_SECONDS + 1)))).toMatchObject({
      error: 'use_dpop_nonce',
    });
  });

  it('is refused when missing, made with another secret, or altered', async () => {
    expect(await refusal(verify({}, { nonceSecret: NONCE_SECRET }))).toMatchObject({
      error: 'use_dpop_nonce',
    });
    expect(
      await refusal(verify({ nonce: dpopNonce('another-secret', NOW) }, { nonceSecret: NONCE_SECRET })),
    ).toMatchObject({ error: 'use_dpop_nonce' });
    const nonce = dpopNonce(NONCE_SECRET, NOW);
    const altered = `${nonce.slice(0, -1)}${nonce.endsWith('A') ? 'B' : 'A'}`;
    expect(await refusal(verify({ nonce: altered }, { nonceSecret: NONCE_SECRET }))).toMatchObject({
      error: 'use_dpop_nonce',
    });
    expect(await refusal(verify({ nonce: `${nonce}x` }, { nonceSecret: NONCE_SECRET }))).toMatchObject({
      error: 'use_dpop_nonce',
    });
  });

  it('is refused, not an error, when its time is written with leading zeros', async () => {
    const nonce = dpopNonce(NONCE_SECRET, NOW);
    expect(await refusal(verify({ nonce: `0${nonce}` }, { nonceSecret: NONCE_SECRET }))).toMatchObject({
      error: 'use_dpop_nonce',
    });
  });

  it('is not asked for when the service does not require one', async () => {
    await expect(verify({ nonce: 'anything' })).resolves.toBeDefined();
  });
});
