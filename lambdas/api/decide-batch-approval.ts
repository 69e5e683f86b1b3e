import type { APIGatewayProxyResult } from 'aws-lambda';
import {
  type BatchApprovalDependencies,
  decideBatchApproval as decide,
} from '#domain/payment-controls/decide-batch-approval';
import { callerOf, jsonResponse } from '#shared/http-event';
import { jsonHttpHandler } from '#shared/http-handler';
import type { JsonEvent } from '#shared/middleware';
import { batchApprovalDependencies } from './approval-dependencies.ts';
import { tokenOf } from './decide-approval.ts';
import { idempotencyKey } from './request-headers.ts';

export const decideBatchApproval =
  (dependencies: () => BatchApprovalDependencies) =>
  async (event: JsonEvent): Promise<APIGatewayProxyResult> => {
    const { tenant, clientId } = callerOf(event);
    const key = idempotencyKey(event);
    const { tokenId, dpopThumbprint } = tokenOf(event);
    const result = await decide(dependencies(), {
      tenant,
      clientId,
      batchId: event.pathParameters?.batchId,
      body: event.jsonBody,
      ...(key !== undefined && { idempotencyKey: key }),
      ...(tokenId !== undefined && { tokenId }),
      ...(dpopThumbprint !== undefined && { dpopThumbprint }),
    });
    return jsonResponse(200, result);
  };

export const handler = jsonHttpHandler(decideBatchApproval(batchApprovalDependencies));
