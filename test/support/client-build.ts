import { ensureBuilt } from '../../client/scripts/built-cli.mjs';

/**
 * The CLI tests run the CLI as `npm run cli` does, from client/dist: built here once, before any
 * test file starts, when a client source is newer (never by several CLI processes at once).
 */
export default function setup(): void {
  ensureBuilt();
}
