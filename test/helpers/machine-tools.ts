// Tests that need a program of the machine's (Chromium, Node 20) are declared when it is there.
// Without it they are one test, skipped with the reason, except under CI=true, where .ci/run
// provides the program and its absence fails.
import assert from 'node:assert/strict';
import { test } from 'node:test';

export interface MachineTool {
  /** What the tests need, for the failure's title: "browser tests need Chromium". */
  need: string;
  /** Why it is not there, or undefined when it is. */
  missing: string | undefined;
  /** How CI gets it. */
  provision: string;
}

/** Declares suite when the tool is there; otherwise one test titled title, skipped with the reason (failed under CI=true). */
export function withMachineTool({ need, missing, provision }: MachineTool, title: string, suite: () => void): void {
  if (missing && process.env.CI === 'true') {
    test(`${need} (CI=true)`, () => {
      assert.fail(`${missing}; CI=true makes this a failure — ${provision}`);
    });
  } else if (missing) {
    // A skipped test (not a skipped suite) so the run's summary counts it and prints the reason.
    test(title, { skip: missing }, () => {});
  } else {
    suite();
  }
}
