package io.zerorename.committer;

import org.apache.hadoop.fs.PathIOException;

/**
 * The job was committed without this attempt (its task commit arrived after the job's commit point); its uploads were aborted.
 */
public class TaskFencedException extends PathIOException {
  private static final long serialVersionUID = 1L;

  public TaskFencedException(String path, String reason) {
    super(path, reason);
  }
}
