import { stackIam } from '#local/iam-policies';

/**
 * Global setup: the IAM policies of the stages ready before any local service starts (each start
 * checks its functions' calls against its stage's, `prod` unless LOCAL_IAM_STAGE says otherwise;
 * the tests compare `dev`'s too). Instant when lib/ has not changed since the last synthesis;
 * otherwise one synthesis per stage here, not one per service start.
 */
export default function setup(): void {
  stackIam('prod');
  stackIam('dev');
}
