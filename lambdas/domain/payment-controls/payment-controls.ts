import * as z from 'zod/mini';
import { CLIENT_ID_PATTERN } from '../access/client.ts';
import type { InvalidParam } from '../commons/errors.ts';
import { boundedText, described, identifierText, optionalField } from '../commons/text.ts';
import { AMOUNT_PATTERN, accountIdSchema, currencySchema } from '../credit-transfers/credit-transfer.ts';
import { isActiveCurrency } from '../credit-transfers/currencies.ts';
import { minorUnitViolation } from '../credit-transfers/money-rules.ts';

/**
 * A tenant's payment controls (docs/approvals.md): the rules that make a transfer wait for
 * approval, how long it may wait, and the limits on what its accounts may pay.
 */

export const MAX_APPROVAL_RULES = 50;
export const MAX_LIMITS = 100;
export const DEFAULT_APPROVAL_EXPIRY = 'P7D';
const MIN_EXPIRY_SECONDS = 60;
const MAX_EXPIRY_SECONDS = 30 * 86_400;

const positiveAmount = () =>
  z.string().check(
    z.maxLength(23),
    z.regex(
      AMOUNT_PATTERN,
      'must be a decimal with up to 13 integer and 8 fractional digits, ending in a digit',
    ),
    z.refine((value) => !value.startsWith('-') && /[1-9]/.test(value), 'must be greater than zero'),
  );

export const approvalRuleSchema = z.strictObject({
  name: described(boundedText(1, 100), 'Names the rule in every transfer it holds for approval; unique.'),
  currency: optionalField(
    currencySchema,
    'Matches transfers in this currency, and those that name none (they may be in it).',
  ),
  minimumAmount: optionalField(
    positiveAmount(),
    'Matches transfers of at least this amount, in the rule’s currency (which it then requires).',
  ),
  paymentMethod: optionalField(boundedText(1, 35), 'Matches transfers with this paymentMethod.'),
  debtorAccountId: optionalField(accountIdSchema, 'Matches transfers from this account.'),
  newCreditorOnly: optionalField(
    z.boolean(),
    'When true, matches transfers to a creditorAccountId the debtor account has never paid before.',
  ),
  initiatingClientId: optionalField(
    identifierText(1, 64).check(z.regex(CLIENT_ID_PATTERN, 'must be a client id')),
    'Matches transfers initiated by this client.',
  ),
  approvalsRequired: described(
    z.int().check(z.gte(1), z.lte(3)),
    'Approvals by other clients of the tenant the transfer needs (1 to 3).',
  ),
});
export type ApprovalRule = z.infer<typeof approvalRuleSchema>;

export const LIMIT_PERIODS = ['transaction', 'day', 'month'] as const;
export const BREACH_ACTIONS = ['approval', 'reject'] as const;

export const limitSchema = z.strictObject({
  debtorAccountId: optionalField(
    accountIdSchema,
    'The account limited; without it, every account of the tenant, each counted on its own.',
  ),
  currency: described(currencySchema, 'The currency of the transfers the limit counts.'),
  period: described(z.enum(LIMIT_PERIODS), 'One transfer, or a calendar day or month in UTC.'),
  maxAmount: optionalField(positiveAmount(), 'The most the transfers of a period may add up to.'),
  maxCount: optionalField(z.int().check(z.gte(1), z.lte(1_000_000)), 'The most transfers a period may have.'),
  onBreach: described(
    z.enum(BREACH_ACTIONS),
    'A transfer past the limit waits for approval, or is rejected (AM14, amount exceeds agreed limit).',
  ),
});
export type Limit = z.infer<typeof limitSchema>;

export const paymentControlsSchema = z.strictObject({
  approvalRules: z._default(z.array(approvalRuleSchema).check(z.maxLength(MAX_APPROVAL_RULES)), []),
  approvalExpiry: z._default(
    described(
      z.string().check(z.maxLength(32)),
      'ISO 8601 duration a pending transfer waits for its approvals, from PT1M to P30D (default P7D).',
    ),
    DEFAULT_APPROVAL_EXPIRY,
  ),
  limits: z._default(z.array(limitSchema).check(z.maxLength(MAX_LIMITS)), []),
});
export type PaymentControls = z.output<typeof paymentControlsSchema>;

export const EMPTY_PAYMENT_CONTROLS: PaymentControls = {
  approvalRules: [],
  approvalExpiry: DEFAULT_APPROVAL_EXPIRY,
  limits: [],
};

const DURATION = /^P(?:(\d{1,6})W)?(?:(\d{1,6})D)?(?:T(?:(\d{1,7})H)?(?:(\d{1,8})M)?(?:(\d{1,9})S)?)?$/;

/**
 * Seconds of an ISO 8601 duration in weeks, days, hours, minutes and seconds; undefined for
 * anything else. Years and months are refused: their length depends on when they start.
 */
export const durationSeconds = (duration: string): number | undefined => {
  const match = DURATION.exec(duration);
  if (match === null || duration === 'P' || duration.endsWith('T')) return undefined;
  const [weeks, days, hours, minutes, seconds] = match.slice(1).map((part) => Number(part ?? 0));
  return (
    (weeks ?? 0) * 7 * 86_400 +
    (days ?? 0) * 86_400 +
    (hours ?? 0) * 3600 +
    (minutes ?? 0) * 60 +
    (seconds ?? 0)
  );
};

const currencyViolations = (at: string, currency: string | undefined): InvalidParam[] =>
  currency !== undefined && !isActiveCurrency(currency)
    ? [{ name: `${at}.currency`, reason: 'must be an active ISO 4217 currency code' }]
    : [];

/** Rules of a controls document beyond the shape of its fields, each problem named. */
export const paymentControlsViolations = (controls: PaymentControls): InvalidParam[] => {
  const violations: InvalidParam[] = [];
  const names = new Set<string>();
  controls.approvalRules.forEach((rule, index) => {
    const at = `approvalRules[${index}]`;
    if (names.has(rule.name))
      violations.push({ name: `${at}.name`, reason: 'must be unique among the rules' });
    names.add(rule.name);
    violations.push(...currencyViolations(at, rule.currency));
    if (rule.minimumAmount !== undefined) {
      if (rule.currency === undefined) {
        violations.push({ name: `${at}.currency`, reason: 'is required with minimumAmount' });
      } else if (isActiveCurrency(rule.currency)) {
        const reason = minorUnitViolation(rule.minimumAmount, rule.currency);
        if (reason !== undefined) violations.push({ name: `${at}.minimumAmount`, reason });
      }
    }
  });
  const seconds = durationSeconds(controls.approvalExpiry);
  if (seconds === undefined) {
    violations.push({
      name: 'approvalExpiry',
      reason: 'must be an ISO 8601 duration in weeks, days, hours, minutes or seconds (P7D, PT12H)',
    });
  } else if (seconds < MIN_EXPIRY_SECONDS || seconds > MAX_EXPIRY_SECONDS) {
    violations.push({ name: 'approvalExpiry', reason: 'must be from PT1M to P30D' });
  }
  const limitKeys = new Set<string>();
  controls.limits.forEach((limit, index) => {
    const at = `limits[${index}]`;
    violations.push(...currencyViolations(at, limit.currency));
    if (limit.maxAmount === undefined && limit.maxCount === undefined) {
      violations.push({ name: at, reason: 'must have maxAmount, maxCount or both' });
    }
    if (limit.maxAmount !== undefined && isActiveCurrency(limit.currency)) {
      const reason = minorUnitViolation(limit.maxAmount, limit.currency);
      if (reason !== undefined) violations.push({ name: `${at}.maxAmount`, reason });
    }
    if (limit.period === 'transaction' && limit.maxCount !== undefined) {
      violations.push({ name: `${at}.maxCount`, reason: 'needs a period of day or month' });
    }
    const key = JSON.stringify([limit.debtorAccountId ?? null, limit.currency, limit.period]);
    if (limitKeys.has(key)) {
      violations.push({ name: at, reason: 'repeats the account, currency and period of an earlier limit' });
    }
    limitKeys.add(key);
  });
  return violations;
};

/** How long a pending transfer waits, in milliseconds (the document is valid). */
export const approvalExpiryMs = (controls: PaymentControls): number =>
  (durationSeconds(controls.approvalExpiry) ?? 0) * 1000;
