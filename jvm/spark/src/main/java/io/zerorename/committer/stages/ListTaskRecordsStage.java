package io.zerorename.committer.stages;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import io.zerorename.committer.FencedLayout;
import io.zerorename.committer.FencedStatistics;
import io.zerorename.committer.store.ObjectEntry;

/** The task records of this job attempt (Hadoop's protocol: found by listing). */
public final class ListTaskRecordsStage extends AbstractStage<Void, List<String>> {

  public ListTaskRecordsStage(StageConfig config) {
    super(FencedStatistics.JOB_STAGE_LIST_TASK_RECORDS, config);
  }

  @Override
  protected List<String> executeStage(Void args) throws IOException {
    List<String> keys = new ArrayList<>();
    for (ObjectEntry o : config().store().list(config().layout().tasksDir())) {
      if (o.key().endsWith(FencedLayout.PENDINGSET)) {
        keys.add(o.key());
      }
    }
    return keys;
  }
}
