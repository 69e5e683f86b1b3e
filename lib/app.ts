import { createApp } from './credit-transfer-app.ts';

// `cdk synth` / `cdk deploy` run this file; the CLI synthesizes the app when the process ends.
createApp();
