import type { RunResult, StepResult } from './scenario-runner.js';

/** A run as JUnit XML, the report CI systems read: a test suite per scenario, a test case per step. */
export function junitReport(run: RunResult): string {
  const seconds = (ms: number) => (ms / 1000).toFixed(3);
  const count = (steps: StepResult[], status: StepResult['status']) => steps.filter((s) => s.status === status).length;
  const all = run.scenarios.flatMap((s) => s.steps);
  const suites = run.scenarios.map((scenario) => {
    const cases = scenario.steps.map((step) => {
      const open = `    <testcase classname="${xml(scenario.name)}" name="${xml(`${step.index + 1}. ${step.label}`)}" time="${seconds(step.durationMs)}"`;
      if (step.status === 'passed') return `${open}/>`;
      const inner =
        step.status === 'skipped'
          ? '      <skipped message="an earlier step failed"/>'
          : `      <failure message="${xml(step.failures[0] ?? 'failed')}" type="${step.kind}">${xml(step.failures.join('\n'))}</failure>`;
      return `${open}>\n${inner}\n    </testcase>`;
    });
    const attributes = [
      `name="${xml(scenario.name)}"`,
      `file="${xml(scenario.file)}"`,
      `tests="${scenario.steps.length}"`,
      `failures="${count(scenario.steps, 'failed')}"`,
      `skipped="${count(scenario.steps, 'skipped')}"`,
      `errors="0"`,
      `time="${seconds(scenario.durationMs)}"`,
    ];
    return [`  <testsuite ${attributes.join(' ')}>`, ...cases, '  </testsuite>'].join('\n');
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="va-sandbox scenarios" tests="${all.length}" failures="${count(all, 'failed')}" skipped="${count(all, 'skipped')}" errors="0" time="${seconds(run.durationMs)}">`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}

/** Text for an XML attribute or element; characters XML 1.0 cannot hold at all are dropped. */
const xml = (text: string): string =>
  text
    .replace(/[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/\n/g, '&#10;');
