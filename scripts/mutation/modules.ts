/**
 * The modules mutation testing covers (`npm run mutation`): what guards money and access. The
 * access module's globs name both where its logic lives now and where it is moving
 * (lambdas/auth, lambdas/domain/access, lambdas/adapters/access). A `!` glob takes files out.
 * Plain TypeScript (types only), so that stryker.config.mjs loads it without a compiler.
 */
export const modules: Record<string, readonly string[]> = {
  access: ['lambdas/auth/**/*.ts', 'lambdas/domain/access/**/*.ts', 'lambdas/adapters/access/**/*.ts'],
  domain: ['lambdas/domain/**/*.ts', '!lambdas/domain/access/**/*.ts'],
  'table-writes': [
    'lambdas/adapters/credit-transfers/*store*.ts',
    'lambdas/adapters/webhooks/webhook-store.ts',
    'lambdas/adapters/payment-controls/limit-counters.ts',
  ],
  'webhook-sender': ['lambdas/adapters/webhooks/webhook-sender.ts'],
  'local-iam': ['scripts/local/iam-enforcement.ts', 'scripts/local/iam-policies.ts'],
};
