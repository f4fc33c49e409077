package io.zerorename.committer;

import org.apache.hadoop.fs.PathIOException;

import io.zerorename.committer.records.TaskRecord;

/**
 * Another attempt of this task committed first (its record PUT won); this attempt's uploads were aborted.
 */
public class TaskCommittedByOtherAttemptException extends PathIOException {
  private static final long serialVersionUID = 1L;
  private final String winner;
  /** The winner's record, as read from the store (not serialized: the JVM that read it uses
   *  it). */
  private final transient TaskRecord winnerRecord;

  public TaskCommittedByOtherAttemptException(String path, String reason) {
    this(path, reason, "", null);
  }

  public TaskCommittedByOtherAttemptException(String path, String reason, String winner) {
    this(path, reason, winner, null);
  }

  public TaskCommittedByOtherAttemptException(String path, String reason, String winner,
      TaskRecord winnerRecord) {
    super(path, reason);
    this.winner = winner;
    this.winnerRecord = winnerRecord;
  }

  /** The record that commits the task: the winner's (null when not known). */
  public TaskRecord winnerRecord() {
    return winnerRecord;
  }

  /** The attempt whose record commits the task ("" when its record did not name it). */
  public String winner() {
    return winner;
  }
}
