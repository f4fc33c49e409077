package io.zerorename.committer.stages;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import io.zerorename.committer.FencedStatistics;
import io.zerorename.committer.records.PendingCommit;
import io.zerorename.committer.records.TaskRecord;

/**
 * Discard everything this job owns that its commit record (if any) does not name: uploads,
 * task records, the marker, the work area. Idempotent; published output is never touched.
 *
 * <p>The argument: records of tasks the caller knows are this job's without reading the store
 * (Spark's protocol: the commit messages the driver accepted; null or empty: none). Their
 * uploads are this job's too, even where no stored record names them and another job active
 * under the destination keeps the clearer from taking unattributed uploads
 * ({@code fs.zerorename.fenced.task-records=messages}).
 */
public final class AbortJobStage extends AbstractStage<List<TaskRecord>, Void> {

  public AbortJobStage(StageConfig config) {
    super(FencedStatistics.JOB_STAGE_ABORT, config);
  }

  @Override
  protected Void executeStage(List<TaskRecord> accepted) throws IOException {
    List<PendingCommit> known = new ArrayList<>();
    if (accepted != null) {
      for (TaskRecord r : accepted) {
        if (r.jobId().equals(config().jobId())) {
          known.addAll(r.commits());
        }
      }
    }
    new JobClearer(config()).known(known).clear(CommitRecords.read(config()), false);
    return null;
  }
}
