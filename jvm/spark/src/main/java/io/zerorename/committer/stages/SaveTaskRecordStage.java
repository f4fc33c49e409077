package io.zerorename.committer.stages;

import java.io.IOException;
import java.util.Arrays;

import io.zerorename.committer.FencedStatistics;
import io.zerorename.committer.records.TaskRecord;
import io.zerorename.committer.store.PreconditionFailedException;

/**
 * The task's commit decision: one PUT of its record with {@code If-None-Match: *} at a key
 * named by the task, so the first attempt to commit a task wins. The result is null when the
 * record is ours (possibly saved by an earlier try whose answer was lost: the same bytes), else
 * the record of the attempt that won.
 */
public final class SaveTaskRecordStage
    extends AbstractStage<SaveTaskRecordStage.Arguments, TaskRecord> {

  /** The record's key and bytes. */
  public static final class Arguments {
    final String key;
    final byte[] data;

    public Arguments(String key, byte[] data) {
      this.key = key;
      this.data = data;
    }
  }

  public SaveTaskRecordStage(StageConfig config) {
    super(FencedStatistics.TASK_STAGE_SAVE_TASK_RECORD, config);
  }

  @Override
  protected TaskRecord executeStage(Arguments args) throws IOException {
    byte[] existing;
    try {
      config().store().put(args.key, args.data, true);
      return null;
    } catch (PreconditionFailedException e) {
      existing = config().store().get(args.key);
    }
    if (Arrays.equals(existing, args.data)) {
      return null;
    }
    return TaskRecord.fromBytes(existing, url(args.key));
  }
}
