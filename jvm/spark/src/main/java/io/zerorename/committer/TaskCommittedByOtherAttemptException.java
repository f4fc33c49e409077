package io.zerorename.committer;

import org.apache.hadoop.fs.PathIOException;

/**
 * Another attempt of this task committed first (its record PUT won); this attempt's uploads were aborted.
 */
public class TaskCommittedByOtherAttemptException extends PathIOException {
  private static final long serialVersionUID = 1L;

  public TaskCommittedByOtherAttemptException(String path, String reason) {
    super(path, reason);
  }
}
