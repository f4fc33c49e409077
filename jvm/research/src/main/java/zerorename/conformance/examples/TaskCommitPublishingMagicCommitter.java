package zerorename.conformance.examples;

import java.io.IOException;
import java.util.List;

import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.s3a.commit.CommitConstants;
import org.apache.hadoop.fs.s3a.commit.impl.CommitContext;
import org.apache.hadoop.fs.s3a.commit.files.PendingSet;
import org.apache.hadoop.fs.s3a.commit.magic.MagicS3GuardCommitter;
import org.apache.hadoop.mapreduce.TaskAttemptContext;

/**
 * A deliberately broken S3A committer, for the checks of {@code zerorename check --target
 * hadoop --store s3 --committer hadoop:<class>} to catch: S3A's magic committer, except that a
 * task's commit also completes the task's multipart uploads (publishing its files into the
 * destination) and empties the task's {@code .pendingset}, so the job commit has nothing left
 * to do.  A job that fails after a task committed leaves that task's files behind, and a job
 * commit is no longer the moment the output appears.  Never use it for anything else.
 */
public class TaskCommitPublishingMagicCommitter extends MagicS3GuardCommitter {
  public TaskCommitPublishingMagicCommitter(Path outputPath, TaskAttemptContext context)
      throws IOException {
    super(outputPath, context);
  }

  @Override
  public void commitTask(TaskAttemptContext context) throws IOException {
    super.commitTask(context);
    // where MagicS3GuardCommitter's commitTask saved the task's pendingset
    Path pendingset = new Path(getJobAttemptPath(context),
        context.getTaskAttemptID().getTaskID() + CommitConstants.PENDINGSET_SUFFIX);
    FileSystem fs = getDestFS();
    FileStatus status = fs.getFileStatus(pendingset);
    try (CommitContext commitContext = initiateJobOperation(context)) {
      commitPendingUploads(commitContext, new ActiveCommit(fs, List.of(status)));
      // what is left for the job commit: nothing
      PendingSet nothing = new PendingSet();
      nothing.setJobId(getUUID());
      nothing.save(fs, pendingset, commitContext.getPendingSetSerializer());
    }
  }
}
