package io.zerorename.spark;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;
import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage;
import org.apache.spark.internal.io.cloud.PathOutputCommitProtocol;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.zerorename.committer.FencedCommitter;
import io.zerorename.committer.records.RecordFormatException;
import io.zerorename.committer.records.TaskRecord;

/**
 * Spark's commit protocol for zerorename's {@code fenced} committer
 * ({@code spark.sql.sources.commitProtocolClass=io.zerorename.spark.FencedCommitProtocol}):
 * Spark's cloud protocol ({@link PathOutputCommitProtocol}: the committer from the scheme's
 * factory, dynamic partition overwrite through the committer's capability), with Spark's own
 * hand-over of task results used for what it is for. A task's commit returns the task record
 * its committer made (and, with task records in the store, saved or found saved by the
 * attempt that won) inside its commit message; the
 * driver's job commit hands the accepted tasks' records to the committer
 * ({@link FencedCommitter#useTaskRecords}), which then neither lists the job's task records nor
 * reads them back: one LIST and one GET per task fewer than Hadoop's protocol, where the job
 * commit receives nothing from its tasks.
 *
 * <p>Under this protocol a task commit sends no request by default
 * ({@code fs.zerorename.fenced.task-records=messages}, {@link FencedCommitter#taskRecords}):
 * the record is in the commit message only. That is sound because Spark's commit coordinator
 * lets one attempt of each task commit and the driver accepts one message per task; with the
 * coordinator off ({@code spark.hadoop.outputCommitCoordination.enabled=false}) the committer
 * stores its records as under Hadoop's protocol. The driver keeps the records of the tasks it
 * has accepted ({@link #onTaskCommit}), and {@link #abortJob} has the committer abort the
 * uploads they name: with no record stored, nothing else would attribute them to this job
 * while another job is active under the destination.
 *
 * <p>Any other committer the factory makes (S3A's magic one, which {@code auto} picks where the
 * store cannot fence; S3A's committers named for one write) runs exactly as under
 * {@link PathOutputCommitProtocol}: its messages carry nothing more.
 */
public class FencedCommitProtocol extends PathOutputCommitProtocol {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(FencedCommitProtocol.class);

  /** The committer of this JVM's job or task (set up by Spark on each side). */
  private transient PathOutputCommitter hadoopCommitter;
  /** On the driver: the records of the tasks whose commit messages Spark accepted. */
  private transient List<byte[]> accepted;

  public FencedCommitProtocol(String jobId, String dest, boolean dynamicPartitionOverwrite) {
    super(jobId, dest, dynamicPartitionOverwrite);
  }

  public FencedCommitProtocol(String jobId, String dest) {
    this(jobId, dest, false);
  }

  /**
   * A task's commit message: Spark's own (its {@code obj}, which the superclass's job commit
   * reads) and the bytes of the record that commits the task (null: the task committed
   * nothing, or its committer is not {@code fenced}).
   */
  public static final class FencedTaskCommitMessage extends TaskCommitMessage {
    private static final long serialVersionUID = 1L;
    private final byte[] record;

    public FencedTaskCommitMessage(Object obj, byte[] record) {
      super(obj);
      this.record = record == null ? null : record.clone();
    }

    /** The task record's bytes (the record format of {@link TaskRecord}), or null. */
    public byte[] record() {
      return record == null ? null : record.clone();
    }
  }

  @Override
  public PathOutputCommitter setupCommitter(TaskAttemptContext context) {
    PathOutputCommitter c = super.setupCommitter(context);
    hadoopCommitter = c;
    if (c instanceof FencedCommitter) {
      ((FencedCommitter) c).runUnderSparkProtocol(commitCoordination());
    }
    return c;
  }

  /** Whether Spark asks its commit coordinator before each task commit: its own switch, read
   *  where and as Spark's {@code SparkHadoopMapRedUtil.commitTask} reads it. */
  static boolean commitCoordination() {
    org.apache.spark.SparkEnv env = org.apache.spark.SparkEnv.get();
    return env != null
        && env.conf().getBoolean(io.zerorename.committer.FencedOptions.SPARK_COMMIT_COORDINATION, true);
  }

  /**
   * On the driver, for each task whose commit Spark accepted (Spark 4.3's
   * {@code FileFormatWriter} calls it from the job's result handler, once per task, before the
   * job commit): keep the task's record, for {@link #abortJob}.
   */
  @Override
  public void onTaskCommit(TaskCommitMessage message) {
    super.onTaskCommit(message);
    if (message instanceof FencedTaskCommitMessage) {
      byte[] bytes = ((FencedTaskCommitMessage) message).record();
      if (bytes != null) {
        synchronized (this) {
          if (accepted == null) {
            accepted = new ArrayList<>();
          }
          accepted.add(bytes);
        }
      }
    }
  }

  /** The job failed or was cancelled: the committer aborts, besides what its abort finds in
   *  the store, the uploads of the tasks Spark had accepted ({@link #onTaskCommit}). */
  @Override
  public void abortJob(JobContext context) {
    if (hadoopCommitter instanceof FencedCommitter) {
      FencedCommitter fenced = (FencedCommitter) hadoopCommitter;
      List<byte[]> kept;
      synchronized (this) {
        kept = accepted == null ? List.of() : new ArrayList<>(accepted);
      }
      List<TaskRecord> records = new ArrayList<>();
      for (byte[] bytes : kept) {
        try {
          records.add(parse(fenced, bytes));
        } catch (IllegalStateException e) {
          LOG.warn("{}: abort: {}", fenced, e.getMessage());
        }
      }
      LOG.debug("{}: abort with {} accepted task record(s)", fenced, records.size());
      fenced.abortWithTaskRecords(records);
    }
    super.abortJob(context);
  }

  @Override
  public TaskCommitMessage commitTask(TaskAttemptContext context) {
    TaskCommitMessage message = super.commitTask(context);
    if (!(hadoopCommitter instanceof FencedCommitter)) {
      return message;
    }
    TaskRecord record = ((FencedCommitter) hadoopCommitter).taskRecord();
    return new FencedTaskCommitMessage(message.obj(), record == null ? null : record.toBytes());
  }

  @Override
  public void commitJob(JobContext context,
      scala.collection.immutable.Seq<TaskCommitMessage> taskCommits) {
    if (hadoopCommitter instanceof FencedCommitter) {
      FencedCommitter fenced = (FencedCommitter) hadoopCommitter;
      List<TaskRecord> records = new ArrayList<>();
      scala.collection.Iterator<TaskCommitMessage> it = taskCommits.iterator();
      while (it.hasNext()) {
        TaskCommitMessage m = it.next();
        if (!(m instanceof FencedTaskCommitMessage)) {
          throw new IllegalStateException("a task's commit message is a "
              + m.getClass().getName() + ", not " + FencedTaskCommitMessage.class.getName()
              + ": the tasks of job " + fenced.layout().jobId() + " did not run "
              + getClass().getName());
        }
        byte[] bytes = ((FencedTaskCommitMessage) m).record();
        if (bytes != null) {
          records.add(parse(fenced, bytes));
        }
      }
      LOG.debug("{}: {} task record(s) from {} commit message(s)", fenced, records.size(),
          taskCommits.size());
      fenced.useTaskRecords(records);
    }
    super.commitJob(context, taskCommits);
  }

  private static TaskRecord parse(FencedCommitter fenced, byte[] bytes) {
    String where = "a task commit message of " + fenced.layout().destUrl();
    try {
      return TaskRecord.fromBytes(bytes, where);
    } catch (RecordFormatException e) {
      throw new IllegalStateException(where + ": " + e.getMessage(), e);
    }
  }
}
