/** `switchboard doctor`: is each agent CLI found, is its version known, and is it read right live. */
export { runDoctor, DEFAULT_STEP_TIMEOUT_MS, DEFAULT_DOCTOR_SIZE, type DoctorOptions } from './doctor.js';
export type { DoctorReport, AgentReport, AgentVerdict } from './report.js';
export { DOCTOR_STEPS, DOCTOR_SCENARIO, LONG_PROMPT_BYTES, longPrompt, type DoctorStep } from './checks.js';
export { runLiveCheck, type LiveCheck, type LiveCheckOptions, type StepReport, type CheckedApproval } from './live-check.js';
export { UNREAD_SCREEN_MS, type SeenState, type SeenScreen, type UnreadSpell } from './screen-watch.js';
