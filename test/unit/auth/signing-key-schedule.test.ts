import { describe, expect, it } from 'vitest';
import {
  effectiveSigningKeys,
  type SigningKeySchedule,
  SigningKeyScheduleError,
  scheduleRetirement,
  scheduleRotation,
} from '#domain/access/token-signer';

/** The signing key schedule a rotation on AWS writes, and what every function reads from it. */
const T0 = new Date('2031-05-06T07:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const TIMING = { publishSeconds: 360, retireAfterSeconds: 3660 };
const ONE_KEY: SigningKeySchedule = {
  revision: 0,
  keys: [{ keyId: 'a', signsFrom: '1970-01-01T00:00:00.000Z' }],
};

describe('a rotation', () => {
  const rotated = scheduleRotation(ONE_KEY, 'b', T0, TIMING);

  it('publishes the new key at once and signs with the old one until the key set caches have renewed', () => {
    expect(effectiveSigningKeys(rotated, T0)).toEqual({ signing: 'a', published: ['a', 'b'] });
    expect(effectiveSigningKeys(rotated, at(359))).toEqual({ signing: 'a', published: ['a', 'b'] });
  });

  it('then signs with the new key, and keeps the old one published for the longest token signed with it', () => {
    expect(effectiveSigningKeys(rotated, at(360))).toEqual({ signing: 'b', published: ['b', 'a'] });
    expect(effectiveSigningKeys(rotated, at(360 + 3659))).toEqual({ signing: 'b', published: ['b', 'a'] });
    expect(effectiveSigningKeys(rotated, at(360 + 3660))).toEqual({ signing: 'b', published: ['b'] });
  });

  it('counts as one change', () => {
    expect(rotated.revision).toBe(1);
  });

  it('is refused while the previous rotation is under way, and to the key that signs already', () => {
    expect(() => scheduleRotation(rotated, 'c', at(10), TIMING)).toThrow(/under way/);
    expect(() => scheduleRotation(rotated, 'c', at(400), TIMING)).toThrow(/retire it first/);
    expect(() => scheduleRotation(ONE_KEY, 'a', T0, TIMING)).toThrow(SigningKeyScheduleError);
  });
});

describe('a retirement', () => {
  const rotated = scheduleRotation(ONE_KEY, 'b', T0, TIMING);

  it("is refused before the old key's tokens can have expired, unless immediately", () => {
    expect(() => scheduleRetirement(rotated, at(1000), { immediately: false })).toThrow(
      /may verify live tokens/,
    );
    const { schedule, retired } = scheduleRetirement(rotated, at(1000), { immediately: true });
    expect(retired).toEqual(['a']);
    expect(effectiveSigningKeys(schedule, at(1000))).toEqual({ signing: 'b', published: ['b'] });
  });

  it('is refused before the new key signs: the old one still does', () => {
    expect(() => scheduleRetirement(rotated, at(10), { immediately: true })).toThrow(/does not sign before/);
  });

  it('drops the old key once its time has come, and lets the next rotation begin', () => {
    const { schedule, retired } = scheduleRetirement(rotated, at(360 + 3660), { immediately: false });
    expect(retired).toEqual(['a']);
    expect(schedule.keys.map((key) => key.keyId)).toEqual(['b']);
    expect(
      effectiveSigningKeys(scheduleRotation(schedule, 'c', at(5000), TIMING), at(5000)).published,
    ).toEqual(['b', 'c']);
  });
});
