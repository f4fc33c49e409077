package zerorename.bench;

import java.util.List;

import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;

import io.zerorename.spark.TaskResultsCommitProtocol;

/**
 * Spark's cloud commit protocol for the benchmark's {@link MinimalCommitter}: a task's commit
 * message carries its uploads, the driver hands the accepted tasks' uploads to the job commit
 * (and, on a failure, to the abort), with the hand-over of
 * {@code io.zerorename.spark.FencedCommitProtocol} ({@link TaskResultsCommitProtocol}), whose
 * messages carry the {@code fenced} committer's task records. Set it with the committer's
 * factory for one write:
 * {@code spark.sql.sources.commitProtocolClass=zerorename.bench.MinimalCommitProtocol},
 * {@code mapreduce.outputcommitter.factory.scheme.s3a=}{@link MinimalCommitterFactory}.
 */
public class MinimalCommitProtocol
    extends TaskResultsCommitProtocol<MinimalCommitter, MinimalUpload> {
  private static final long serialVersionUID = 1L;

  public MinimalCommitProtocol(String jobId, String dest, boolean dynamicPartitionOverwrite) {
    super(jobId, dest, dynamicPartitionOverwrite, MinimalCommitter.class,
        MinimalTaskCommitMessage.class);
  }

  public MinimalCommitProtocol(String jobId, String dest) {
    this(jobId, dest, false);
  }

  /** A task's commit message: Spark's own ({@code obj}) and the task's uploads. */
  public static final class MinimalTaskCommitMessage extends TaskResultsMessage<MinimalUpload> {
    private static final long serialVersionUID = 1L;

    public MinimalTaskCommitMessage(Object obj, List<MinimalUpload> uploads) {
      super(obj, uploads);
    }
  }

  /** Refuses any committer but the minimal one. */
  @Override
  public PathOutputCommitter setupCommitter(TaskAttemptContext context) {
    PathOutputCommitter c = super.setupCommitter(context);
    if (committer() == null) {
      throw new IllegalStateException(getClass().getName() + " runs the minimal committer "
          + "only, and the factory made a " + c.getClass().getName() + ": set "
          + "mapreduce.outputcommitter.factory.scheme.s3a="
          + MinimalCommitterFactory.class.getName());
    }
    return c;
  }

  @Override
  protected MinimalTaskCommitMessage message(Object obj, MinimalCommitter minimal) {
    return new MinimalTaskCommitMessage(obj, minimal.taskUploads());
  }

  @Override
  protected void useResults(MinimalCommitter minimal, List<MinimalUpload> uploads) {
    minimal.useUploads(uploads);
  }

  @Override
  protected void abortWithResults(MinimalCommitter minimal, List<MinimalUpload> accepted) {
    minimal.abortWithUploads(accepted);
  }
}
