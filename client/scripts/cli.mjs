#!/usr/bin/env node
// `npm run cli`: the CLI from built JavaScript, built first when its sources changed.
import { pathToFileURL } from 'node:url';
import { BUILT_CLI, ensureBuilt } from './built-cli.mjs';

ensureBuilt();
await import(pathToFileURL(BUILT_CLI).href);
