/** `va-sandbox` as a library: a sandbox inside a test suite, its typed client, receivers and scenarios. */
export { startSandbox, type StartedSandbox, type StartSandboxOptions } from './sandbox/runtime/start-sandbox.js';
export * from './client/api-client.js';
export { startReceiver, type ReceivedCallback, type Receiver, type ReceiverOptions } from './sandbox/delivery/receiver.js';
export {
  loadScenarioFile,
  runScenarios,
  ScenarioFileError,
  type LoadedScenario,
  type RunEvent,
  type RunOptions,
  type RunResult,
  type ScenarioResult,
  type StepResult,
} from './sandbox/scenarios/scenario-runner.js';
export { junitReport } from './sandbox/scenarios/junit.js';
export { scenarioSchema, SCENARIO_VERSION, type Scenario, type ScenarioStep } from './core/scenarios/index.js';
export { accountExportSchema, type AccountExport } from './core/account-export/index.js';
export {
  clientCashinCallbackSchema,
  vaCallbackSchema,
  vaPaymentObjectSchema,
  type ClientCashinCallback,
  type VaCallback,
} from './core/callbacks/callbacks.js';
export { startServer, type RunningServer, type ServerOptions } from './sandbox/http/server.js';
