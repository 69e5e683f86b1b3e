import { createHash, createPublicKey, generateKeyPairSync, type JsonWebKey, sign, verify } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetPublicKeyCommand, SignCommand } from '@aws-sdk/client-kms';
import { calculateJwkThumbprint, compactVerify, jwtVerify } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tokenKeysFromEnvironment } from '#adapters/access/signer';
import { type KmsSend, kmsSigner } from '#adapters/access/signer-kms';
import {
  ensureLocalSigningKey,
  LOCAL_KEY_RELOAD_MILLISECONDS,
  localKeyFiles,
  privateKeySigner,
} from '#adapters/access/signer-local';
import { SIGNING_KEY_SCHEDULE_CACHE_SECONDS, scheduledKeys } from '#adapters/access/signing-keys-kms';
import { signJwt } from '#domain/access/jwt';
import type { SigningKeyScheduleStore, TokenSigner } from '#domain/access/ports';
import {
  jwkThumbprint,
  rsaSigningJwk,
  type SigningKeySchedule,
  signingJwk,
} from '#domain/access/token-signer';
import { kmsRsaSignatureOfDigest } from '../../support/kms-signature.ts';
import { testPrivateKey } from './fakes.ts';

const verifies = async (signer: TokenSigner, input = Buffer.from('header.payload')): Promise<boolean> => {
  const signature = await signer.sign(input);
  const [jwk] = (await signer.publicJwks()).keys;
  return verify('sha256', input, createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' }), signature);
};

describe('jwkThumbprint', () => {
  it('matches the example of RFC 7638 section 3.1', () => {
    const n =
      '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw';

    expect(jwkThumbprint({ e: 'AQAB', n })).toBe('NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
  });
});

describe('the local signer', () => {
  const directory = () => mkdtempSync(join(tmpdir(), 'signing-key-'));

  it('creates a PKCS#8 key readable by its owner only', () => {
    const path = join(directory(), 'nested', 'signing-key.pem');

    ensureLocalSigningKey(path);

    expect(readFileSync(path, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('keeps an existing key', () => {
    const path = join(directory(), 'signing-key.pem');
    const pem = testPrivateKey().export({ type: 'pkcs8', format: 'pem' });
    writeFileSync(path, pem);

    ensureLocalSigningKey(path);

    expect(readFileSync(path, 'utf8')).toBe(pem);
  });

  it("signs a new data folder's tokens ES256 from its first key, and an RS256 key file kept RS256", async () => {
    const fresh = join(directory(), 'signing-key.pem');
    ensureLocalSigningKey(fresh);
    const kept = join(directory(), 'signing-key.pem');
    writeFileSync(kept, testPrivateKey().export({ type: 'pkcs8', format: 'pem' }));
    ensureLocalSigningKey(kept);

    const algorithmOf = async (path: string) => {
      const keys = localKeyFiles({ current: path, previous: `${path}.previous` });
      const token = await signJwt({ sub: 'client' }, await keys.signingKey());
      const { keys: published } = await keys.publicJwks();
      return {
        header: JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString()).alg,
        published,
      };
    };
    expect(await algorithmOf(fresh)).toMatchObject({
      header: 'ES256',
      published: [{ kty: 'EC', crv: 'P-256', alg: 'ES256' }],
    });
    expect(await algorithmOf(kept)).toMatchObject({
      header: 'RS256',
      published: [{ kty: 'RSA', alg: 'RS256' }],
    });
  });

  const pemOf = (key = testPrivateKey()) => key.export({ type: 'pkcs8', format: 'pem' }).toString();
  const kidOf = (key = testPrivateKey()) => rsaSigningJwk(createPublicKey(key)).kid;

  it('signs RS256 with the key of the file and publishes it under its thumbprint', async () => {
    const path = join(directory(), 'signing-key.pem');
    writeFileSync(path, pemOf());
    const keys = localKeyFiles({ current: path, previous: `${path}.previous` });

    const { keys: published } = await keys.publicJwks();
    const signer = await keys.signingKey();

    expect(published).toEqual([rsaSigningJwk(createPublicKey(testPrivateKey()))]);
    expect(published[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', e: 'AQAB' });
    expect(await signer.keyId()).toBe(published[0]?.kid);
    expect(await verifies(signer)).toBe(true);
  });

  it('publishes the previous key beside the current one, which alone signs', async () => {
    const folder = directory();
    const previousKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    writeFileSync(join(folder, 'current.pem'), pemOf());
    writeFileSync(join(folder, 'previous.pem'), pemOf(previousKey));
    const keys = localKeyFiles({
      current: join(folder, 'current.pem'),
      previous: join(folder, 'previous.pem'),
    });

    expect((await keys.publicJwks()).keys.map((key) => key.kid)).toEqual([kidOf(), kidOf(previousKey)]);
    expect(await (await keys.signingKey()).keyId()).toBe(kidOf());
  });

  it('follows a rotation and a retirement made while it runs, within a second', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const folder = directory();
      const current = join(folder, 'current.pem');
      const previous = join(folder, 'previous.pem');
      const oldKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
      writeFileSync(current, pemOf(oldKey));
      const keys = localKeyFiles({ current, previous });
      expect(await (await keys.signingKey()).keyId()).toBe(kidOf(oldKey));

      renameSync(current, previous);
      writeFileSync(current, pemOf());
      vi.advanceTimersByTime(LOCAL_KEY_RELOAD_MILLISECONDS);
      expect(await (await keys.signingKey()).keyId()).toBe(kidOf());
      expect((await keys.publicJwks()).keys.map((key) => key.kid)).toEqual([kidOf(), kidOf(oldKey)]);

      unlinkSync(previous);
      vi.advanceTimersByTime(LOCAL_KEY_RELOAD_MILLISECONDS);
      expect((await keys.publicJwks()).keys.map((key) => key.kid)).toEqual([kidOf()]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('names the file it cannot read', async () => {
    const keys = localKeyFiles({ current: '/nonexistent/signing-key.pem' });

    await expect(keys.signingKey()).rejects.toThrow('/nonexistent/signing-key.pem');
  });
});

describe('the KMS signer', () => {
  const privateKey = testPrivateKey();
  const publicKeyDer = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });

  const fakeKms = (keyDescription: Record<string, unknown> = {}) => {
    const calls: string[] = [];
    // The SDK's commands: binary fields are bytes.
    const send = async (command: unknown) => {
      if (command instanceof GetPublicKeyCommand) {
        const { input } = command;
        calls.push(`GetPublicKey ${input.KeyId}`);
        return {
          KeyId: input.KeyId,
          KeySpec: 'RSA_2048',
          KeyUsage: 'SIGN_VERIFY',
          SigningAlgorithms: ['RSASSA_PKCS1_V1_5_SHA_256', 'RSASSA_PSS_SHA_256'],
          PublicKey: new Uint8Array(publicKeyDer),
          ...keyDescription,
        };
      }
      if (command instanceof SignCommand) {
        const { KeyId, Message, MessageType, SigningAlgorithm } = command.input;
        calls.push(`Sign ${KeyId} ${MessageType} ${SigningAlgorithm}`);
        return {
          Signature: new Uint8Array(kmsRsaSignatureOfDigest(privateKey, Message ?? new Uint8Array())),
        };
      }
      throw new Error('unexpected operation');
    };
    return { kms: { send } as KmsSend, calls };
  };

  it('signs the SHA-256 digest with RSASSA_PKCS1_V1_5_SHA_256, verifiable as RS256', async () => {
    const { kms, calls } = fakeKms();
    const signer = kmsSigner('alias/token-signing', kms);

    expect(await verifies(signer)).toBe(true);
    expect(calls).toContain('Sign alias/token-signing DIGEST RSASSA_PKCS1_V1_5_SHA_256');
  });

  it('publishes the KMS public key as a JWK with its thumbprint as kid', async () => {
    const signer = kmsSigner('key-1', fakeKms().kms);

    expect(await signer.publicJwks()).toEqual({ keys: [rsaSigningJwk(createPublicKey(privateKey))] });
  });

  it('reads the public key once', async () => {
    const { kms, calls } = fakeKms();
    const signer = kmsSigner('key-1', kms);

    await signJwt({ sub: 'a' }, signer);
    await signJwt({ sub: 'b' }, signer);
    await signer.publicJwks();

    expect(calls.filter((call) => call.startsWith('GetPublicKey'))).toHaveLength(1);
  });

  it('refuses a key that signs neither RSASSA_PKCS1_V1_5_SHA_256 nor ECDSA_SHA_256 on P-256', async () => {
    const signer = kmsSigner(
      'key-1',
      fakeKms({ KeySpec: 'ECC_NIST_P384', SigningAlgorithms: ['ECDSA_SHA_384'] }).kms,
    );

    await expect(signer.keyId()).rejects.toThrow(/not an RSA or ECC_NIST_P256 SIGN_VERIFY key/);
  });

  it('tries again after a failed public key read', async () => {
    const { kms } = fakeKms();
    let failures = 1;
    const flaky = {
      send: async (command: unknown) => {
        if (failures-- > 0) throw new Error('ThrottlingException');
        return kms.send(command as SignCommand);
      },
    } as KmsSend;
    const signer = kmsSigner('key-1', flaky);

    await expect(signer.keyId()).rejects.toThrow('ThrottlingException');
    await expect(signer.keyId()).resolves.toBe(jwkThumbprint(rsaSigningJwk(createPublicKey(privateKey))));
  });
});

describe('the KMS signer with an ECC_NIST_P256 key', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  /** KMS signs a digest; node cannot, so the fake looks up the message the test signs. */
  const messages = new Map<string, Buffer>();
  const kms = {
    send: async (command: unknown) => {
      if (command instanceof GetPublicKeyCommand) {
        return {
          KeySpec: 'ECC_NIST_P256',
          KeyUsage: 'SIGN_VERIFY',
          SigningAlgorithms: ['ECDSA_SHA_256'],
          PublicKey: new Uint8Array(publicKey.export({ format: 'der', type: 'spki' })),
        };
      }
      if (command instanceof SignCommand) {
        expect(command.input).toMatchObject({ MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' });
        const message = messages.get(Buffer.from(command.input.Message ?? new Uint8Array()).toString('hex'));
        if (message === undefined) throw new Error('unknown digest');
        // DER, as KMS returns ECDSA signatures.
        return { Signature: new Uint8Array(sign('sha256', message, privateKey)) };
      }
      throw new Error('unexpected operation');
    },
  } as KmsSend;

  it('signs ES256: the DER signature of KMS becomes the 64-byte r||s a JWS carries', async () => {
    const signer = kmsSigner('key-ec', kms);
    const header = Buffer.from(JSON.stringify({ alg: 'ES256', kid: await signer.keyId() })).toString(
      'base64url',
    );
    const input = `${header}.${Buffer.from('{"sub":"a"}').toString('base64url')}`;
    messages.set(createHash('sha256').update(input).digest('hex'), Buffer.from(input));

    const signature = await signer.sign(Buffer.from(input));

    expect(signature).toHaveLength(64);
    expect(await signer.algorithm()).toBe('ES256');
    expect(await signer.publicJwks()).toEqual({ keys: [signingJwk(publicKey)] });
    const { payload } = await compactVerify(`${input}.${signature.toString('base64url')}`, publicKey, {
      algorithms: ['ES256'],
    });
    expect(Buffer.from(payload).toString()).toBe('{"sub":"a"}');
  });
});

describe('a local ES256 key', () => {
  it('signs tokens jose verifies as ES256, with an EC P-256 JWK whose kid is its RFC 7638 thumbprint', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const signer = privateKeySigner(privateKey);
    const token = await signJwt({ sub: 'a' }, signer);

    const { protectedHeader } = await jwtVerify(token, publicKey, { algorithms: ['ES256'] });
    expect(protectedHeader).toEqual({ alg: 'ES256', typ: 'JWT', kid: await signer.keyId() });
    const [jwk] = (await signer.publicJwks()).keys;
    expect(jwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(jwk?.kid).toBe(await calculateJwkThumbprint(jwk as never));
  });

  it('refuses an EC key on another curve', () => {
    expect(() => privateKeySigner(generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey)).toThrow(
      /not P-256/,
    );
  });
});

describe('the scheduled KMS keys', () => {
  const T0 = new Date('2031-05-06T07:00:00.000Z');
  const keyPairs = new Map(
    ['key-a', 'key-b'].map((id) => [id, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey]),
  );
  const kidOf = (id: string) => rsaSigningJwk(createPublicKey(keyPairs.get(id) as never)).kid;
  const signerFor = (id: string): TokenSigner => {
    const signer = privateKeySigner(keyPairs.get(id) as never);
    return {
      keyId: signer.keyId,
      algorithm: signer.algorithm,
      sign: signer.sign,
      publicJwks: signer.publicJwks,
    };
  };
  const storeOf = (schedule: SigningKeySchedule | undefined) => {
    const store = { schedule, reads: 0 } as { schedule: SigningKeySchedule | undefined; reads: number };
    const port: SigningKeyScheduleStore = {
      get: async () => {
        store.reads++;
        return store.schedule;
      },
      put: async () => true,
    };
    return { store, port };
  };
  const ROTATION: SigningKeySchedule = {
    revision: 1,
    keys: [
      { keyId: 'key-a', signsFrom: '1970-01-01T00:00:00.000Z', retiresAt: '2031-05-06T08:10:00.000Z' },
      { keyId: 'key-b', signsFrom: '2031-05-06T07:06:00.000Z' },
    ],
  };

  it('without a stored schedule, signs with the oldest key of the stack alone', async () => {
    const keys = scheduledKeys({
      schedule: storeOf(undefined).port,
      heldKeyIds: ['key-a', 'key-b'],
      signerFor,
      now: () => T0,
    });

    expect(await (await keys.signingKey()).keyId()).toBe(kidOf('key-a'));
    expect((await keys.publicJwks()).keys.map((key) => key.kid)).toEqual([kidOf('key-a')]);
  });

  it('publishes the next key before it signs, switches by the clock, then retires the old one', async () => {
    let now = T0;
    const keys = scheduledKeys({
      schedule: storeOf(ROTATION).port,
      heldKeyIds: ['key-a', 'key-b'],
      signerFor,
      now: () => now,
    });
    const at = async (iso: string) => {
      now = new Date(iso);
      return {
        signs: await (await keys.signingKey()).keyId(),
        published: (await keys.publicJwks()).keys.map((key) => key.kid),
      };
    };

    expect(await at('2031-05-06T07:05:59.000Z')).toEqual({
      signs: kidOf('key-a'),
      published: [kidOf('key-a'), kidOf('key-b')],
    });
    expect(await at('2031-05-06T07:06:00.000Z')).toEqual({
      signs: kidOf('key-b'),
      published: [kidOf('key-b'), kidOf('key-a')],
    });
    expect(await at('2031-05-06T08:10:00.000Z')).toEqual({
      signs: kidOf('key-b'),
      published: [kidOf('key-b')],
    });
  });

  it('reads the schedule at most once per cache period', async () => {
    let now = T0;
    const { store, port } = storeOf(undefined);
    const keys = scheduledKeys({ schedule: port, heldKeyIds: ['key-a', 'key-b'], signerFor, now: () => now });
    await keys.signingKey();
    await keys.publicJwks();
    store.schedule = ROTATION;
    now = new Date(T0.getTime() + (SIGNING_KEY_SCHEDULE_CACHE_SECONDS - 1) * 1000);
    expect((await keys.publicJwks()).keys).toHaveLength(1);
    expect(store.reads).toBe(1);

    now = new Date(T0.getTime() + SIGNING_KEY_SCHEDULE_CACHE_SECONDS * 1000);
    expect((await keys.publicJwks()).keys).toHaveLength(2);
    expect(store.reads).toBe(2);
  });

  it('refuses a schedule that names a key the stack does not hold', async () => {
    const keys = scheduledKeys({
      schedule: storeOf(ROTATION).port,
      heldKeyIds: ['key-a'],
      signerFor,
      now: () => T0,
    });

    await expect(keys.publicJwks()).rejects.toThrow(/key-b, which is not one of this stack's keys/);
  });
});

describe('tokenKeysFromEnvironment', () => {
  const saved = {
    SIGNING_KEY_IDS: process.env.SIGNING_KEY_IDS,
    LOCAL_SIGNING_KEY_FILE: process.env.LOCAL_SIGNING_KEY_FILE,
    LOCAL_PREVIOUS_SIGNING_KEY_FILE: process.env.LOCAL_PREVIOUS_SIGNING_KEY_FILE,
  };
  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('fails clearly when neither SIGNING_KEY_IDS nor LOCAL_SIGNING_KEY_FILE is set', () => {
    delete process.env.SIGNING_KEY_IDS;
    delete process.env.LOCAL_SIGNING_KEY_FILE;

    expect(() => tokenKeysFromEnvironment()).toThrow(/SIGNING_KEY_IDS.*LOCAL_SIGNING_KEY_FILE/);
  });

  it('uses the key files when SIGNING_KEY_IDS is not set, one instance per file', async () => {
    delete process.env.SIGNING_KEY_IDS;
    const path = join(mkdtempSync(join(tmpdir(), 'signing-key-')), 'key.pem');
    writeFileSync(path, testPrivateKey().export({ type: 'pkcs8', format: 'pem' }));
    process.env.LOCAL_SIGNING_KEY_FILE = path;
    process.env.LOCAL_PREVIOUS_SIGNING_KEY_FILE = `${path}.previous`;

    const keys = tokenKeysFromEnvironment();

    expect(tokenKeysFromEnvironment()).toBe(keys);
    expect(await (await keys.signingKey()).keyId()).toBe(
      rsaSigningJwk(createPublicKey(testPrivateKey())).kid,
    );
  });
});
