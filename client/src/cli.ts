#!/usr/bin/env node
import { main } from './cli/program.ts';

process.exitCode = await main(process.argv);
