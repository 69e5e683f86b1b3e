import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CREDIT_TRANSFER_STATUSES } from '#domain/credit-transfers/credit-transfer-status';
import { STATUS_REASONS } from '#domain/credit-transfers/lifecycle';
import {
  STATUS_REASON_CODE_PATTERN,
  STATUS_REASON_CODES,
  statusReasonCodeOf,
  statusReasonNameOf,
  transactionStatusCodeOf,
} from '#domain/iso20022/status-codes';
import { CODE_SET_RELEASE, STATUS_REASON_CODE_SET } from '#domain/iso20022/status-reason-code-set';

const CODE_SETS = 'lambdas/domain/iso20022/code-sets';

describe('ISO 20022 status codes', () => {
  it('maps each status to its transaction status code', () => {
    expect(CREDIT_TRANSFER_STATUSES.map(transactionStatusCodeOf)).toEqual([
      'PDNG',
      'RCVD',
      'ACTC',
      'ACCP',
      'ACSP',
      'ACSC',
      'RJCT',
      'CANC',
    ]);
  });

  it.each([
    ['ClosedAccountNumber', 'AC04'],
    ['BlockedAccount', 'AC06'],
    ['InsufficientFunds', 'AM04'],
    ['TransactionForbidden', 'AG01'],
    ['RegulatoryReason', 'RR04'],
    ['DuplicatePayment', 'DUPL'],
    ['RequestedByCustomer', 'CUST'],
    ['InvalidFileFormat', 'FF01'],
    ['ZeroAmount', 'AM01'],
    ['NotSpecifiedReasonAgentGenerated', 'MS03'],
  ])('gives %s the code %s', (reason, code) => {
    expect(statusReasonCodeOf(reason)).toBe(code);
    expect(statusReasonNameOf(code)).toBe(reason);
  });

  it('gives every reason the service sets a code of its own, none NARR', () => {
    for (const reason of Object.values(STATUS_REASONS)) expect(statusReasonCodeOf(reason)).not.toBe('NARR');
  });

  it('keeps an ISO code the rail gave, even where its reason has a code of its own', () => {
    expect(statusReasonCodeOf('CreditorBankNotRegistered', 'DNOR')).toBe('DNOR');
    expect(statusReasonCodeOf('InsufficientFunds', 'AM14')).toBe('AM14');
    expect(statusReasonCodeOf('SomethingElse')).toBe('NARR');
  });

  it('never passes on a code outside ISO’s set', () => {
    expect(statusReasonCodeOf('SomethingElse', 'ZZ99')).toBe('NARR');
    expect(statusReasonNameOf('ZZ99')).toBeUndefined();
  });

  it('reads every code of ExternalStatusReason1Code, with its ISO Name, from ISO’s file', () => {
    const xsd = readFileSync(`${CODE_SETS}/ExternalCodeSets_${CODE_SET_RELEASE}.xsd`, 'utf8');
    const set = xsd.slice(xsd.indexOf('<xs:simpleType name="ExternalStatusReason1Code">'));
    const block = set.slice(0, set.indexOf('</xs:simpleType>'));
    const codes = [...block.matchAll(/<xs:enumeration value="(\w+)">/g)].map(([, code]) => code);
    expect(codes).toHaveLength(271);
    expect(STATUS_REASON_CODES).toEqual(codes);
    for (const code of STATUS_REASON_CODES) expect(code).toMatch(STATUS_REASON_CODE_PATTERN);
    expect(STATUS_REASON_CODE_SET.AM04).toBe('InsufficientFunds');
    expect(STATUS_REASON_CODE_SET.NARR).toBe('Narrative');
  });

  it('keeps ISO’s code set files byte for byte as their source lists them', () => {
    const sources = readFileSync(`${CODE_SETS}/SOURCES.md`, 'utf8');
    const rows = [...sources.matchAll(/^\| `([^`]+)` \| `([0-9a-f]{64})` \|/gm)];
    expect(rows.map(([, file]) => file)).toEqual([
      `ExternalCodeSets_${CODE_SET_RELEASE}.xsd`,
      `ExternalCodeSets_${CODE_SET_RELEASE}.json`,
    ]);
    for (const [, file, sha256] of rows) {
      const digest = createHash('sha256')
        .update(readFileSync(`${CODE_SETS}/${file}`))
        .digest('hex');
      expect(digest, file).toBe(sha256);
    }
  });
});
