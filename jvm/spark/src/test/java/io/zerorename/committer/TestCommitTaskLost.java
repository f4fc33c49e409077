package io.zerorename.committer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.Test;

import io.zerorename.committer.stages.CommitTaskStage;
import io.zerorename.committer.stages.SetupJobStage;
import io.zerorename.committer.stages.StageConfig;
import io.zerorename.committer.stages.TaskOutput;

/**
 * {@link FencedCommitter#commitTask} of an attempt that finds another attempt's record: the
 * task is committed (by that attempt), so the call returns and names the winner. Found by
 * {@code zerorename check --target hadoop} on the fenced committer: an attempt that died after
 * its record landed made every retry of its task fail, and so the job (liveness).
 */
class TestCommitTaskLost {

  private static TaskAttemptContext context(Fixture f, int task, int attempt) {
    Configuration conf = new Configuration(false);
    conf.set(FencedOptions.SPARK_UUID, f.jobId);
    return new TaskAttemptContextImpl(conf,
        new TaskAttemptID("jt", 1, TaskType.MAP, task, attempt));
  }

  private static FencedCommitter committer(Fixture f, TaskAttemptContext context)
      throws Exception {
    return new FencedCommitter(new Path(Fixture.DEST), context).withStore(f.store);
  }

  @Test
  void aRetryOfATaskWhoseRecordADeadAttemptSavedReturnsAndNamesTheWinner() throws Exception {
    Fixture f = new Fixture("job-lost");
    new SetupJobStage(f.job()).apply(null);
    String first = f.write(1, 0, "part-1", "first");
    String second = f.write(1, 1, "part-1", "second");
    // attempt 0 saves its record, then its process dies before commitTask returns
    StageConfig dead = f.task(1, 0);
    new CommitTaskStage(dead).apply(TaskOutput.scan(dead, dead.attemptId()));

    TaskAttemptContext retry = context(f, 1, 1);
    FencedCommitter committer = committer(f, retry);
    assertEquals(Fixture.attemptId(1, 1), retry.getTaskAttemptID().toString());
    assertTrue(committer.needsTaskCommit(retry));
    committer.commitTask(retry);  // threw TaskCommittedByOtherAttemptException before
    assertEquals(Fixture.attemptId(1, 0), committer.taskCommittedBy());
    // what Spark's protocol carries to the job commit: the winner's record
    assertEquals(Fixture.attemptId(1, 0), committer.taskRecord().taskAttemptId());
    assertEquals(first, committer.taskRecord().commits().get(0).uploadId());
    assertTrue(f.store.uploads.containsKey(first), "the winner's upload is the task's");
    assertFalse(f.store.uploads.containsKey(second), "the retry's upload is aborted");
  }

  @Test
  void anAttemptWhoseRecordWinsNamesItself() throws Exception {
    Fixture f = new Fixture("job-won");
    new SetupJobStage(f.job()).apply(null);
    String upload = f.write(0, 0, "part-0", "zero");
    TaskAttemptContext attempt = context(f, 0, 0);
    FencedCommitter committer = committer(f, attempt);
    assertTrue(committer.needsTaskCommit(attempt));
    committer.commitTask(attempt);
    assertEquals(Fixture.attemptId(0, 0), committer.taskCommittedBy());
    assertEquals(upload, committer.taskRecord().commits().get(0).uploadId());
    assertTrue(f.store.uploads.containsKey(upload));
  }
}
