import type { InvalidParam } from '../commons/errors.ts';
import type { MessageTransaction } from './pain001.ts';

/**
 * The SEPA profile: the service's own rules on top of ISO's schema, applied to a transaction whose
 * service level (its own `PmtTpInf/SvcLvl`, else its group's) is `SEPA`, and to no other. ISO's
 * schema takes every currency, character and charge bearer; a payment that asks for SEPA must be
 * one SEPA can carry (EPC SEPA Credit Transfer rulebook): in euro, in the Latin character set,
 * charges following the service level. Each refusal names the profile.
 */
export const SEPA_SERVICE_LEVEL = 'SEPA';

/** EPC's Latin character set: letters, digits, space and / - ? : ( ) . , ' + */
const LATIN_CHARACTER_SET = /^[A-Za-z0-9/\-?:().,'+ \n]*$/;

const PROFILE = 'under the SEPA profile (service level SEPA)';

/** Every text of the transfer with its field name: `creditor.name`, `identifiers[0].number`. */
const texts = (value: unknown, field: string): [string, string][] => {
  if (typeof value === 'string') return [[field, value]];
  if (Array.isArray(value)) return value.flatMap((item, index) => texts(item, `${field}[${index}]`));
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([key, item]) =>
      texts(item, field === '' ? key : `${field}.${key}`),
    );
  return [];
};

export const isSepaTransaction = (transaction: MessageTransaction): boolean =>
  (transaction.transfer.paymentProcessing as { serviceLevel?: unknown } | undefined)?.serviceLevel ===
  SEPA_SERVICE_LEVEL;

/** The SEPA profile's faults of one transaction, each named by the XML path it came from. */
export const sepaProfileViolations = (
  transaction: MessageTransaction,
  nameOf: (field: string) => string,
): InvalidParam[] => {
  if (!isSepaTransaction(transaction)) return [];
  const { transfer } = transaction;
  const violations: InvalidParam[] = [];
  if (transfer.currency !== 'EUR')
    violations.push({ name: nameOf('currency'), reason: `must be EUR ${PROFILE}` });
  if (transfer.chargeBearerType !== undefined && transfer.chargeBearerType !== 'FollowingServiceLevel')
    violations.push({ name: nameOf('chargeBearerType'), reason: `must be SLEV ${PROFILE}` });
  for (const [field, text] of texts(transfer, ''))
    if (!LATIN_CHARACTER_SET.test(text))
      violations.push({
        name: nameOf(field),
        reason: `must use only the Latin character set (A-Z a-z 0-9 space / - ? : ( ) . , ' +) ${PROFILE}`,
      });
  return violations;
};
