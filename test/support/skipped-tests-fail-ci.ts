/**
 * A vitest reporter for CI: a test that did not run is a failure there. Suites skip themselves on a
 * developer's machine when a model, photograph, server binary or interpreter is missing (with a
 * notice); on the CI machine every one of those is installed, so a skip there means a dependency
 * vanished and the run must say so instead of passing with less checked. At the end of the run it
 * lists every skipped or todo test with the notice its file printed, and sets a failing exit code.
 */
import type { UserConsoleLog } from "vitest";
import type { Reporter, TestCase, TestModule, TestSpecification, Vitest } from "vitest/node";

/** The notices the skip helpers print (test-assets.ts, redis-server.ts, postgres-server.ts, ...). */
const skipNotice = /SKIPPED|\[notice\]/;

export class SkippedTestsFailCi implements Reporter {
  private readonly noticesByTask = new Map<string, string[]>();
  private filteredByName = false;

  onInit(vitest: Vitest): void {
    // `-t pattern` skips the tests it does not match on purpose; those are not a vanished dependency.
    this.filteredByName = vitest.config.testNamePattern !== undefined;
  }

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    // So do `file.test.ts:LINE` and the other filters within a file.
    this.filteredByName ||= specifications.some(
      (spec) => spec.testLines?.length || spec.testIds?.length || spec.testTagsFilter?.length || spec.testNamePattern,
    );
  }

  onUserConsoleLog(log: UserConsoleLog): void {
    if (log.taskId === undefined || !skipNotice.test(log.content)) return;
    const notices = this.noticesByTask.get(log.taskId) ?? [];
    notices.push(log.content.trim());
    this.noticesByTask.set(log.taskId, notices);
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    if (this.filteredByName) return;
    const lines: string[] = [];
    for (const testModule of testModules) {
      const skipped = [...testModule.children.allTests()].filter((test) => test.result().state === "skipped");
      if (skipped.length === 0) continue;
      lines.push(`  ${testModule.relativeModuleId}`);
      for (const notice of this.noticesIn(testModule, skipped)) lines.push(`    why: ${notice}`);
      for (const test of skipped) lines.push(`    - ${test.fullName} (${skipReason(test)})`);
    }
    if (lines.length === 0) return;
    process.exitCode = 1;
    process.stderr.write(
      `\nCI runs every test, but these did not run (install what the notices name; a skip is a failure in CI):\n${lines.join("\n")}\n\n`,
    );
  }

  private noticesIn(testModule: TestModule, tests: TestCase[]): string[] {
    const ids = [testModule.id, ...tests.map((test) => test.id), ...[...testModule.children.allSuites()].map((suite) => suite.id)];
    return [...new Set(ids.flatMap((id) => this.noticesByTask.get(id) ?? []))];
  }
}

function skipReason(test: TestCase): string {
  const result = test.result();
  if (result.state === "skipped" && result.note) return `skipped: ${result.note}`;
  if (test.options.mode === "todo") return "todo";
  return "skipped by skipIf/runIf or skip";
}
