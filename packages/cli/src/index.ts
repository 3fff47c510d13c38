export { runDemo } from './demo';
export type { DemoOptions, DemoResult } from './demo';
export { BACKEND_SCHEMES, createBackend, parseZookeeperUrl, redactUrl } from './backend-url';
