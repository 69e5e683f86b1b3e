import { constants, createPublicKey, type JsonWebKey, privateEncrypt, verify } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetPublicKeyCommand, SignCommand } from '@aws-sdk/client-kms';
import { afterEach, describe, expect, it } from 'vitest';
import { signerFromEnvironment } from '#adapters/signer';
import { type KmsSend, kmsSigner } from '#adapters/signer-kms';
import { ensureLocalSigningKey, localFileSigner } from '#adapters/signer-local';
import { signJwt } from '#auth/jwt';
import type { TokenSigner } from '#domain/ports';
import { jwkThumbprint, rsaSigningJwk } from '#domain/token-signer';
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

  it('signs RS256 with the key of the file and publishes it under its thumbprint', async () => {
    const path = join(directory(), 'signing-key.pem');
    writeFileSync(path, testPrivateKey().export({ type: 'pkcs8', format: 'pem' }));
    const signer = localFileSigner(path);

    const { keys } = await signer.publicJwks();

    expect(keys).toEqual([rsaSigningJwk(createPublicKey(testPrivateKey()))]);
    expect(keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', e: 'AQAB' });
    expect(await signer.keyId()).toBe(keys[0]?.kid);
    expect(await verifies(signer)).toBe(true);
  });

  it('names the file it cannot read', async () => {
    const signer = localFileSigner('/nonexistent/signing-key.pem');

    await expect(signer.keyId()).rejects.toThrow('/nonexistent/signing-key.pem');
  });
});

describe('the KMS signer', () => {
  const privateKey = testPrivateKey();
  const publicKeyDer = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  // RSASSA-PKCS1-v1_5 over a digest, as KMS computes it for MessageType DIGEST.
  const SHA256_DIGEST_INFO = Buffer.from('3031300d060960864801650304020105000420', 'hex');

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
        const digestInfo = Buffer.concat([SHA256_DIGEST_INFO, Buffer.from(Message ?? new Uint8Array())]);
        return {
          Signature: new Uint8Array(
            privateEncrypt({ key: privateKey, padding: constants.RSA_PKCS1_PADDING }, digestInfo),
          ),
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

  it('refuses a key that does not sign RSASSA_PKCS1_V1_5_SHA_256', async () => {
    const signer = kmsSigner(
      'key-1',
      fakeKms({ KeySpec: 'ECC_NIST_P256', SigningAlgorithms: ['ECDSA_SHA_256'] }).kms,
    );

    await expect(signer.keyId()).rejects.toThrow(/not an RSA SIGN_VERIFY key/);
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

describe('signerFromEnvironment', () => {
  const saved = {
    KMS_KEY_ID: process.env.KMS_KEY_ID,
    LOCAL_SIGNING_KEY_FILE: process.env.LOCAL_SIGNING_KEY_FILE,
  };
  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('fails clearly when neither KMS_KEY_ID nor LOCAL_SIGNING_KEY_FILE is set', () => {
    delete process.env.KMS_KEY_ID;
    delete process.env.LOCAL_SIGNING_KEY_FILE;

    expect(() => signerFromEnvironment()).toThrow(/KMS_KEY_ID.*LOCAL_SIGNING_KEY_FILE/);
  });

  it('uses the key file when KMS_KEY_ID is not set, one signer per file', async () => {
    delete process.env.KMS_KEY_ID;
    const path = join(mkdtempSync(join(tmpdir(), 'signing-key-')), 'key.pem');
    writeFileSync(path, testPrivateKey().export({ type: 'pkcs8', format: 'pem' }));
    process.env.LOCAL_SIGNING_KEY_FILE = path;

    const signer = signerFromEnvironment();

    expect(signerFromEnvironment()).toBe(signer);
    expect(await signer.keyId()).toBe(rsaSigningJwk(createPublicKey(testPrivateKey())).kid);
  });
});
