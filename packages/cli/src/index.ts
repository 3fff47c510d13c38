/**
 * The `conclave` command as a library: `createBackend(url)` over every installed backend package,
 * `runCli`, the demo, and the types of the command's JSON output.
 *
 * @module @conclave/cli
 */
export { runDemo } from './demo';
export type { DemoOptions, DemoResult } from './demo';
export { BACKEND_SCHEMES, createBackend, createMigratingBackend, redactUrl } from './backend-url';
export { runCli, cliVersion } from './cli';
export { EXIT } from './cli-errors';
export type { CampaignEvent } from './commands/campaign';
