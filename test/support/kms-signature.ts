import { constants, type KeyObject, privateEncrypt } from 'node:crypto';

// The DER prefix of a SHA-256 DigestInfo (RFC 8017 9.2).
const SHA256_DIGEST_INFO = Buffer.from('3031300d060960864801650304020105000420', 'hex');

/** What KMS answers Sign with RSASSA_PKCS1_V1_5_SHA_256 and MessageType DIGEST: PKCS#1 v1.5 over the digest. */
export const kmsRsaSignatureOfDigest = (privateKey: KeyObject, digest: Uint8Array): Buffer =>
  privateEncrypt(
    { key: privateKey, padding: constants.RSA_PKCS1_PADDING },
    Buffer.concat([SHA256_DIGEST_INFO, digest]),
  );
