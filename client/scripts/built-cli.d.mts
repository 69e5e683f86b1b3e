/** The built CLI, client/dist/cli.js. */
export declare const BUILT_CLI: string;
/** True when client/dist/cli.js is missing or older than a source of the client. */
export declare const isStale: () => boolean;
/** Builds client/dist afresh, swapped in whole. */
export declare const build: () => void;
/** Builds client/dist when stale; true when it built. */
export declare const ensureBuilt: () => boolean;
