/** One client's decision on a pending transfer, as kept (the token and key it came with included). */
export interface ApprovalDecision {
  clientId: string;
  decision: 'approve' | 'reject';
  reason?: string;
  at: string;
  /** The access token's `jti`. */
  tokenId?: string;
  /** The DPoP key thumbprint (RFC 7638) the token was bound to, when it was. */
  dpopThumbprint?: string;
  idempotencyKey?: string;
}

/** What a transfer held for approval waits for: the rule that holds it, and the decisions so far. */
export interface PendingApproval {
  rule: string;
  /** The client that initiated the transfer: the one client of the tenant that may not decide (absent on older transfers). */
  initiatingClientId?: string;
  approvalsRequired: number;
  approvals: ApprovalDecision[];
  expiresAt: string;
}

/** The approval object of a transfer as clients see it (status, list). */
export const approvalView = (approval: PendingApproval) => ({
  rule: approval.rule,
  ...(approval.initiatingClientId !== undefined && { initiatingClientId: approval.initiatingClientId }),
  approvalsRequired: approval.approvalsRequired,
  approvals: approval.approvals.map(({ clientId, decision, reason, at }) => ({
    clientId,
    decision,
    ...(reason !== undefined && { reason }),
    at,
  })),
  expiresAt: approval.expiresAt,
});

/**
 * The approval as it stood at `date` (ISO 8601, UTC): the decisions taken by then. An event about a
 * change reads the same whenever it is recorded, however many decisions came after it.
 */
export const approvalViewAt = (approval: PendingApproval, date: string) =>
  approvalView({ ...approval, approvals: approval.approvals.filter((entry) => entry.at <= date) });

export const approvalsGiven = (approval: PendingApproval): number =>
  approval.approvals.filter((entry) => entry.decision === 'approve').length;

export const isRejected = (approval: PendingApproval): boolean =>
  approval.approvals.some((entry) => entry.decision === 'reject');

export const isApproved = (approval: PendingApproval): boolean =>
  approvalsGiven(approval) >= approval.approvalsRequired;

export const isExpired = (approval: PendingApproval, now: Date): boolean =>
  Date.parse(approval.expiresAt) <= now.getTime();
