import { describe, expect, it } from 'vitest';
import { parseOrThrow } from '#domain/commons/validation';
import type { CreditTransferRequest } from '#domain/credit-transfers/credit-transfer';
import { approvalFor } from '#domain/payment-controls/approval-rules';
import { limitHoldFor, periodBreaches, toCountedUnits } from '#domain/payment-controls/limits';
import { paymentControlsSchema, paymentControlsViolations } from '#domain/payment-controls/payment-controls';
import type { Prices } from '../../../scripts/bench/bill.ts';
import {
  addedByKind,
  addedUsdPerMillion,
  CONTROLS_CONFIGURATIONS,
  controlsBenchTransfer,
  type ServiceFigures,
} from '../../../scripts/bench/payment-controls.ts';

/**
 * The payment-controls bench compares configurations that must each take the ordinary path: a
 * document the service accepts, no approval, no breach. Its figures are only what they say if so.
 */
const documentOf = (controls: Record<string, unknown> | undefined) =>
  parseOrThrow(paymentControlsSchema, controls ?? {}, 'controls');

const transfer = controlsBenchTransfer() as unknown as CreditTransferRequest;
const now = new Date('2026-12-08T10:00:00.000Z');

describe('payment-controls bench configurations', () => {
  it.each(CONTROLS_CONFIGURATIONS.map((configuration) => [configuration.name, configuration] as const))(
    '%s: a valid document that holds the bench transfer for no approval and breaches nothing over a whole run',
    (_name, configuration) => {
      const controls = documentOf(configuration.controls);
      expect(paymentControlsViolations(controls)).toEqual([]);
      expect(approvalFor(controls, { transfer, clientId: 'bench-client' }, now)).toBeUndefined();

      const hold = limitHoldFor(controls, transfer, now, 604_800);
      const limited = (configuration.controls?.limits as unknown[] | undefined)?.length ?? 0;
      if (limited === 0) {
        expect(hold).toBeUndefined();
        return;
      }
      expect(hold?.counters.map((counter) => counter.period)).toEqual(['day', 'month']);
      // A day's bench runs (tens of thousands of transfers) fit well within the limits.
      const amount = toCountedUnits(transfer.amount);
      const usage = { usedUnits: amount * 100_000n, usedCount: 100_000 };
      for (const period of ['day', 'month'] as const)
        expect(periodBreaches(hold?.limits ?? [], period, amount, usage)).toEqual([]);
    },
  );

  it('names an approval rule that is evaluated, and limits, in the configurations compared with none', () => {
    const documents = CONTROLS_CONFIGURATIONS.map((configuration) => documentOf(configuration.controls));
    expect(documents[0]).toMatchObject({ approvalRules: [], limits: [] });
    expect(documents.some((controls) => controls.approvalRules.length > 0)).toBe(true);
    expect(documents.some((controls) => controls.limits.length > 0)).toBe(true);
  });
});

const figures = (byKind: Record<string, number>, units: { readUnits: number; writeUnits: number }) =>
  ({ calls: {}, refused: 0, byKind, ...units }) satisfies ServiceFigures;

describe('payment-controls bench arithmetic', () => {
  it('prices the units added against the baseline at the on-demand prices, per million transfers', () => {
    const prices = {
      dynamoDbWriteRequestUnit: { usd: 0.000000625 },
      dynamoDbReadRequestUnit: { usd: 0.000000125 },
    } as Prices;
    const baseline = figures({}, { readUnits: 1, writeUnits: 8 });
    expect(addedUsdPerMillion(figures({}, { readUnits: 2, writeUnits: 14 }), baseline, prices)).toBeCloseTo(
      6 * 0.625 + 0.125,
      9,
    );
  });

  it("lists what a configuration adds by the service's items, leaving out the local runtime's, clearing's and differences under 0.05", () => {
    const baseline = figures(
      {
        ' Query': 1,
        ' Query units': 0,
        'PAYMENT/CREDIT_TRANSFER GetItem': 4,
        'PAYMENT/CREDIT_TRANSFER GetItem units': 4,
        'LOCAL_EVENT_BUS/OFFSET PutItem': 0.1,
      },
      { readUnits: 5, writeUnits: 39 },
    );
    const limited = figures(
      {
        ' Query': 1.02,
        ' Query units': 1,
        'PAYMENT/CREDIT_TRANSFER GetItem': 4.03,
        'PAYMENT/CREDIT_TRANSFER GetItem units': 4.03,
        'LIMIT_USAGE/USD UpdateItem': 4,
        'LIMIT_USAGE/USD UpdateItem units': 4,
        'PAYMENT/CREDIT_TRANSFER index byStatus': 1,
        'LOCAL_EVENT_BUS/OFFSET PutItem': 0.5,
        'SANDBOX_CLEARING/RECORD UpdateItem': 1,
      },
      { readUnits: 6, writeUnits: 47 },
    );
    expect(addedByKind(limited, baseline)).toEqual([
      'Query +0.02 (+1.00 units)',
      'LIMIT_USAGE/USD UpdateItem +4.00 (+4.00 units)',
      'PAYMENT/CREDIT_TRANSFER index byStatus +1.00 units',
    ]);
    expect(addedByKind(baseline, baseline)).toEqual([]);
  });
});
