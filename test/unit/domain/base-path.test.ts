import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { basePathOf } from '#shared/http-event';

const eventAt = (requestPath: string, path: string) =>
  ({ path, requestContext: { path: requestPath } }) as unknown as APIGatewayProxyEvent;

describe('basePathOf', () => {
  it('is the stage on the execute-api URL', () => {
    expect(basePathOf(eventAt('/live/v1/payments/credit-transfers', '/v1/payments/credit-transfers'))).toBe(
      '/live',
    );
  });

  it('is the base path mapping behind a custom domain', () => {
    expect(
      basePathOf(eventAt('/payments-api/v1/payments/credit-transfers', '/v1/payments/credit-transfers')),
    ).toBe('/payments-api');
  });

  it('is nothing when the API is served at the root', () => {
    expect(basePathOf(eventAt('/v1/payments/credit-transfers', '/v1/payments/credit-transfers'))).toBe('');
  });
});
