package io.zerorename.committer.stages;

import java.io.IOException;

import io.zerorename.committer.FencedStatistics;
import io.zerorename.committer.records.SuccessData;

/** {@code _SUCCESS}: every committed file (unless marksuccessfuljobs=false). */
public final class SaveSuccessStage extends AbstractStage<SuccessData, Void> {

  public SaveSuccessStage(StageConfig config) {
    super(FencedStatistics.JOB_STAGE_SAVE_SUCCESS_MARKER, config);
  }

  @Override
  protected Void executeStage(SuccessData data) throws IOException {
    if (config().markSuccess()) {
      config().store().put(config().layout().success(), data.toBytes(), false);
    }
    return null;
  }
}
