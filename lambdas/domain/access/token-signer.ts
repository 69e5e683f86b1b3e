import { createHash, createPublicKey, type KeyObject } from 'node:crypto';

/**
 * The algorithms the service signs its access tokens with: RS256 (the keys made before FAPI 2.0)
 * and ES256 (ECDSA P-256, FAPI 2.0). A key signs with exactly one of them, named by its JWK.
 */
export const TOKEN_SIGNING_ALGORITHMS = ['RS256', 'ES256'] as const;
export type TokenSigningAlgorithm = (typeof TOKEN_SIGNING_ALGORITHMS)[number];

/** A public key of the key set, in the form RFC 7517 gives it; `kid` is its RFC 7638 thumbprint. */
export type RsaSigningJwk = {
  kty: 'RSA';
  n: string;
  e: string;
  kid: string;
  alg: 'RS256';
  use: 'sig';
};

export type EcSigningJwk = {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
  kid: string;
  alg: 'ES256';
  use: 'sig';
};

export type SigningJwk = RsaSigningJwk | EcSigningJwk;

export type JsonWebKeySet = { keys: SigningJwk[] };

/** RFC 7638: SHA-256 over the required members in lexicographic order, without whitespace. */
export const jwkThumbprint = (
  jwk: { kty?: 'RSA'; e: string; n: string } | { kty: 'EC'; crv: string; x: string; y: string },
): string =>
  createHash('sha256')
    .update(
      JSON.stringify(
        jwk.kty === 'EC'
          ? { crv: jwk.crv, kty: 'EC', x: jwk.x, y: jwk.y }
          : { e: jwk.e, kty: 'RSA', n: jwk.n },
      ),
    )
    .digest('base64url');

export const rsaSigningJwk = (publicKey: KeyObject): RsaSigningJwk => {
  const { kty, n, e } = publicKey.export({ format: 'jwk' });
  if (kty !== 'RSA' || n === undefined || e === undefined)
    throw new Error('The token signing key is not an RSA key');
  return { kty: 'RSA', n, e, kid: jwkThumbprint({ e, n }), alg: 'RS256', use: 'sig' };
};

/** The public JWK of a signing key: RSA signs RS256, EC P-256 signs ES256; no other key signs. */
export const signingJwk = (key: KeyObject): SigningJwk => {
  const publicKey = key.type === 'private' ? createPublicKey(key) : key;
  if (publicKey.asymmetricKeyType === 'rsa') return rsaSigningJwk(publicKey);
  const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
  if (kty !== 'EC' || crv !== 'P-256' || x === undefined || y === undefined) {
    throw new Error('The token signing key is neither an RSA key nor an EC P-256 key');
  }
  return {
    kty: 'EC',
    crv: 'P-256',
    x,
    y,
    kid: jwkThumbprint({ kty: 'EC', crv, x, y }),
    alg: 'ES256',
    use: 'sig',
  };
};

/**
 * One key of the signing schedule (AWS): it signs from `signsFrom` until a later key does, and
 * verifies until `retiresAt` (absent: for as long as it is in the schedule). Times are ISO 8601.
 */
export interface ScheduledSigningKey {
  keyId: string;
  signsFrom: string;
  retiresAt?: string;
}

/** Which keys sign and verify, and when: at most the current key and the one before or after it. */
export interface SigningKeySchedule {
  keys: ScheduledSigningKey[];
  /** Counts the changes, so two operators never overwrite each other. */
  revision: number;
}

/** The key that signs at `now`, and the keys the key set publishes (the signing one first). */
export interface EffectiveSigningKeys {
  signing: string;
  published: string[];
}

const at = (iso: string): number => Date.parse(iso);

export const effectiveSigningKeys = (schedule: SigningKeySchedule, now: Date): EffectiveSigningKeys => {
  const time = now.getTime();
  const started = schedule.keys.filter((key) => at(key.signsFrom) <= time);
  const signing = started.reduce<ScheduledSigningKey | undefined>(
    (latest, key) => (latest === undefined || at(key.signsFrom) > at(latest.signsFrom) ? key : latest),
    undefined,
  );
  if (signing === undefined) throw new Error('The signing key schedule has no key that signs now');
  // A key about to sign is published before it does; a retired one no longer is.
  const verifying = schedule.keys.filter(
    (key) => key !== signing && (key.retiresAt === undefined || at(key.retiresAt) > time),
  );
  return { signing: signing.keyId, published: [signing.keyId, ...verifying.map((key) => key.keyId)] };
};

/** How long a rotation waits: before the new key signs, and before the old one is retired. */
export interface RotationTiming {
  /** Until every cache of the key set (clients' and the functions') holds the new key. */
  publishSeconds: number;
  /** After the new key signs: the longest token lifetime, plus the time a function may still sign with the old one. */
  retireAfterSeconds: number;
}

export class SigningKeyScheduleError extends Error {
  override name = 'SigningKeyScheduleError';
}

const plus = (date: Date | string, seconds: number): string =>
  new Date((typeof date === 'string' ? at(date) : date.getTime()) + seconds * 1000).toISOString();

/**
 * The schedule of a rotation to `newKeyId`: published now, signing after `publishSeconds`, the old
 * key retired `retireAfterSeconds` after that. Refused while a rotation is still under way (one
 * key may be published beside the signing one, so a second rotation would cut its tokens off).
 */
export const scheduleRotation = (
  schedule: SigningKeySchedule,
  newKeyId: string,
  now: Date,
  timing: RotationTiming,
): SigningKeySchedule => {
  const { signing, published } = effectiveSigningKeys(schedule, now);
  if (newKeyId === signing) throw new SigningKeyScheduleError(`The key ${newKeyId} signs already`);
  const waiting = schedule.keys.find((key) => at(key.signsFrom) > now.getTime());
  if (waiting !== undefined) {
    throw new SigningKeyScheduleError(
      `A rotation is under way: ${waiting.keyId} signs from ${waiting.signsFrom}; rotate again once the previous key is retired`,
    );
  }
  const retiring = schedule.keys.find((key) => key.keyId !== signing && published.includes(key.keyId));
  if (retiring !== undefined) {
    throw new SigningKeyScheduleError(
      `The previous key ${retiring.keyId} may verify live tokens until ${retiring.retiresAt ?? '(no time set)'}; retire it first (npm run keys -- retire)`,
    );
  }
  const current = schedule.keys.find((key) => key.keyId === signing) as ScheduledSigningKey;
  const signsFrom = plus(now, timing.publishSeconds);
  return {
    revision: schedule.revision + 1,
    keys: [
      { ...current, retiresAt: plus(signsFrom, timing.retireAfterSeconds) },
      { keyId: newKeyId, signsFrom },
    ],
  };
};

/**
 * The schedule without the keys that no longer sign: refused before their `retiresAt` unless
 * `immediately` (a key thought compromised: every token it signed is refused from then on).
 */
export const scheduleRetirement = (
  schedule: SigningKeySchedule,
  now: Date,
  options: { immediately: boolean },
): { schedule: SigningKeySchedule; retired: string[] } => {
  const { signing } = effectiveSigningKeys(schedule, now);
  const waiting = schedule.keys.find((key) => at(key.signsFrom) > now.getTime());
  if (waiting !== undefined) {
    throw new SigningKeyScheduleError(
      `${waiting.keyId} does not sign before ${waiting.signsFrom}; the key that signs until then cannot be retired`,
    );
  }
  const previous = schedule.keys.filter((key) => key.keyId !== signing);
  const early = previous.find((key) => key.retiresAt === undefined || at(key.retiresAt) > now.getTime());
  if (early !== undefined && !options.immediately) {
    throw new SigningKeyScheduleError(
      `${early.keyId} may verify live tokens until ${early.retiresAt ?? '(no time set)'}; retire it after that, or with --now to refuse its tokens at once`,
    );
  }
  return {
    schedule: {
      revision: schedule.revision + 1,
      keys: schedule.keys.filter((key) => key.keyId === signing),
    },
    retired: previous.map((key) => key.keyId),
  };
};
