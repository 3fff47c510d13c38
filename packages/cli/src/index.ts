export { runDemo } from './demo';
export type { DemoOptions, DemoResult } from './demo';
