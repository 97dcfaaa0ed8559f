/** `va-sandbox` as a library: a sandbox inside a test suite, its typed client, receivers and scenarios. */

export * from './client/api-client.js';
export { type AccountExport, accountExportSchema } from './core/account-export/index.js';
export {
  type ClientCashinCallback,
  clientCashinCallbackSchema,
  type VaCallback,
  vaCallbackSchema,
  vaPaymentObjectSchema,
} from './core/callbacks/callbacks.js';
export { SCENARIO_VERSION, type Scenario, type ScenarioStep, scenarioSchema } from './core/scenarios/index.js';
export {
  type ReceivedCallback,
  type Receiver,
  type ReceiverOptions,
  startReceiver,
} from './sandbox/delivery/receiver.js';
export { type RunningServer, type ServerOptions, startServer } from './sandbox/http/server.js';
export { type StartedSandbox, type StartSandboxOptions, startSandbox } from './sandbox/runtime/start-sandbox.js';
export { junitReport } from './sandbox/scenarios/junit.js';
export {
  type LoadedScenario,
  loadScenarioFile,
  type RunEvent,
  type RunOptions,
  type RunResult,
  runScenarios,
  ScenarioFileError,
  type ScenarioResult,
  type StepResult,
} from './sandbox/scenarios/scenario-runner.js';
