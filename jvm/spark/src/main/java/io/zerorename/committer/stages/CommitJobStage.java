package io.zerorename.committer.stages;

import java.io.IOException;
import java.util.List;

import io.zerorename.committer.FencedStatistics;
import io.zerorename.committer.records.CommitRecord;
import io.zerorename.committer.records.SuccessData;

/**
 * Job commit: list and load the task records, save the commit record (the commit point:
 * {@link SaveCommitRecordStage}), then publish ({@link Publisher}). A failure before the
 * commit point leaves nothing published; after it, nothing is reverted.
 */
public final class CommitJobStage extends AbstractStage<Void, SuccessData> {

  public CommitJobStage(StageConfig config) {
    super(FencedStatistics.COMMITTER_COMMIT_JOB, config);
  }

  @Override
  protected SuccessData executeStage(Void args) throws IOException {
    StageConfig c = config();
    List<String> keys = new ListTaskRecordsStage(c).apply(null);
    LoadTaskRecordsStage.Result loaded = new LoadTaskRecordsStage(c).apply(keys);
    CommitRecord record = new CommitRecord(c.jobId(), c.jobAttempt(), c.layout().destUrl(),
        c.now(), loaded.tasks(), loaded.uploads(), loaded.records());
    new SaveCommitRecordStage(c).apply(record);
    LOG.info("job {}: committed ({} tasks, {} files); publishing", c.jobId(),
        record.tasks().size(), record.uploads().size());
    return new Publisher(c).publish(record, loaded.taskStats());
  }
}
