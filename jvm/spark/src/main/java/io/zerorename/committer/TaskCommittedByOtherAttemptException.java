package io.zerorename.committer;

import org.apache.hadoop.fs.PathIOException;

/**
 * Another attempt of this task committed first (its record PUT won); this attempt's uploads were aborted.
 */
public class TaskCommittedByOtherAttemptException extends PathIOException {
  private static final long serialVersionUID = 1L;
  private final String winner;

  public TaskCommittedByOtherAttemptException(String path, String reason) {
    this(path, reason, "");
  }

  public TaskCommittedByOtherAttemptException(String path, String reason, String winner) {
    super(path, reason);
    this.winner = winner;
  }

  /** The attempt whose record commits the task ("" when its record did not name it). */
  public String winner() {
    return winner;
  }
}
