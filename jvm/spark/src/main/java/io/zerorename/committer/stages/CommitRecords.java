package io.zerorename.committer.stages;

import java.io.FileNotFoundException;
import java.io.IOException;

import io.zerorename.committer.records.CommitRecord;

/** Reading the job commit record: the one question both sides of the protocol ask. */
final class CommitRecords {
  private CommitRecords() {
  }

  /** The job's commit record, or null when the job has not reached its commit point. */
  static CommitRecord read(StageConfig config) throws IOException {
    String key = config.layout().commitRecord();
    byte[] data;
    try {
      data = config.store().get(key);
    } catch (FileNotFoundException e) {
      return null;
    }
    return CommitRecord.fromBytes(data, config.layout().url(key), config.jobId(),
        config.layout().destUrl());
  }
}
