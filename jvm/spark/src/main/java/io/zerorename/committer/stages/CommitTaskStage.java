package io.zerorename.committer.stages;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import io.zerorename.committer.FencedOptions;
import io.zerorename.committer.FencedStatistics;
import io.zerorename.committer.TaskCommittedByOtherAttemptException;
import io.zerorename.committer.TaskFencedException;
import io.zerorename.committer.records.CommitRecord;
import io.zerorename.committer.records.PendingCommit;
import io.zerorename.committer.records.TaskRecord;

/**
 * Task commit: the attempt's files (its uploads) into one task record, saved with one
 * conditional PUT ({@link SaveTaskRecordStage}); then the commit record is read, so that a
 * task commit landing after the job's commit point is fenced out (its uploads aborted, its
 * record deleted).
 *
 * <p>With {@link StageConfig#taskRecordsInMessages} (Spark's protocol, its commit coordinator
 * on) the record is only returned, for the task's commit message: no PUT, and no read of the
 * commit record unless this stage itself made uploads ({@link TaskOutput#uploadsAtTaskCommit}:
 * {@code file://}). Spark's coordinator lets one attempt of a task commit, and the job commit
 * completes only the uploads of the messages the driver accepted; an attempt whose uploads
 * were all sent before it asked the coordinator leaves none that the job's cleanup misses.
 * Last, the attempt's work objects (S3A's {@code .pending} records and
 * markers, none when S3A kept them in memory) are deleted: the record holds everything they
 * said.
 */
public final class CommitTaskStage extends AbstractStage<List<TaskOutput.File>, TaskRecord> {

  public CommitTaskStage(StageConfig config) {
    super(FencedStatistics.TASK_STAGE_COMMIT, config);
  }

  @Override
  protected TaskRecord executeStage(List<TaskOutput.File> files) throws IOException {
    StageConfig c = config();
    List<PendingCommit> commits = new ArrayList<>();
    List<String> work = new ArrayList<>();
    for (TaskOutput.File f : files) {
      commits.add(f.commit());
      work.addAll(f.workKeys());
    }
    String key = c.layout().taskRecord(c.taskName());
    c.stats().incr(FencedStatistics.COMMITTER_TASKS_SUCCEEDED);
    TaskRecord record = TaskRecord.of(FencedOptions.NAME, c.jobId(), c.taskName(),
        c.attemptId(), c.taskAttempt(), commits, c.stats().snapshot(), c.now());
    boolean stored = !c.taskRecordsInMessages();
    TaskRecord winner = !stored ? null : new SaveTaskRecordStage(c).apply(
        new SaveTaskRecordStage.Arguments(key, record.toBytes()));
    if (winner != null) {
      Uploads.abortAll(c, commits);
      deleteQuietly(work);
      String who = winner.taskAttemptId().isEmpty() ? "(an attempt that did not name itself)"
          : winner.taskAttemptId();
      throw new TaskCommittedByOtherAttemptException(url(key), "task " + c.taskName()
          + " was committed by attempt " + who + "; attempt " + c.attemptId() + " aborted its "
          + commits.size() + " upload(s)", winner.taskAttemptId(), winner);
    }
    boolean fenceCheck = stored || TaskOutput.uploadsAtTaskCommit(c);
    CommitRecord commit = fenceCheck ? CommitRecords.read(c) : null;
    if (commit != null && !commit.attempts().contains(c.attemptId())) {
      Uploads.abortAll(c, commits);
      if (stored) {
        c.store().delete(List.of(key));
      }
      deleteQuietly(work);
      throw new TaskFencedException(url(key), "job " + c.jobId() + " was committed (by job "
          + "attempt " + commit.jobAttempt() + ") without attempt " + c.attemptId() + "; its "
          + commits.size() + " upload(s) were aborted");
    }
    c.stats().sample(FencedStatistics.COMMITTER_TASK_FILE_COUNT, commits.size());
    deleteQuietly(work);
    return record;
  }

  private void deleteQuietly(List<String> keys) {
    if (keys.isEmpty()) {
      return;
    }
    try {
      config().store().delete(keys);
    } catch (IOException e) {
      LOG.warn("task attempt {}: could not delete its {} work object(s) (job cleanup removes "
          + "them): {}", config().attemptId(), keys.size(), e.toString());
    }
  }
}
