import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CursorContent, signCursor, verifyCursor } from '#domain/commons/cursor';
import { InvalidRequestError } from '#domain/commons/errors';

const KEY = randomBytes(32);
const CONTENT: CursorContent = {
  after: { createdAt: '2026-03-01T10:00:00.123Z', paymentId: '5f0c7e2a-8a51-4c1b-9a3e-2b7d9c4e1f00' },
  total: 42,
  filters: 'filters-a',
};

const cursorError = (run: () => unknown): InvalidRequestError => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidRequestError);
    const invalid = error as InvalidRequestError;
    expect(invalid.invalidParams.map((param) => param.name)).toEqual(['cursor']);
    return invalid;
  }
  throw new Error('the cursor was accepted');
};

describe('list cursor', () => {
  it('gives back what was signed, for the same tenant and filters', () => {
    const cursor = signCursor(KEY, 'tenant-a', CONTENT);
    expect(verifyCursor(KEY, 'tenant-a', cursor, 'filters-a')).toEqual(CONTENT);
  });

  it('is URL-safe and well under the documented bound', () => {
    const cursor = signCursor(KEY, 'tenant-a', { ...CONTENT, total: 2 ** 40 });
    expect(cursor).toMatch(/^[A-Za-z0-9_.-]+$/);
    expect(cursor.length).toBeLessThan(300);
  });

  it("refuses another tenant's cursor", () => {
    const cursor = signCursor(KEY, 'tenant-a', CONTENT);
    cursorError(() => verifyCursor(KEY, 'tenant-b', cursor, 'filters-a'));
  });

  it('refuses a cursor issued for other filters, and says so', () => {
    const cursor = signCursor(KEY, 'tenant-a', CONTENT);
    const error = cursorError(() => verifyCursor(KEY, 'tenant-a', cursor, 'filters-b'));
    expect(error.invalidParams[0]?.reason).toMatch(/other filters/);
  });

  it('refuses a cursor signed with another key', () => {
    const cursor = signCursor(randomBytes(32), 'tenant-a', CONTENT);
    cursorError(() => verifyCursor(KEY, 'tenant-a', cursor, 'filters-a'));
  });

  it('refuses a cursor whose content was rewritten, even with a well-formed payload', () => {
    const [, signature] = signCursor(KEY, 'tenant-a', CONTENT).split('.');
    const forged = Buffer.from(
      JSON.stringify({ v: 1, a: [CONTENT.after.createdAt, 'other'], t: 1, f: 'filters-a' }),
    );
    cursorError(() =>
      verifyCursor(KEY, 'tenant-a', `${forged.toString('base64url')}.${signature}`, 'filters-a'),
    );
  });

  it('refuses every single-character change', () => {
    const cursor = signCursor(KEY, 'tenant-a', CONTENT);
    fc.assert(
      fc.property(
        fc.nat({ max: cursor.length - 1 }),
        fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ '),
        (index, replacement) => {
          const changed = `${cursor.slice(0, index)}${replacement}${cursor.slice(index + 1)}`;
          fc.pre(changed !== cursor);
          cursorError(() => verifyCursor(KEY, 'tenant-a', changed, 'filters-a'));
        },
      ),
      { numRuns: 300 },
    );
  });

  it.each([
    '',
    'abc',
    'a.b.c',
    '..',
    'eyJ2IjoxfQ.',
    '.c2ln',
    'ab!.cd',
    `${'A'.repeat(600)}.${'B'.repeat(43)}`,
  ])('refuses the malformed cursor %j', (cursor) => {
    cursorError(() => verifyCursor(KEY, 'tenant-a', cursor, 'filters-a'));
  });
});
