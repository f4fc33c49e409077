package io.zerorename.committer.stages;

import java.io.IOException;

import io.zerorename.committer.FencedStatistics;

/**
 * Discard everything this job owns that its commit record (if any) does not name: uploads,
 * task records, the marker, the work area. Idempotent; published output is never touched.
 */
public final class AbortJobStage extends AbstractStage<Void, Void> {

  public AbortJobStage(StageConfig config) {
    super(FencedStatistics.JOB_STAGE_ABORT, config);
  }

  @Override
  protected Void executeStage(Void args) throws IOException {
    new JobClearer(config()).clear(CommitRecords.read(config()), false);
    return null;
  }
}
