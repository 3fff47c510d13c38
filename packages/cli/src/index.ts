export { runDemo } from './demo';
export type { DemoOptions, DemoResult } from './demo';
export { BACKEND_SCHEMES, createBackend, createMigratingBackend, redactUrl } from './backend-url';
export { runCli, cliVersion } from './cli';
export { EXIT } from './cli-errors';
export type { CampaignEvent } from './commands/campaign';
