package zerorename.conformance.examples;

import java.io.IOException;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.TaskAttemptContext;

import io.zerorename.committer.FencedCommitter;
import io.zerorename.committer.records.PendingCommit;
import io.zerorename.committer.records.StoreUrl;
import io.zerorename.committer.records.TaskRecord;

/**
 * A deliberately broken fenced committer, for {@code zerorename check --target hadoop
 * --committer hadoop:<class>} to catch: once its task record is saved, its task commit also
 * completes the task's uploads ("saving the job commit some work"), so a task's files are
 * visible before the job commits and stay when the job fails. Everything else is the
 * production committer. Never use it for anything else.
 */
public class TaskCommitPublishingFencedCommitter extends FencedCommitter {
  public TaskCommitPublishingFencedCommitter(Path outputPath, TaskAttemptContext context)
      throws IOException {
    super(outputPath, context);
  }

  @Override
  public void commitTask(TaskAttemptContext context) throws IOException {
    super.commitTask(context);
    String attempt = context.getTaskAttemptID().toString();
    if (!attempt.equals(taskCommittedBy())) {
      return;  // another attempt's record commits the task
    }
    String key = layout().taskRecord(context.getTaskAttemptID().getTaskID().toString());
    TaskRecord record = TaskRecord.fromBytes(store().get(key), key);
    for (PendingCommit commit : record.commits()) {
      store().complete(StoreUrl.parse(commit.url()).key(), commit.uploadId(), commit.etags(),
          false);
    }
  }
}
