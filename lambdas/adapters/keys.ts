/**
 * Every key value of the single table is built here. Tenants match TENANT_ID_PATTERN (no '#'),
 * so a tenant prefix can never be forged by an id that follows it.
 */
export const TENANT_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export interface TableKey {
  pk: string;
  sk: string;
}

export const creditTransferKey = (tenant: string, paymentId: string): TableKey => ({
  pk: `TENANT#${tenant}#CT#${paymentId}`,
  sk: 'CREDIT_TRANSFER',
});

export const clientKey = (clientId: string): TableKey => ({
  pk: `CLIENT#${clientId}`,
  sk: 'CLIENT',
});
