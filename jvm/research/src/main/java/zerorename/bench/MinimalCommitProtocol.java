package zerorename.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;
import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage;
import org.apache.spark.internal.io.cloud.PathOutputCommitProtocol;

/**
 * Spark's cloud commit protocol for the benchmark's {@link MinimalCommitter}: a task's commit
 * message carries its uploads, the driver hands the accepted tasks' uploads to the job commit
 * (and, on a failure, to the abort), as {@code io.zerorename.spark.FencedCommitProtocol} does
 * with the {@code fenced} committer's task records. Set it with the committer's factory for one
 * write: {@code spark.sql.sources.commitProtocolClass=zerorename.bench.MinimalCommitProtocol},
 * {@code mapreduce.outputcommitter.factory.scheme.s3a=}{@link MinimalCommitterFactory}.
 */
public class MinimalCommitProtocol extends PathOutputCommitProtocol {
  private static final long serialVersionUID = 1L;

  /** The committer of this JVM's job or task. */
  private transient MinimalCommitter minimal;
  /** On the driver: the uploads of the tasks whose commit messages Spark accepted. */
  private transient List<MinimalUpload> accepted;

  public MinimalCommitProtocol(String jobId, String dest, boolean dynamicPartitionOverwrite) {
    super(jobId, dest, dynamicPartitionOverwrite);
  }

  public MinimalCommitProtocol(String jobId, String dest) {
    this(jobId, dest, false);
  }

  /** A task's commit message: Spark's own ({@code obj}) and the task's uploads. */
  public static final class MinimalTaskCommitMessage extends TaskCommitMessage {
    private static final long serialVersionUID = 1L;
    private final MinimalUpload[] uploads;

    public MinimalTaskCommitMessage(Object obj, List<MinimalUpload> uploads) {
      super(obj);
      this.uploads = uploads.toArray(new MinimalUpload[0]);
    }

    public List<MinimalUpload> uploads() {
      return Arrays.asList(uploads.clone());
    }
  }

  @Override
  public PathOutputCommitter setupCommitter(TaskAttemptContext context) {
    PathOutputCommitter c = super.setupCommitter(context);
    if (!(c instanceof MinimalCommitter)) {
      throw new IllegalStateException(getClass().getName() + " runs the minimal committer "
          + "only, and the factory made a " + c.getClass().getName() + ": set "
          + "mapreduce.outputcommitter.factory.scheme.s3a="
          + MinimalCommitterFactory.class.getName());
    }
    minimal = (MinimalCommitter) c;
    return c;
  }

  @Override
  public TaskCommitMessage commitTask(TaskAttemptContext context) {
    TaskCommitMessage message = super.commitTask(context);
    return new MinimalTaskCommitMessage(message.obj(), minimal.taskUploads());
  }

  @Override
  public void onTaskCommit(TaskCommitMessage message) {
    super.onTaskCommit(message);
    if (message instanceof MinimalTaskCommitMessage) {
      synchronized (this) {
        if (accepted == null) {
          accepted = new ArrayList<>();
        }
        accepted.addAll(((MinimalTaskCommitMessage) message).uploads());
      }
    }
  }

  @Override
  public void commitJob(JobContext context,
      scala.collection.immutable.Seq<TaskCommitMessage> taskCommits) {
    List<MinimalUpload> uploads = new ArrayList<>();
    scala.collection.Iterator<TaskCommitMessage> it = taskCommits.iterator();
    while (it.hasNext()) {
      TaskCommitMessage m = it.next();
      if (!(m instanceof MinimalTaskCommitMessage)) {
        throw new IllegalStateException("a task's commit message is a " + m.getClass().getName()
            + ", not " + MinimalTaskCommitMessage.class.getName());
      }
      uploads.addAll(((MinimalTaskCommitMessage) m).uploads());
    }
    minimal.useUploads(uploads);
    super.commitJob(context, taskCommits);
  }

  @Override
  public void abortJob(JobContext context) {
    if (minimal != null) {
      synchronized (this) {
        minimal.abortWithUploads(accepted == null ? List.of() : accepted);
      }
    }
    super.abortJob(context);
  }
}
