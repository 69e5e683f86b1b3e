import { createApp } from './credit-transfer-app.ts';

// `cdk synth` / `cdk deploy` run this file; the CLI synthesizes the app when the process ends.
// A setting that cannot work is reported as its one-line reason, not a stack trace.
try {
  createApp();
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
