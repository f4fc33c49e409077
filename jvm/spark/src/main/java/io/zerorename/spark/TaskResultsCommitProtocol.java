package io.zerorename.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;
import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage;
import org.apache.spark.internal.io.cloud.PathOutputCommitProtocol;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spark's cloud commit protocol ({@link PathOutputCommitProtocol}) with Spark's own hand-over of
 * task results used for one committer: what that committer's task commit makes travels to the
 * driver in the task's commit message; the driver keeps the results of the tasks it accepted
 * ({@link #onTaskCommit}) and hands all the tasks' results to the committer's job commit
 * ({@link #useResults}) or, when the job fails, the accepted ones to its abort
 * ({@link #abortWithResults}). Any other committer the factory makes runs exactly as under
 * {@link PathOutputCommitProtocol}: its messages carry nothing more.
 *
 * @param <C> the committer whose task results the messages carry
 * @param <R> one task result (a task's message carries any number)
 */
public abstract class TaskResultsCommitProtocol<C extends PathOutputCommitter,
    R extends Serializable> extends PathOutputCommitProtocol {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(TaskResultsCommitProtocol.class);

  private final Class<C> committerType;
  private final Class<? extends TaskResultsMessage<R>> messageType;
  /** The committer of this JVM's job or task when it is a {@code C} (set up by Spark on each
   *  side), else null. */
  private transient C committer;
  /** On the driver: the results of the tasks whose commit messages Spark accepted. */
  private transient List<R> accepted;

  protected TaskResultsCommitProtocol(String jobId, String dest,
      boolean dynamicPartitionOverwrite, Class<C> committerType,
      Class<? extends TaskResultsMessage<R>> messageType) {
    super(jobId, dest, dynamicPartitionOverwrite);
    this.committerType = committerType;
    this.messageType = messageType;
  }

  /**
   * A task's commit message: Spark's own (its {@code obj}, which the superclass's job commit
   * reads) and the results of the task's commit (none: the task committed nothing).
   */
  public static class TaskResultsMessage<R extends Serializable> extends TaskCommitMessage {
    private static final long serialVersionUID = 1L;
    private final ArrayList<R> results;

    public TaskResultsMessage(Object obj, List<R> results) {
      super(obj);
      this.results = new ArrayList<>(results);
    }

    public List<R> results() {
      return List.copyOf(results);
    }
  }

  /** The committer of this JVM's job or task, when it is this protocol's; else null. */
  protected C committer() {
    return committer;
  }

  /** Prepares this protocol's committer, just made for a job or task (nothing by default). */
  protected void setUp(C c) {
  }

  /** The commit message of a task whose committer {@code c} has just committed it. */
  protected abstract TaskResultsMessage<R> message(Object obj, C c);

  /** Before the job commit: {@code c}'s job commit is to take these, every task's results. */
  protected abstract void useResults(C c, List<R> results);

  /** Before the job abort: {@code c}'s abort is to take these, the accepted tasks' results. */
  protected abstract void abortWithResults(C c, List<R> accepted);

  @Override
  public PathOutputCommitter setupCommitter(TaskAttemptContext context) {
    PathOutputCommitter c = super.setupCommitter(context);
    committer = committerType.isInstance(c) ? committerType.cast(c) : null;
    if (committer != null) {
      setUp(committer);
    }
    return c;
  }

  @Override
  public TaskCommitMessage commitTask(TaskAttemptContext context) {
    TaskCommitMessage message = super.commitTask(context);
    return committer == null ? message : message(message.obj(), committer);
  }

  /**
   * On the driver, for each task whose commit Spark accepted (Spark 4.3's
   * {@code FileFormatWriter} calls it from the job's result handler, once per task, before the
   * job commit): keep the task's results, for {@link #abortJob}.
   */
  @Override
  public void onTaskCommit(TaskCommitMessage message) {
    super.onTaskCommit(message);
    if (messageType.isInstance(message)) {
      List<R> results = messageType.cast(message).results();
      synchronized (this) {
        if (accepted == null) {
          accepted = new ArrayList<>();
        }
        accepted.addAll(results);
      }
    }
  }

  /** The job failed or was cancelled: the committer's abort takes the results of the tasks
   *  Spark had accepted ({@link #onTaskCommit}). */
  @Override
  public void abortJob(JobContext context) {
    if (committer != null) {
      List<R> kept;
      synchronized (this) {
        kept = accepted == null ? List.of() : new ArrayList<>(accepted);
      }
      abortWithResults(committer, kept);
    }
    super.abortJob(context);
  }

  @Override
  public void commitJob(JobContext context,
      scala.collection.immutable.Seq<TaskCommitMessage> taskCommits) {
    if (committer != null) {
      List<R> results = new ArrayList<>();
      scala.collection.Iterator<TaskCommitMessage> it = taskCommits.iterator();
      while (it.hasNext()) {
        TaskCommitMessage m = it.next();
        if (!messageType.isInstance(m)) {
          throw new IllegalStateException(committer + ": a task's commit message is a "
              + m.getClass().getName() + ", not " + messageType.getName()
              + ": the job's tasks did not run " + getClass().getName());
        }
        results.addAll(messageType.cast(m).results());
      }
      LOG.debug("{}: {} task result(s) from {} commit message(s)", committer, results.size(),
          taskCommits.size());
      useResults(committer, results);
    }
    super.commitJob(context, taskCommits);
  }
}
