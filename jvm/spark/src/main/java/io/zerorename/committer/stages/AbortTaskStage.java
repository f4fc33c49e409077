package io.zerorename.committer.stages;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.zerorename.committer.FencedStatistics;
import io.zerorename.committer.records.CommitRecord;
import io.zerorename.committer.records.PendingCommit;
import io.zerorename.committer.records.TaskRecord;

/**
 * Discard a task attempt's output: the uploads its work directory names (or S3A's in-memory
 * tracker holds, in the attempt's JVM) and those of its task record (which a commit whose
 * answer was lost may have saved), unless the job has committed this attempt. The record is
 * deleted first, so a job commit never finds aborted uploads. With the task records in Spark's
 * commit messages ({@link StageConfig#taskRecordsInMessages}) no task commit saves a record,
 * so none is read: the abort costs no GET. Safe from any process and more than once. Returns
 * how many uploads it aborted.
 */
public final class AbortTaskStage extends AbstractStage<Void, Integer> {

  public AbortTaskStage(StageConfig config) {
    super(FencedStatistics.TASK_STAGE_ABORT_TASK, config);
  }

  @Override
  protected Integer executeStage(Void args) throws IOException {
    StageConfig c = config();
    List<PendingCommit> commits = new ArrayList<>();
    for (TaskOutput.File f : TaskOutput.scan(c, c.attemptId())) {
      commits.add(f.commit());
    }
    String key = c.layout().taskRecord(c.taskName());
    TaskRecord record = null;
    if (!c.taskRecordsInMessages()) {
      try {
        record = TaskRecord.fromBytes(c.store().get(key), url(key));
      } catch (FileNotFoundException e) {
        record = null;
      }
    }
    if (record != null && record.taskAttemptId().equals(c.attemptId())) {
      CommitRecord commit = CommitRecords.read(c);
      if (commit != null && commit.attempts().contains(c.attemptId())) {
        LOG.info("task attempt {} was committed by job {}: nothing to abort", c.attemptId(),
            c.jobId());
        return 0;
      }
      Set<String> known = new HashSet<>();
      for (PendingCommit p : commits) {
        known.add(p.uploadId());
      }
      for (PendingCommit p : record.commits()) {
        if (known.add(p.uploadId())) {
          commits.add(p);
        }
      }
      c.store().delete(List.of(key));
    }
    java.util.Map<String, String> owned = new java.util.TreeMap<>();
    for (PendingCommit p : commits) {
      owned.put(p.uploadId(), c.layout().key(p.url()));
    }
    int aborted = Uploads.abort(c, owned);
    List<String> work = TaskOutput.workKeys(c, c.attemptId());
    if (!work.isEmpty()) {
      c.store().delete(work);
    }
    return aborted;
  }
}
