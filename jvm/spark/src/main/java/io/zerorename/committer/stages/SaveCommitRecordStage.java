package io.zerorename.committer.stages;

import java.io.IOException;
import java.util.Arrays;

import org.apache.hadoop.fs.PathIOException;

import io.zerorename.committer.FencedStatistics;
import io.zerorename.committer.records.CommitRecord;
import io.zerorename.committer.store.PreconditionFailedException;

/**
 * The job's commit point: one PUT of the commit record with {@code If-None-Match: *} at a key
 * named by the job alone. On 412 the record there is either ours (an answer was lost: the
 * same bytes) or another job attempt's: then this job was committed elsewhere.
 */
public final class SaveCommitRecordStage extends AbstractStage<CommitRecord, Void> {

  public SaveCommitRecordStage(StageConfig config) {
    super(FencedStatistics.JOB_STAGE_SAVE_COMMIT_RECORD, config);
  }

  @Override
  protected Void executeStage(CommitRecord record) throws IOException {
    String key = config().layout().commitRecord();
    byte[] data = record.toBytes();
    byte[] existing;
    try {
      config().store().put(key, data, true);
      return null;
    } catch (PreconditionFailedException e) {
      existing = config().store().get(key);
    }
    if (Arrays.equals(existing, data)) {
      return null;
    }
    CommitRecord other = CommitRecord.fromBytes(existing, url(key), config().jobId(),
        config().layout().destUrl());
    throw new PathIOException(url(key), "job " + config().jobId() + " was already committed "
        + "by job attempt " + other.jobAttempt() + "; this commit publishes nothing and its "
        + "uploads are aborted");
  }
}
