import type { SigningKeyScheduleStore, TokenKeys, TokenSigner } from '#domain/access/ports';
import {
  effectiveSigningKeys,
  type JsonWebKeySet,
  type SigningKeySchedule,
} from '#domain/access/token-signer';

/**
 * How long a function keeps the schedule it read. A rotation waits longer than this (and than
 * the key set's max-age) between publishing a key and signing with it, and keeps the old key
 * this much longer than a token lives, so no function ever signs with a key another does not trust.
 */
export const SIGNING_KEY_SCHEDULE_CACHE_SECONDS = 30;

/** Without a stored schedule (no rotation yet), the stack's oldest key signs alone. */
export const initialSchedule = (heldKeyIds: readonly string[]): SigningKeySchedule => {
  const [oldest] = heldKeyIds;
  if (oldest === undefined) throw new Error('No signing key: SIGNING_KEY_IDS is empty');
  return { keys: [{ keyId: oldest, signsFrom: new Date(0).toISOString() }], revision: 0 };
};

export interface ScheduledKeysOptions {
  schedule: SigningKeyScheduleStore;
  /** The KMS keys this stack holds (SIGNING_KEY_IDS), oldest first: no other key is used. */
  heldKeyIds: readonly string[];
  /** One signer per key, each reading its public key once. */
  signerFor: (keyId: string) => TokenSigner;
  now?: () => Date;
}

/**
 * The token keys on AWS: which KMS key signs and which the key set publishes follow the stored
 * schedule (read at most every SIGNING_KEY_SCHEDULE_CACHE_SECONDS), so the token function, the
 * key set and the authorizer change keys by the clock, not by a deploy reaching them one by one.
 */
export const scheduledKeys = (options: ScheduledKeysOptions): TokenKeys => {
  const now = options.now ?? (() => new Date());
  const signers = new Map<string, TokenSigner>();
  const signerFor = (keyId: string): TokenSigner => {
    if (!options.heldKeyIds.includes(keyId)) {
      throw new Error(
        `The signing key schedule names ${keyId}, which is not one of this stack's keys (${options.heldKeyIds.join(', ')})`,
      );
    }
    let signer = signers.get(keyId);
    if (signer === undefined) {
      signer = options.signerFor(keyId);
      signers.set(keyId, signer);
    }
    return signer;
  };

  let read: { schedule: Promise<SigningKeySchedule>; at: number } | undefined;
  const schedule = (): Promise<SigningKeySchedule> => {
    const time = now().getTime();
    if (read === undefined || time - read.at >= SIGNING_KEY_SCHEDULE_CACHE_SECONDS * 1000) {
      const reading = options.schedule.get().then(
        (stored) => stored ?? initialSchedule(options.heldKeyIds),
        (error: unknown) => {
          // A failed read is not kept: the next invocation reads again.
          read = undefined;
          throw error;
        },
      );
      read = { schedule: reading, at: time };
    }
    return read.schedule;
  };

  // The same key set object while the published keys stay the same, so verifiers keep their cache.
  let jwks: { published: string; set: Promise<JsonWebKeySet> } | undefined;
  return {
    signingKey: async () => signerFor(effectiveSigningKeys(await schedule(), now()).signing),
    publicJwks: async () => {
      const { published } = effectiveSigningKeys(await schedule(), now());
      const names = published.join(',');
      if (jwks?.published !== names) {
        const set = Promise.all(published.map((keyId) => signerFor(keyId).publicJwks())).then((sets) => ({
          keys: sets.flatMap((each) => each.keys),
        }));
        set.catch(() => {
          if (jwks?.set === set) jwks = undefined;
        });
        jwks = { published: names, set };
      }
      return jwks.set;
    },
  };
};
