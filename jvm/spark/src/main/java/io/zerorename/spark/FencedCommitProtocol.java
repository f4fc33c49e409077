package io.zerorename.spark;

import java.util.ArrayList;
import java.util.List;

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
 * commit receives nothing from its tasks. The hand-over is {@link TaskResultsCommitProtocol}'s,
 * a task's result here being its record's bytes.
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
public class FencedCommitProtocol extends TaskResultsCommitProtocol<FencedCommitter, byte[]> {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(FencedCommitProtocol.class);

  public FencedCommitProtocol(String jobId, String dest, boolean dynamicPartitionOverwrite) {
    super(jobId, dest, dynamicPartitionOverwrite, FencedCommitter.class,
        FencedTaskCommitMessage.class);
  }

  public FencedCommitProtocol(String jobId, String dest) {
    this(jobId, dest, false);
  }

  /**
   * A task's commit message: Spark's own (its {@code obj}, which the superclass's job commit
   * reads) and the bytes of the record that commits the task (none: the task committed
   * nothing).
   */
  public static final class FencedTaskCommitMessage extends TaskResultsMessage<byte[]> {
    private static final long serialVersionUID = 1L;

    public FencedTaskCommitMessage(Object obj, byte[] record) {
      super(obj, record == null ? List.of() : List.of(record.clone()));
    }

    /** The task record's bytes (the record format of {@link TaskRecord}), or null. */
    public byte[] record() {
      List<byte[]> records = results();
      return records.isEmpty() ? null : records.get(0).clone();
    }
  }

  @Override
  protected void setUp(FencedCommitter fenced) {
    fenced.runUnderSparkProtocol(commitCoordination());
  }

  /** Whether Spark asks its commit coordinator before each task commit: its own switch, read
   *  where and as Spark's {@code SparkHadoopMapRedUtil.commitTask} reads it. */
  static boolean commitCoordination() {
    org.apache.spark.SparkEnv env = org.apache.spark.SparkEnv.get();
    return env != null
        && env.conf().getBoolean(io.zerorename.committer.FencedOptions.SPARK_COMMIT_COORDINATION, true);
  }

  /** The record that commits the task, made (and, with task records in the store, saved or
   *  found saved by the attempt that won) by its committer's task commit. */
  @Override
  protected FencedTaskCommitMessage message(Object obj, FencedCommitter fenced) {
    TaskRecord record = fenced.taskRecord();
    return new FencedTaskCommitMessage(obj, record == null ? null : record.toBytes());
  }

  /** The committer aborts, besides what its abort finds in the store, the uploads the accepted
   *  tasks' records name (a record it cannot read is logged and passed over). */
  @Override
  protected void abortWithResults(FencedCommitter fenced, List<byte[]> accepted) {
    List<TaskRecord> records = new ArrayList<>();
    for (byte[] bytes : accepted) {
      try {
        records.add(parse(fenced, bytes));
      } catch (IllegalStateException e) {
        LOG.warn("{}: abort: {}", fenced, e.getMessage());
      }
    }
    LOG.debug("{}: abort with {} accepted task record(s)", fenced, records.size());
    fenced.abortWithTaskRecords(records);
  }

  @Override
  protected void useResults(FencedCommitter fenced, List<byte[]> results) {
    List<TaskRecord> records = new ArrayList<>();
    for (byte[] bytes : results) {
      records.add(parse(fenced, bytes));
    }
    fenced.useTaskRecords(records);
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
