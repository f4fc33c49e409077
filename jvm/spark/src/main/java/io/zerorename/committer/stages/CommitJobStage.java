package io.zerorename.committer.stages;

import java.io.IOException;
import java.util.List;

import io.zerorename.committer.FencedStatistics;
import io.zerorename.committer.records.CommitRecord;
import io.zerorename.committer.records.SuccessData;
import io.zerorename.committer.records.TaskRecord;

/**
 * Job commit: the task records, check that no key the job completes holds another writer's
 * object ({@link CheckKeysStage}: refused here, nothing is committed), save the commit record
 * (the commit point: {@link SaveCommitRecordStage}), then publish ({@link Publisher}). A
 * failure before the commit point leaves nothing published; after it, nothing is reverted.
 *
 * <p>The argument says where the task records come from. Null: Hadoop's protocol, which hands
 * the job commit nothing, so the records are found by listing the job's task directory and
 * read one by one ({@link ListTaskRecordsStage}, {@link LoadTaskRecordsStage}). A list: Spark's
 * protocol, whose job commit receives the accepted tasks' commit messages, each carrying the
 * record its task saved ({@code io.zerorename.spark.FencedCommitProtocol}); they are validated
 * the same way and nothing is listed or read.
 */
public final class CommitJobStage extends AbstractStage<List<TaskRecord>, SuccessData> {

  public CommitJobStage(StageConfig config) {
    super(FencedStatistics.COMMITTER_COMMIT_JOB, config);
  }

  @Override
  protected SuccessData executeStage(List<TaskRecord> carried) throws IOException {
    StageConfig c = config();
    LoadTaskRecordsStage.Sources sources = carried != null
        ? LoadTaskRecordsStage.Sources.carried(carried)
        : LoadTaskRecordsStage.Sources.listed(new ListTaskRecordsStage(c).apply(null));
    LoadTaskRecordsStage.Result loaded = new LoadTaskRecordsStage(c).apply(sources);
    ExistingKeys checked = new CheckKeysStage(c).apply(loaded.uploads());
    CommitRecord record = new CommitRecord(c.jobId(), c.jobAttempt(), c.layout().destUrl(),
        c.now(), loaded.tasks(), loaded.uploads(), loaded.records());
    new SaveCommitRecordStage(c).apply(record);
    LOG.info("job {}: committed ({} tasks, {} files); publishing", c.jobId(),
        record.tasks().size(), record.uploads().size());
    return new Publisher(c).publish(record, loaded.taskStats(), checked);
  }
}
