/** `switchboard doctor`: is each agent CLI found, is its version known, and is it read right live. */
export { runDoctor, type DoctorOptions } from './doctor.js';
export type { DoctorReport, AgentReport } from './report.js';
export { type StepReport } from './live-check.js';
export { UNREAD_SCREEN_MS } from './screen-watch.js';
