package io.zerorename.committer;

import org.apache.hadoop.fs.PathIOException;

/**
 * {@code fs.zerorename.fenced.task-records} has a value this job cannot run with: not one of
 * {@code messages} and {@code store}, or {@code messages} under Hadoop's commit protocol (whose
 * job commit finds the tasks only by the records they stored). Raised by job setup, before any
 * output is written; set the option to {@code store}, or write through
 * {@code io.zerorename.spark.FencedCommitProtocol}.
 */
public class TaskRecordsOptionException extends PathIOException {
  private static final long serialVersionUID = 1L;

  public TaskRecordsOptionException(String path, String reason) {
    super(path, reason);
  }
}
