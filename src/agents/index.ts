/** The agents layer: profiles of agent CLIs, starting them in panes, and reading their screens. */
export { AgentCatalog, BUILTIN_PROFILES, AGENT_FILES } from './catalog.js';
export { defineProfile, writeHomeFiles, versionSupportOf, type VersionSupport, type AgentProfile, type SandboxOptions, type LaunchAdditions } from './profile.js';
export { startAgent, firstRunPolicyOf, defaultBinaryDirs, decideDialog, DEFAULT_FIRST_RUN_POLICY, READY_SETTLE_MS, DIALOG_SETTLE_MS, DIALOG_REPEAT_MS, type AgentLaunchOptions, type AgentStart, type AnsweredDialog, type FirstRunPolicy } from './launch.js';
export { pressKeys, KEY_INTERVAL_MS } from './input.js';
export { sendPrompt, type PromptTarget } from './prompt.js';
export { detectScreen, type Detection, type Evidence, type ScreenKind, type ScreenRows } from './detect.js';
export { findAgentBinary, agentVersion } from './binary.js';
export { profileSchema, type ProfileData, type ProfileInput, type Screens, type Dialog } from './schema.js';
export { parseVersion, satisfies } from './version-range.js';
export { lowestMatchOf } from './detect.js';
export { classifyScreen, type Classification, type ScreenState } from './classify.js';
export { AgentStateTracker, AGENT_STATES, IDLE_SETTLE_MS, type AgentState, type StateChange, type StateTrackerOptions } from './state-tracker.js';
export { parseApproval, optionFor, meaningOfLabel, type ApprovalRequest, type ApprovalOption, type ToolKind, type AnswerMeaning } from './approval-request.js';
export { TOOL_KINDS, type ApprovalRequestSpec } from './schema.js';
export { answerDialog, chooseMenuOption, menuChoiceFor, nextMenuKey, untilScreen, MENU_STEP_TIMEOUT_MS, type MenuChoice } from './dialog-answer.js';
export { readStatusFile, statusFilePath, type SelfReport, type StatusFileSpec } from './status-file.js';
export { CI_MARKER_ENV, agentUnsetEnv, checkSandbox, headlessAgentEnv, seedSandbox, type HeadlessEnvOptions, type SandboxRequest } from './agent-env.js';
