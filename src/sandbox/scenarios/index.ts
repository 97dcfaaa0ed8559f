/** Scenario running: a file's steps over the HTTP API, API faults in scenarios, JUnit reports. */
export type { RunEvent, RunResult, StepResult } from './scenario-runner.js';
