import type { APIGatewayProxyResult } from 'aws-lambda';
import {
  type ApprovalDependencies,
  decideApproval as decide,
} from '#domain/payment-controls/decide-approval';
import { callerOf, jsonResponse } from '#shared/http-event';
import { jsonHttpHandler } from '#shared/http-handler';
import type { JsonEvent } from '#shared/middleware';
import { approvalDependencies } from './approval-dependencies.ts';
import { idempotencyKey } from './request-headers.ts';

/** The token's `jti` and DPoP thumbprint, as the authorizer hands them on (kept with the decision). */
export const tokenOf = (event: JsonEvent) => {
  const context = (event.requestContext.authorizer ?? {}) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  return { tokenId: text(context.tokenId), dpopThumbprint: text(context.dpopThumbprint) };
};

export const decideApproval =
  (dependencies: () => ApprovalDependencies) =>
  async (event: JsonEvent): Promise<APIGatewayProxyResult> => {
    const { tenant, clientId } = callerOf(event);
    const key = idempotencyKey(event);
    const { tokenId, dpopThumbprint } = tokenOf(event);
    const { creditTransfer, replayed } = await decide(dependencies(), {
      tenant,
      clientId,
      paymentId: event.pathParameters?.paymentId,
      body: event.jsonBody,
      ...(key !== undefined && { idempotencyKey: key }),
      ...(tokenId !== undefined && { tokenId }),
      ...(dpopThumbprint !== undefined && { dpopThumbprint }),
    });
    return jsonResponse(200, creditTransfer, replayed ? { 'Idempotent-Replayed': 'true' } : {});
  };

export const handler = jsonHttpHandler(decideApproval(approvalDependencies));
