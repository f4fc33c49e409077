package io.zerorename.committer.stages;

import java.io.IOException;

/**
 * For tests only ({@code fs.zerorename.fenced.test.stop-after=<stage>}): the committer stops
 * right after that stage as if its process had died — nothing more is written, nothing is
 * cleaned up by the committer itself — so a test can check what a rerun finishes.
 */
public class SimulatedCrashException extends IOException {
  private static final long serialVersionUID = 1L;

  public SimulatedCrashException(String stage) {
    super("zerorename fenced: stopped after " + stage + " (fs.zerorename.fenced.test.stop-after,"
        + " a test's simulated crash)");
  }
}
