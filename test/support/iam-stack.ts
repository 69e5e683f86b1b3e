import { stackIam } from '#local/iam-policies';

/**
 * Global setup: the stack's IAM policies ready before any local service starts (each start
 * checks its functions' calls against them). Instant when lib/ has not changed since the last
 * synthesis; otherwise one synthesis here, not one per service start.
 */
export default function setup(): void {
  stackIam();
}
